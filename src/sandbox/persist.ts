// The sandbox's state as data, for `--env local` (src/cli/local-sandbox.ts): what a later command needs
// (wallets, pairs, payouts, swaps, transactions, idempotency keys, documents), not what belongs to one
// process (limits, faults, the request log, subscriptions). Earlier hosts stay valid for documentUrls.
import { Dec } from '../money.ts';
import { STATE_VERSION, type SandboxOptions, type SandboxState } from './contract.ts';
import type { Sandbox } from './context.ts';
import { AUTO_STEPS } from './lifecycle.ts';
import type { StoredFile } from './storage.ts';
import type { PayoutRec, SwapRec, TransactionRec } from './store.ts';

/** Dec amounts become strings through their toJSON. */
export function snapshotState(sb: Sandbox): SandboxState {
  const { store, storage, idempotency } = sb;
  const plain = (r: object) => JSON.parse(JSON.stringify(r)) as Record<string, unknown>;
  const tokenOf = new Map([...storage.byDocument].map(([token, f]) => [f, token]));
  return {
    v: STATE_VERSION,
    hosts: [new URL(sb.baseUrl()).host, ...storage.formerHosts],
    wallets: [...store.wallets.values()].map((w) => ({ walletId: w.walletId, balance: w.balance.toFixed() })),
    pairs: [...store.pairs.values()].map((p) => ({ currencyPairId: p.currencyPairId, rate: p.rate.toFixed(), enabled: p.enabled })),
    payouts: [...store.payouts.values()].map(plain),
    swaps: [...store.swaps.values()].map(plain),
    transactions: store.transactions.map(plain),
    idempotency: [...idempotency.entries].map(([slot, e]) => ({ slot, ...e })),
    documents: [...storage.byUpload].map(([uploadToken, f]) => ({
      uploadToken,
      documentToken: tokenOf.get(f) ?? '',
      businessId: f.businessId,
      contentType: f.contentType,
      expiresAt: f.expiresAt,
      ...(f.uploaded ? { uploaded: { base64: f.uploaded.bytes.toString('base64'), at: f.uploaded.at } } : {}),
    })),
  };
}

const decs = (r: Record<string, unknown>, fields: string[]) => {
  for (const f of fields) r[f] = new Dec(String(r[f]));
  return r;
};

/** Into a sandbox just built from the same seed; with `autoAdvance`, the steps that fell due meanwhile are taken now. */
export function restoreState(sb: Sandbox, state: SandboxState, autoAdvance: SandboxOptions['autoAdvance']): void {
  const { store, storage, idempotency } = sb;
  for (const w of state.wallets) {
    const wallet = store.wallets.get(w.walletId);
    if (wallet) wallet.balance = new Dec(w.balance);
  }
  for (const p of state.pairs) {
    const pair = store.pairs.get(p.currencyPairId);
    if (pair) Object.assign(pair, { rate: new Dec(p.rate), enabled: p.enabled });
  }
  for (const p of state.payouts) {
    const r = decs({ ...p }, ['sourceAmount', 'destinationAmount', 'exchangeRate', 'fee']) as unknown as PayoutRec;
    store.payouts.set(r.id, r);
  }
  for (const s of state.swaps) {
    const r = decs({ ...s }, ['sourceAmount', 'destinationAmount', 'exchangeRate']) as unknown as SwapRec;
    store.swaps.set(r.id, r);
  }
  for (const t of state.transactions)
    store.transactions.push(decs({ ...t }, ['amount', 'balanceBefore', 'balanceAfter']) as unknown as TransactionRec);
  for (const { slot, ...e } of state.idempotency) idempotency.entries.set(slot, e);
  for (const d of state.documents) {
    const f: StoredFile = { businessId: d.businessId, contentType: d.contentType, expiresAt: d.expiresAt };
    if (d.uploaded) f.uploaded = { bytes: Buffer.from(d.uploaded.base64, 'base64'), at: d.uploaded.at };
    storage.byUpload.set(d.uploadToken, f);
    storage.byDocument.set(d.documentToken, f);
  }
  for (const h of state.hosts) storage.formerHosts.add(h);
  if (autoAdvance) catchUp(sb, autoAdvance);
}

function catchUp(sb: Sandbox, delays: Exclude<SandboxOptions['autoAdvance'], false | undefined>): void {
  const now = sb.clock.now();
  for (const p of sb.store.payouts.values()) {
    let due = Date.parse(p.updatedAt);
    let moved = false;
    const next = () => (p.status === 'PENDING' || p.status === 'PROCESSING' ? AUTO_STEPS[p.status] : undefined);
    for (let step = next(); step && !p.statusDetail && (due += delays[step.after]) <= now; step = next()) {
      sb.lifecycle.changePayout(p, step.to, { changedBy: 'sandbox-auto-advance', reason: step.reason });
      moved = true;
    }
    // A move schedules the next step; a payout not yet due waits a whole delay from now.
    if (!moved) sb.lifecycle.scheduleNext(p);
  }
  for (const s of sb.store.swaps.values())
    if (s.status === 'PROCESSING' && Date.parse(s.updatedAt) + delays.toSuccessfulMs <= now)
      sb.lifecycle.changeSwap(s, 'SUCCESSFUL', { changedBy: 'sandbox-auto-advance', reason: AUTO_STEPS.swap.reason });
}
