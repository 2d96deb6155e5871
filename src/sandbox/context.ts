// What a route handler receives, and the one way to define a route. The parts never import this file (their
// routes are in routes/): no cycle.
import type { z } from 'zod';
import type { Clock } from './clock.ts';
import type { RequestLogEntry, RouteName, SandboxShapes } from './contract.ts';
import { parseWith, type Reply, type Request } from './http.ts';
import type { Faults } from './faults.ts';
import type { IdempotencyStore } from './idempotency.ts';
import type { Lifecycle } from './lifecycle.ts';
import type { Limits } from './rate-limits.ts';
import type { Storage } from './storage.ts';
import type { Store } from './store.ts';
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
  shapes: SandboxShapes;
  baseUrl(): string;
  requestLog(): RequestLogEntry[];
}

export type Handler<B = unknown> = (sb: Sandbox, req: Request, body: B) => Reply | Promise<Reply>;

export interface Route {
  name: RouteName;
  kind: 'spec' | 'storage' | 'control';
  method: string;
  pattern: string;
  handler: (sb: Sandbox, req: Request) => Reply | Promise<Reply>;
}

export function define<B>(
  kind: Route['kind'],
  name: RouteName,
  method: string,
  pattern: string,
  body: z.ZodType<B> | null,
  handle: Handler<B>,
): Route {
  return { name, kind, method, pattern, handler: (sb, req) => handle(sb, req, body ? parseWith(body, req.body) : (req.body as B)) };
}

/** A route; given a schema, the request body is parsed by it first (400 VALIDATION_ERROR) and handed over. */
export const route = <B>(name: RouteName, method: string, pattern: string, body: z.ZodType<B> | null, handle: Handler<B>) =>
  define('spec', name, method, pattern, body, handle);

/** A route under /_sandbox: no x-api-key, no limits. */
export const control = <B>(method: string, pattern: string, body: z.ZodType<B> | null, handle: Handler<B>) =>
  define('control', 'control', method, `/_sandbox/${pattern}`, body, handle);

/**
 * A creating route (spec §4.2, §4.7): the Idempotency-Key is checked before the body (idempotency.ts); a replay
 * answers `view` of the record now; `make` names the record it made in `created`.
 */
export function creating<B>(
  name: 'initiate' | 'swap',
  pattern: string,
  body: z.ZodType<B>,
  view: (sb: Sandbox, recordId: string) => unknown,
  make: (sb: Sandbox, req: Request, body: B) => Reply,
): Route {
  const handler: Route['handler'] = (sb, req) => {
    const create = () => make(sb, req, parseWith(body, req.body));
    return sb.idempotency.once(req, name, (id) => view(sb, id), create);
  };
  return { name, kind: 'spec', method: 'POST', pattern, handler };
}
