// The HTTP front of the sandbox: Node's own http module, one pipeline for every request.
//
//   arrival (time, fault draw, key, limits: all decided synchronously, in arrival order)
//   -> body read -> 401 / 403 / 429 -> latency -> spurious 429 -> 5xx before effect
//   -> handler -> 5xx or dropped connection after create -> answer, request log.
import { randomUUID } from 'node:crypto';
import { STATUS_CODES, type IncomingMessage, type ServerResponse } from 'node:http';
import { MAX_DOCUMENT_BYTES } from '../spec/codes.ts';
import { API_KEY_HEADER, CORRELATION_ID_HEADER, REQUEST_ID_HEADER } from '../spec/endpoints.ts';
import type { RequestLogEntry } from './contract.ts';
import type { Route, Sandbox } from './context.ts';
import { header, type Request } from './request.ts';
import { ApiError, apiError, forbidden, unauthorized, type Reply } from './error-answers.ts';
import type { LimitVerdict } from './rate-limits.ts';
import { gatewayReply } from './faults.ts';
import { matchRoute } from './routes/routes.ts';
import { variantReply } from './shapes.ts';
import type { Business } from './store.ts';
import { sleep } from '../sleep.ts';

/** Bodies of the API routes are small JSON; reading: above 1 MB is 413 PAYLOAD_TOO_LARGE. */
const API_BODY_LIMIT = 1024 * 1024;
const NO_BUSINESS: Business = { id: '', name: '' };

/**
 * Spec §8: 429 "retry with backoff"; body and code not shown. Reading: the common error body
 * with error RATE_LIMIT_EXCEEDED or MONTHLY_QUOTA_EXCEEDED, and Retry-After in seconds.
 */
function tooManyRequests(v: NonNullable<LimitVerdict>): ApiError {
  const e =
    v.limit === 'quota'
      ? apiError(429, 'MONTHLY_QUOTA_EXCEEDED', 'Monthly request quota exceeded for this API key')
      : apiError(429, 'RATE_LIMIT_EXCEEDED', 'Too many requests for this API key; retry with backoff');
  return new ApiError(429, e.body, { 'retry-after': String(v.retryAfterSeconds) });
}

/** An injected 500, 502 or 503, with the reason phrase as its code. */
const serverError = (status: number): ApiError => apiError(status, STATUS_CODES[status]!, `${STATUS_CODES[status]} (injected fault)`);

/** Reads the whole body; past `limit` it keeps counting bytes but stops keeping them. */
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
    req.on('error', () => resolve({ buf: Buffer.alloc(0), size, aborted: true }));
    req.on('aborted', () => resolve({ buf: Buffer.alloc(0), size, aborted: true }));
  });
}

export interface ServerDeps {
  sb: Sandbox;
  propagatingKeys: ReadonlySet<string>;
  log: RequestLogEntry[];
  onRequest?: (entry: RequestLogEntry) => void;
}

/**
 * On arrival, before any await (so the limits count in arrival order): the business of a spec
 * route's key, or its refusal 401, 403 or 429. Storage and control routes ask for no key.
 */
function admit({ sb, propagatingKeys }: ServerDeps, route: Route, apiKey: string, at: number): Business | Reply {
  if (route.kind !== 'spec') return NO_BUSINESS;
  const business = apiKey ? sb.store.businessByKey.get(apiKey) : undefined;
  if (!business) return unauthorized();
  if (propagatingKeys.has(apiKey)) return forbidden();
  const verdict = sb.limits.check(apiKey, at);
  if (verdict) return tooManyRequests(verdict);
  sb.limits.record(apiKey, at);
  return business;
}

export function requestHandler(deps: ServerDeps): (req: IncomingMessage, res: ServerResponse) => void {
  const { sb, log } = deps;

  return (req, res) => {
    const at = sb.clock.now();
    const method = req.method ?? 'GET';
    const url = new URL(req.url ?? '/', 'http://sandbox.invalid');
    const match = matchRoute(method, url.pathname);
    const route = match?.route;
    const apiKey = header(req.headers, API_KEY_HEADER) ?? '';
    const requestId = header(req.headers, REQUEST_ID_HEADER) ?? header(req.headers, CORRELATION_ID_HEADER) ?? randomUUID();
    const entry: RequestLogEntry = { at, apiKey, method, path: url.pathname, route: route?.name ?? 'unknown', status: -1 };
    log.push(entry);
    if (log.length > 100_000) log.splice(0, log.length - 100_000);

    // Everything that depends on arrival order is decided now, before any await.
    const fault = sb.faults.decide(entry.route, route?.kind === 'spec');
    // Like NestJS for an unmatched route; no key is asked for.
    const admitted = route ? admit(deps, route, apiKey, at) : apiError(404, 'Not Found', `Cannot ${method} ${url.pathname}`);

    const finish = (reply: Reply | 'drop') => {
      if (reply === 'drop') {
        entry.status = 0;
        req.socket.destroy();
      } else {
        entry.status = reply.status;
        write(res, reply, requestId, req.headers);
      }
      deps.onRequest?.({ ...entry });
    };

    void (async () => {
      const body = await readBody(req, route?.kind === 'storage' ? MAX_DOCUMENT_BYTES : API_BODY_LIMIT);
      if (body.aborted) {
        entry.status = 0;
        return;
      }
      if ('status' in admitted) return finish(admitted);
      if (fault.latencyMs) await sleep(fault.latencyMs, undefined, { unref: true });
      if (fault.spurious429) return finish(tooManyRequests({ limit: 'rate', retryAfterSeconds: 1 }));
      if (fault.errorBeforeEffect !== null) return finish(serverError(fault.errorBeforeEffect));

      let parsed: unknown;
      if (route!.kind !== 'storage' && body.size > 0) {
        if (body.size > API_BODY_LIMIT) return finish(apiError(413, 'PAYLOAD_TOO_LARGE', 'The request body is over 1 MB'));
        try {
          parsed = JSON.parse(body.buf.toString('utf8'));
        } catch {
          return finish(
            apiError(400, 'VALIDATION_ERROR', 'The request body is not valid JSON', [{ field: '(body)', message: 'not valid JSON' }]),
          );
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
      // A spec route's answer in the sandbox's reading (shapes.ts); storage and control routes answer as they are.
      if (route!.kind === 'spec' && sb.shapes === 'variant') reply = variantReply(route!.name, reply, { sb, req: request });
      if (reply.created && fault.afterCreate.kind === 'drop') return finish('drop');
      if (reply.created && fault.afterCreate.kind === 'error') return finish(serverError(fault.afterCreate.status));
      // A gateway answers in the service's place after it acted (a new payout, or its replay).
      if (fault.afterCreate.kind === 'gateway' && reply.status >= 200 && reply.status < 300)
        return finish(gatewayReply(fault.afterCreate.status, fault.afterCreate.body));
      finish(reply);
    })();
  };
}

function write(res: ServerResponse, reply: Reply, requestId: string, reqHeaders: IncomingMessage['headers']): void {
  if (res.destroyed || res.writableEnded) return;
  // Spec §5.5: a sent x-request-id (or x-correlation-id) comes back; otherwise the sandbox makes one.
  const headers: Record<string, string> = { [REQUEST_ID_HEADER]: requestId, ...reply.headers };
  if (reqHeaders[CORRELATION_ID_HEADER]) headers[CORRELATION_ID_HEADER] = requestId;
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
    // The client went away; nothing to answer.
  }
}
