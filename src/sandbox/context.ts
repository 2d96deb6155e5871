// What a route handler receives (the parts, built here), and the one way to define a route.
import { randomInt } from 'node:crypto';
import type { z } from 'zod';
import { DEFAULT_SERVICE_HEADERS } from '../spec/endpoints.ts';
import { Clock } from './clock.ts';
import type { RequestLogEntry, RouteName, SandboxOptions } from './contract.ts';
import { parseWith, type Reply, type Request } from './http.ts';
import { Faults } from './faults.ts';
import { IdempotencyStore } from './idempotency.ts';
import { Lifecycle } from './lifecycle.ts';
import { Limits } from './rate-limits.ts';
import { defaultSeed, parseSeed } from './seed.ts';
import { Storage } from './storage.ts';
import { Store } from './store.ts';
import { Webhooks } from './webhooks.ts';

/** The sandbox's parts, built from its options (startSandbox then listens); an invalid seed, faults or shapes throws here. */
export function buildSandbox(options: SandboxOptions, baseUrl: () => string) {
  const shapes = options.shapes ?? 'strict';
  if (shapes !== 'strict' && shapes !== 'variant') throw new TypeError(`shapes is 'strict' or 'variant' (got ${JSON.stringify(shapes)})`);
  const randomSeed = options.randomSeed ?? randomInt(0, 2 ** 31);
  const clock = new Clock(options.now);
  const store = new Store(options.seed === undefined ? defaultSeed() : parseSeed(options.seed), clock);
  /** Every request, from its arrival (status -1 until answered). */
  const log: RequestLogEntry[] = [];
  return {
    clock,
    store,
    limits: new Limits(options),
    idempotency: new IdempotencyStore(options.storeRefusals ?? shapes === 'variant', shapes === 'variant'),
    storage: new Storage(baseUrl, clock),
    lifecycle: new Lifecycle(store, options.autoAdvance ?? false),
    webhooks: new Webhooks(clock, {
      headers: options.serviceHeaders ?? DEFAULT_SERVICE_HEADERS,
      retryDelaysMs: options.webhookRetryDelaysMs ?? [500, 2000, 10_000],
      timeoutMs: options.webhookTimeoutMs || 5000,
    }),
    faults: new Faults(options.faults, randomSeed),
    randomSeed,
    shapes,
    baseUrl,
    log,
    propagatingKeys: new Set(options.propagatingKeys),
    /** Spec §5.3: a new key "may need 20 to 30 minutes to propagate"; reading: these keys work 30 minutes after the start. */
    propagatedAt: clock.now() + 30 * 60_000,
    onRequest: options.onRequest,
    requestLog: () => log.filter((e) => e.status >= 0).map((e) => ({ ...e })),
  };
}

export type Sandbox = ReturnType<typeof buildSandbox>;

export type Handler<B = unknown> = (sb: Sandbox, req: Request, body: B) => Reply | Promise<Reply>;

export function define<B>(
  kind: 'spec' | 'storage' | 'control',
  name: RouteName,
  method: string,
  pattern: string,
  body: z.ZodType<B> | null,
  handle: Handler<B>,
) {
  const handler = (sb: Sandbox, req: Request) => handle(sb, req, body ? parseWith(body, req.body) : (req.body as B));
  return { name, kind, method, pattern, handler };
}

export type Route = ReturnType<typeof define>;

/** A route; given a schema, the request body is parsed by it first (400 VALIDATION_ERROR) and handed over. */
export const route = <B>(name: RouteName, method: string, pattern: string, body: z.ZodType<B> | null, handle: Handler<B>) =>
  define('spec', name, method, pattern, body, handle);

/** A route under /_sandbox: no x-api-key, no limits. */
export const control = <B>(method: string, pattern: string, body: z.ZodType<B> | null, handle: Handler<B>) =>
  define('control', 'control', method, `/_sandbox/${pattern}`, body, handle);

/** A creating route (spec §4.2, §4.7): key before body (idempotency.ts); a replay answers `view` of the record now. */
export function creating<B>(
  name: 'initiate' | 'swap',
  pattern: string,
  body: z.ZodType<B>,
  view: (sb: Sandbox, recordId: string) => unknown,
  make: (sb: Sandbox, req: Request, body: B) => Reply,
): Route {
  return define('spec', name, 'POST', pattern, null, (sb, req) => {
    const create = () => make(sb, req, parseWith(body, req.body));
    return sb.idempotency.once(req, name, (id) => view(sb, id), create);
  });
}
