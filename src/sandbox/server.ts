// The HTTP front of the sandbox, one pipeline per request: arrival (fault draw, key, limits, in arrival
// order) -> body -> 401/403/429 -> latency -> faults -> handler -> faults after create -> answer, log.
import { randomUUID } from 'node:crypto';
import { STATUS_CODES, type IncomingMessage, type ServerResponse } from 'node:http';
import { MAX_DOCUMENT_BYTES } from '../spec/codes.ts';
import { API_KEY_HEADER, CORRELATION_ID_HEADER, IDEMPOTENCY_KEY_HEADER, REQUEST_ID_HEADER } from '../spec/endpoints.ts';
import type { RequestLogEntry } from './contract.ts';
import type { Route, Sandbox } from './context.ts';
import { apiError, ApiError, fieldError, forbidden, header, type Reply, type Request, unauthorized } from './http.ts';
import { tooManyRequests } from './rate-limits.ts';
import { gatewayReply } from './faults.ts';
import { matchRoute } from './routes/routes.ts';
import { variantReply } from './shapes.ts';
import type { Business } from './store.ts';
import { sleep } from '../sleep.ts';

/** Reading: an API body over 1 MB is 413 PAYLOAD_TOO_LARGE. */
const API_BODY_LIMIT = 1024 * 1024;
const NO_BUSINESS: Business = { id: '', name: '' };

const serverError = (status: number): ApiError => apiError(status, STATUS_CODES[status]!, `${STATUS_CODES[status]} (injected fault)`);

/** Past `limit` it counts bytes but stops keeping them. */
function readBody(req: IncomingMessage, limit: number): Promise<{ buf: Buffer; size: number; aborted: boolean }> {
  return new Promise((resolve) => {
    let chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size <= limit) chunks.push(c);
      else chunks = [];
    });
    req.on('end', () => resolve({ buf: Buffer.concat(chunks), size, aborted: false }));
    for (const event of ['error', 'aborted']) req.on(event, () => resolve({ buf: Buffer.alloc(0), size, aborted: true }));
  });
}

/** Before any await, so the limits count in arrival order: a spec route's business, or 401, 403, 429. */
function admit(sb: Sandbox, route: Route, apiKey: string, at: number): Business | Reply {
  if (route.kind !== 'spec') return NO_BUSINESS;
  const business = apiKey ? sb.store.businessByKey.get(apiKey) : undefined;
  if (!business) return unauthorized();
  if (sb.propagatingKeys.has(apiKey) && at < sb.propagatedAt) return forbidden();
  return sb.limits.admit(apiKey, at) ?? business;
}

export function requestHandler(sb: Sandbox): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    const at = sb.clock.now();
    const method = req.method ?? 'GET';
    const url = new URL(req.url ?? '/', 'http://sandbox.invalid');
    const match = matchRoute(method, url.pathname);
    const route = match?.route;
    const apiKey = header(req.headers, API_KEY_HEADER) ?? '';
    const requestId = header(req.headers, REQUEST_ID_HEADER) ?? header(req.headers, CORRELATION_ID_HEADER) ?? randomUUID();
    const entry: RequestLogEntry = { at, apiKey, method, path: url.pathname, route: route?.name ?? 'unknown', status: -1 };
    const idempotencyKey = header(req.headers, IDEMPOTENCY_KEY_HEADER);
    if (idempotencyKey) entry.idempotencyKey = idempotencyKey;
    sb.log.push(entry);
    if (sb.log.length > 100_000) sb.log.splice(0, sb.log.length - 100_000);

    const fault = sb.faults.decide(entry.route, route?.kind === 'spec');
    const admitted = route ? admit(sb, route, apiKey, at) : apiError(404, 'Not Found', `Cannot ${method} ${url.pathname}`);

    const finish = (reply: Reply | 'drop') => {
      if (reply === 'drop') {
        entry.status = 0;
        req.socket.destroy();
      } else {
        entry.status = reply.status;
        write(res, reply, requestId, req.headers, sb.clock.now());
      }
      sb.onRequest?.({ ...entry });
    };

    void (async () => {
      const body = await readBody(req, route?.kind === 'storage' ? MAX_DOCUMENT_BYTES : API_BODY_LIMIT);
      if (body.aborted) {
        entry.status = 0;
        return;
      }
      if ('status' in admitted) return finish(admitted);
      if (fault.latencyMs) await sleep(fault.latencyMs, undefined, { unref: true });
      if (fault.spurious429) return finish(tooManyRequests('rate', 1000));
      if (fault.errorBeforeEffect !== null) return finish(serverError(fault.errorBeforeEffect));

      let parsed: unknown;
      if (route!.kind !== 'storage' && body.size > 0) {
        if (body.size > API_BODY_LIMIT) return finish(apiError(413, 'PAYLOAD_TOO_LARGE', 'The request body is over 1 MB'));
        // Spec §4: bodies are JSON, sent as Content-Type application/json (a framework parses no other).
        if (route!.kind === 'spec' && !/^application\/json\s*(;|$)/i.test(header(req.headers, 'content-type') ?? ''))
          return finish(fieldError('(body)', 'not sent as Content-Type: application/json'));
        try {
          parsed = JSON.parse(body.buf.toString('utf8'));
        } catch {
          return finish(fieldError('(body)', 'not valid JSON'));
        }
      }
      const request: Request = {
        path: url.pathname,
        params: match!.params,
        query: url.searchParams,
        headers: req.headers,
        body: parsed,
        rawBody: body.buf,
        bodySize: body.size,
        business: admitted,
      };
      let reply: Reply;
      try {
        reply = await route!.handler(sb, request);
      } catch (err) {
        // Anything but a refusal is a bug of the sandbox, never a reading of the spec: say so plainly.
        reply = err instanceof ApiError ? err : apiError(500, 'Internal Server Error', `sandbox error: ${(err as Error).message}`);
      }
      if (route!.kind === 'spec' && sb.shapes === 'variant') reply = variantReply(route!.name, reply, { sb, req: request });
      if (reply.created && fault.afterCreate.kind === 'drop') return finish('drop');
      if (reply.created && fault.afterCreate.kind === 'error') return finish(serverError(fault.afterCreate.status));
      if (fault.afterCreate.kind === 'gateway' && reply.status >= 200 && reply.status < 300)
        return finish(gatewayReply(fault.afterCreate.status, fault.afterCreate.body));
      finish(reply);
    })();
  };
}

/** `now`: the sandbox's clock, which dates the answer as it dates its records (createdAt). */
function write(res: ServerResponse, reply: Reply, requestId: string, reqHeaders: IncomingMessage['headers'], now: number): void {
  if (res.destroyed || res.writableEnded) return;
  // Spec §5.5: a sent x-request-id (or x-correlation-id) comes back, each as sent.
  const headers: Record<string, string> = { date: new Date(now).toUTCString(), [REQUEST_ID_HEADER]: requestId, ...reply.headers };
  const correlationId = header(reqHeaders, CORRELATION_ID_HEADER);
  if (correlationId) headers[CORRELATION_ID_HEADER] = correlationId;
  let payload: Buffer | string | undefined;
  if (Buffer.isBuffer(reply.body)) payload = reply.body;
  else if (reply.body !== undefined) {
    payload = JSON.stringify(reply.body);
    headers['content-type'] ??= 'application/json; charset=utf-8';
  }
  try {
    res.writeHead(reply.status, headers);
    res.end(payload);
  } catch {
    // The client went away.
  }
}
