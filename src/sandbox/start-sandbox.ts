// The state as data for `--env local` (src/cli/local-sandbox.ts): what a later command needs (the month's request counts
// too), not one process's (the rate window, faults, the request log, subscriptions); earlier hosts stay valid for documentUrls.
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Dec } from '../money.ts';
import { STATE_VERSION, type FaultConfig, type SandboxOptions, type SandboxState } from './contract.ts';
import { buildSandbox, type Sandbox } from './context.ts';
import { variantEvent } from './shapes.ts';
import { requestHandler } from './server.ts';
import type { PayoutRec, SwapRec, TransactionRec } from './store.ts';

export * from './contract.ts';
export { DEFAULT_KEYS, SeedError, parseSeed, readSeedFile, defaultSeed, type Seed } from './seed.ts';

export type LocalSandbox = Awaited<ReturnType<typeof startSandbox>>;

/** Throws before listening on an invalid seed (SeedError), faults or shapes (TypeError), or a taken port (EADDRINUSE). */
export async function startSandbox(options: SandboxOptions = {}) {
  let base = '';
  const sb = buildSandbox(options, () => base);
  const { clock, store, webhooks, faults, shapes } = sb;
  store.publish = (e) => webhooks.publish(shapes === 'variant' ? variantEvent(e, store) : e);

  if (options.state) restoreState(sb, options.state);

  const server: Server = createServer(requestHandler(sb));
  server.keepAliveTimeout = 5000;
  await once(server.listen(options.port ?? 0, '127.0.0.1'), 'listening');
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  let closed: Promise<void> | undefined;
  return {
    url: base,
    keys: [...store.businessByKey].map(([key, b]) => ({ key, businessId: b.id, businessName: b.name })),
    requestLog: () => sb.requestLog(),
    /** Replaces the fault configuration: setFaults({}) clears. */
    setFaults: (f: Partial<FaultConfig>) => faults.set(f),
    faults: () => faults.get(),
    randomSeed: sb.randomSeed,
    shapes,
    storeRefusals: sb.idempotency.storeRefusals,
    deliveries: () => webhooks.deliveries(),
    /** Webhook attempts scheduled or under way (tests wait for 0 instead of sleeping). */
    pendingDeliveries: () => webhooks.pending(),
    advanceClock: (ms: number) => clock.advance(ms),
    /** Requests received, not yet answered nor dropped (tests wait for 0). */
    inFlight: () => sb.log.reduce((n, e) => n + (e.status < 0 ? 1 : 0), 0),
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

/** Dec amounts become strings through their toJSON. */
export function snapshotState(sb: Sandbox): SandboxState {
  const { store, storage, idempotency } = sb;
  const plain = (r: object) => JSON.parse(JSON.stringify(r)) as Record<string, unknown>;
  return {
    v: STATE_VERSION,
    hosts: [new URL(sb.baseUrl()).host, ...storage.formerHosts],
    wallets: [...store.wallets.values()].map((w) => ({ walletId: w.walletId, balance: w.balance.toFixed() })),
    pairs: [...store.pairs.values()].map((p) => ({ currencyPairId: p.currencyPairId, rate: p.rate.toFixed(), enabled: p.enabled })),
    payouts: [...store.payouts.values()].map(plain),
    swaps: [...store.swaps.values()].map(plain),
    transactions: store.transactions.map(plain),
    quota: [...sb.limits.months].map(([key, m]) => ({ key, ...m })),
    idempotency: [...idempotency.entries].map(([slot, e]) => ({ slot, ...e })),
    documents: [...storage.byUpload.values()].map(({ uploaded, ...f }) => ({
      ...f,
      ...(uploaded ? { uploaded: { base64: uploaded.bytes.toString('base64'), at: uploaded.at } } : {}),
    })),
  };
}

/** A copy of the stored record `r`, its `fields` back to Dec. */
const decs = <T>(r: Record<string, unknown>, fields: string[]): T =>
  ({ ...r, ...Object.fromEntries(fields.map((f) => [f, new Dec(String(r[f]))])) }) as T;
const MOVED = ['sourceAmount', 'destinationAmount', 'exchangeRate'];

/** Into a sandbox just built from the same seed; with `autoAdvance`, the steps that fell due meanwhile are taken now. */
export function restoreState(sb: Sandbox, state: SandboxState): void {
  const { store, storage, idempotency } = sb;
  for (const w of state.wallets) {
    const wallet = store.wallets.get(w.walletId);
    if (wallet) wallet.balance = new Dec(w.balance);
  }
  for (const p of state.pairs) {
    const pair = store.pairs.get(p.currencyPairId);
    if (pair) Object.assign(pair, { rate: new Dec(p.rate), enabled: p.enabled });
  }
  for (const p of state.payouts) store.payouts.set(p.id as string, decs<PayoutRec>(p, [...MOVED, 'fee']));
  for (const s of state.swaps) store.swaps.set(s.id as string, decs<SwapRec>(s, MOVED));
  for (const t of state.transactions) store.transactions.push(decs<TransactionRec>(t, ['amount', 'balanceBefore', 'balanceAfter']));
  for (const { key, ...m } of state.quota ?? []) sb.limits.months.set(key, m);
  for (const { slot, ...e } of state.idempotency) idempotency.entries.set(slot, e);
  for (const { uploaded, ...f } of state.documents)
    storage.add({ ...f, ...(uploaded ? { uploaded: { bytes: Buffer.from(uploaded.base64, 'base64'), at: uploaded.at } } : {}) });
  for (const h of state.hosts) storage.formerHosts.add(h);
  sb.lifecycle.catchUp();
}
