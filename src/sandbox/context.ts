// What a route handler receives. The parts never import this file (their routes are in routes/): no cycle.
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
  shapes: SandboxShapes;
  baseUrl(): string;
  requestLog(): RequestLogEntry[];
}

export type Handler = (sb: Sandbox, req: Request) => Reply | Promise<Reply>;

export interface Route {
  name: string;
  kind: 'spec' | 'storage' | 'control';
  method: string;
  pattern: string;
  handler: Handler;
}
