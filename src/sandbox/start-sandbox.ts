// startSandbox: the stateful local simulator of the payout service, on 127.0.0.1 only.
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomInt } from 'node:crypto';
import { MONTHLY_QUOTA, RATE_LIMIT_PER_SECOND } from '../spec/codes.ts';
import { DEFAULT_SERVICE_HEADERS } from '../spec/endpoints.ts';
import { Clock } from './clock.ts';
import type { FaultConfig, LocalSandbox, RequestLogEntry, SandboxOptions } from './contract.ts';
import type { Sandbox } from './context.ts';
import { Faults } from './faults.ts';
import { IdempotencyStore } from './idempotency.ts';
import { Lifecycle } from './lifecycle.ts';
import { Limits } from './rate-limits.ts';
import { restoreState, snapshotState } from './persist.ts';
import { defaultSeed, parseSeed } from './seed.ts';
import { variantEvent } from './shapes.ts';
import { requestHandler } from './server.ts';
import { Storage } from './storage.ts';
import { Store } from './store.ts';
import { Webhooks } from './webhooks.ts';

export type * from './contract.ts';
export { DEFAULT_KEYS, SeedError, parseSeed, readSeedFile, defaultSeed } from './seed.ts';
export type { Seed } from './seed.ts';
export { SandboxStateSchema } from './contract.ts';

/** Throws before listening on an invalid seed (SeedError), faults or shapes (TypeError), or a taken port (EADDRINUSE). */
export async function startSandbox(options: SandboxOptions = {}): Promise<LocalSandbox> {
  const shapes = options.shapes ?? 'strict';
  if (shapes !== 'strict' && shapes !== 'variant') throw new TypeError(`shapes is 'strict' or 'variant' (got ${JSON.stringify(shapes)})`);
  const seed = options.seed === undefined ? defaultSeed() : parseSeed(options.seed);
  const randomSeed = options.randomSeed ?? randomInt(0, 2 ** 31);
  const faults = new Faults(options.faults, randomSeed);
  const clock = new Clock(options.now);
  const store = new Store(seed, clock);
  let base = '';
  const log: RequestLogEntry[] = [];
  const webhooks = new Webhooks(clock, {
    headers: options.serviceHeaders ?? DEFAULT_SERVICE_HEADERS,
    retryDelaysMs: options.webhookRetryDelaysMs ?? [500, 2000, 10_000],
    timeoutMs: options.webhookTimeoutMs || 5000,
  });
  store.publish = (e) => webhooks.publish(shapes === 'variant' ? variantEvent(e, store) : e);
  const sb: Sandbox = {
    clock,
    store,
    limits: new Limits({
      rateLimitPerSecond: options.rateLimitPerSecond === undefined ? RATE_LIMIT_PER_SECOND : options.rateLimitPerSecond,
      monthlyQuota: options.monthlyQuota === undefined ? MONTHLY_QUOTA : options.monthlyQuota,
    }),
    idempotency: new IdempotencyStore(options.storeRefusals ?? shapes === 'variant'),
    storage: new Storage(() => base, clock),
    lifecycle: new Lifecycle(store, options.autoAdvance ?? false),
    webhooks,
    faults,
    shapes,
    baseUrl: () => base,
    requestLog: () => log.filter((e) => e.status >= 0).map((e) => ({ ...e })),
  };

  if (options.state) restoreState(sb, options.state, options.autoAdvance ?? false);

  const propagatingKeys = new Set(options.propagatingKeys);
  const server: Server = createServer(requestHandler({ sb, propagatingKeys, log, onRequest: options.onRequest }));
  server.keepAliveTimeout = 5000;
  await once(server.listen(options.port ?? 0, '127.0.0.1'), 'listening');
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  let closed: Promise<void> | undefined;
  return {
    url: base,
    keys: [...store.businessByKey].map(([key, b]) => ({ key, businessId: b.id, businessName: b.name })),
    requestLog: () => sb.requestLog(),
    setFaults: (f: Partial<FaultConfig>) => faults.set(f),
    faults: () => faults.get(),
    randomSeed,
    shapes,
    storeRefusals: sb.idempotency.storeRefusals,
    deliveries: () => webhooks.deliveries(),
    pendingDeliveries: () => webhooks.pending(),
    advanceClock: (ms: number) => clock.advance(ms),
    inFlight: () => log.reduce((n, e) => n + (e.status < 0 ? 1 : 0), 0),
    snapshot: () => snapshotState(sb),
    close: () =>
      (closed ??= new Promise<void>((resolve) => {
        sb.lifecycle.close();
        webhooks.close();
        server.close(() => resolve());
        server.closeAllConnections();
      })),
  };
}
