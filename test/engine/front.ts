// Something in front of the sandbox, as a gateway or proxy is in front of the service: every
// request is forwarded as it came unless the test's hook answers in its place, before or after
// forwarding it (issue 39: a gateway's refusal in the service's own shape after the payout was
// made; another payment of the business draining a wallet between two rows).
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface FrontRequest {
  method: string;
  /** The path and query, as sent. */
  path: string;
  headers: Record<string, string>;
  body: string;
}

export interface FrontAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** Decides one request's answer; `forward()` sends it on to the sandbox and gives the sandbox's answer. */
export type FrontHook = (req: FrontRequest, forward: () => Promise<FrontAnswer>) => Promise<FrontAnswer>;

export interface Front {
  url: string;
  close(): Promise<void>;
}

export async function startFront(target: string, hook: FrontHook): Promise<Front> {
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(req.headers)) if (typeof v === 'string' && k !== 'host' && k !== 'connection') headers[k] = v;
      const r: FrontRequest = { method: req.method ?? 'GET', path: req.url ?? '/', headers, body: Buffer.concat(chunks).toString('utf8') };
      const forward = async (): Promise<FrontAnswer> => {
        const a = await fetch(target + r.path, { method: r.method, headers: r.headers, body: r.body === '' ? undefined : r.body });
        const out: Record<string, string> = {};
        a.headers.forEach((v, k) => {
          if (k !== 'content-length' && k !== 'transfer-encoding' && k !== 'connection' && k !== 'keep-alive') out[k] = v;
        });
        return { status: a.status, headers: out, body: await a.text() };
      };
      hook(r, forward).then(
        (a) => res.writeHead(a.status, a.headers).end(a.body),
        (e: unknown) => res.writeHead(599).end(String(e)),
      );
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

/** The JSON body of a refusal, as the service writes one (spec §7) or as a gateway imitates it. */
export const refusal = (status: number, message: string, error: string): FrontAnswer => ({
  status,
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify({ statusCode: status, message, error }),
});
