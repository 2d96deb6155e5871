// The signals of src/signals/signals.ts in this process, against a receiver on 127.0.0.1: what
// reaches it, and what the log says of a URL that carries a secret.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/log.ts';
import { signalsFor } from '../../src/signals/signals.ts';

let server: Server | undefined;
afterEach(async () => {
  await new Promise((r) => (server ? server.close(r) : r(undefined)));
  server = undefined;
});

async function receiver(): Promise<{ port: number; hits: { path: string; authorization?: string }[] }> {
  const hits: { path: string; authorization?: string }[] = [];
  server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      hits.push({ path: req.url ?? '', authorization: req.headers.authorization });
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
  return { port: (server.address() as AddressInfo).port, hits };
}

describe('signals', () => {
  it('a ping URL with user:password@ pings with them as Basic credentials, and the log never shows them', async () => {
    const rx = await receiver();
    const lines: string[] = [];
    const logger = createLogger({ destination: { write: (l: string) => void lines.push(l) } });
    const signals = signalsFor({ pingUrl: `http://hc:s3cr3t-t0ken@127.0.0.1:${rx.port}/ping/uuid-1` }, 'run', logger);
    await signals.start();
    await signals.end({ exitCode: 0, failed: false });
    expect(lines.join('')).not.toContain('s3cr3t-t0ken');
    const basic = `Basic ${Buffer.from('hc:s3cr3t-t0ken').toString('base64')}`;
    expect(rx.hits).toEqual([
      { path: '/ping/uuid-1/start', authorization: basic },
      { path: '/ping/uuid-1', authorization: basic },
    ]);
  });
});
