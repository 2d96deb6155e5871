// What every route handler receives: the sandbox's parts and one parsed request (request.ts).
// The parts' files never import this one: their routes are in routes/, so no import cycle.
import type { Clock } from './clock.ts';
import type { RequestLogEntry, SandboxShapes } from './contract.ts';
import type { Reply } from './error-answers.ts';
import type { Request } from './request.ts';
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
  /** The reading answers are given in (shapes.ts); requests are checked the same way in both. */
  shapes: SandboxShapes;
  /** {base_url} once listening. */
  baseUrl(): string;
  requestLog(): RequestLogEntry[];
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
