// What every route handler receives: the sandbox's parts and one parsed request.
import type { IncomingHttpHeaders } from 'node:http';
import type { Clock } from './clock.ts';
import type { RequestLogEntry, SandboxShapes } from './contract.ts';
import type { Reply } from './errors.ts';
import type { Faults } from './faults.ts';
import type { IdempotencyStore } from './idempotency.ts';
import type { Lifecycle } from './lifecycle.ts';
import type { Limits } from './limits.ts';
import type { Storage } from './storage.ts';
import type { Business, Store } from './store.ts';
import type { Webhooks } from './webhooks.ts';

export interface Sandbox {
  clock: Clock;
  store: Store;
  limits: Limits;
  idempotency: IdempotencyStore;
  storage: Storage;
  lifecycle: Lifecycle;
  webhooks: Webhooks;
  faults: Faults;
  /** The reading answers are given in (shapes.ts); requests are checked the same way in both. */
  shapes: SandboxShapes;
  /** {base_url} once listening. */
  baseUrl(): string;
  requestLog(): RequestLogEntry[];
}

export interface Request {
  path: string;
  params: Record<string, string>;
  query: URLSearchParams;
  headers: IncomingHttpHeaders;
  /** Parsed JSON body; undefined when the body was empty. */
  body: unknown;
  rawBody: Buffer;
  /** Bytes sent, counted even past the size limit. */
  bodySize: number;
  /** The business of the x-api-key (spec routes only). */
  business: Business;
}

export type Handler = (sb: Sandbox, req: Request) => Reply | Promise<Reply>;

export interface Route {
  name: string;
  /** spec: x-api-key and limits apply; storage: presigned object storage; control: the sandbox's own. */
  kind: 'spec' | 'storage' | 'control';
  method: string;
  /** Segments, ':name' for a parameter. */
  pattern: string;
  handler: Handler;
}

export function header(headers: IncomingHttpHeaders, name: string): string | undefined {
  const v = headers[name.toLowerCase()];
  const s = Array.isArray(v) ? v[0] : v;
  return s === undefined || s.trim() === '' ? undefined : s.trim();
}
