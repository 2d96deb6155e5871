// A swap's send step at run time (spec §4.7, §4.8, §4.9), before any row of its currency:
// S1 at most one per batch and currency: its reference is looked for in the journal, then the swaps list.
// S2 the send step of every payment (send.ts): key and body journalled, fsynced, before the request.
// S3 an unknown outcome is settled by the list or the same key and bytes, never a new key.
// S4 a new key only after 'Invalid payout amount' (§7) and a list without it; once per run.
// S5 a live rate further than the tolerance from the approved one refuses the swap.
// S6 a journalled swap of unknown outcome is resent only within the proposal (the approved plan's): no more sold, the same wallets.
import type { CurrencyPairAnswer, SwapAnswer } from '../client/answers.ts';
import { PayoutApiError } from '../client/errors.ts';
import { readPages } from '../client/pages.ts';
import { INVALID_PAYOUT_AMOUNT_MESSAGE, LIST_MAX_LIMIT } from '../spec/codes.ts';
import { type ErrorSnapshot, type SwapSnapshot, type SwapState } from '../journal/lines.ts';
import { Dec, formatAmount, fromApi, toApi } from '../money.ts';
import type { SwapRequest } from '../spec/schemas.ts';
import { otherThanSent } from './execute.ts';
import { idempotencyKey } from './identity.ts';
import { listedPairs } from './preflight.ts';
import { sendStep, snapshotOfError, type Attempt, type SendContext } from './send.ts';
import { record, recordInitiating, unsettled } from './session.ts';
import { convertAtRate, swapSnapshotOf, type SwapProposal } from './swap.ts';

interface SwapSendContext extends Omit<SendContext, 'at'> {
  /** What a currency's rows still to send need in its wallet: the credit shows when it holds that much. */
  need?: (currency: string) => Dec | undefined;
  /** --swap-rate-tolerance as a fraction (0.01 = 1%). */
  rateTolerance: Dec;
  /** Told at once of a swap not as sent, before the other swaps are done: no row may start after it. */
  notAsSent?: (f: SwapFunding) => void;
}

/** `funded` (its rows go), or stopped: its rows NOT_SENT with `error`; `halt`: resume is safe, else refused. */
export type SwapFunding =
  | { currency: string; funded: true; swap?: SwapSnapshot }
  /** `notAsSent`: answered with another amount or currency than sent; not resumed before the service is asked. */
  | { currency: string; funded: false; error: ErrorSnapshot; halt: boolean; notAsSent?: true };

export type Stopped = Extract<SwapFunding, { funded: false }>;

/** Funds each proposal's currency by its swap; unsettled journalled swaps no proposal names are settled by the list only. */
export async function fundBySwaps(ctx: SwapSendContext, proposals: readonly SwapProposal[]): Promise<Map<string, SwapFunding>> {
  const open = [...ctx.session.folded.swaps.values()].filter(unsettled);
  if (!proposals.length && !open.length) return new Map();
  const references = [...proposals.map((p) => p.reference), ...open.map((s) => s.reference)];
  // (a swap not as sent: no other swap starts after it, not even one priced again)
  const held = new AbortController();
  const sender = new SwapSender({ ...ctx, stop: ctx.stop ? AbortSignal.any([ctx.stop, held.signal]) : held.signal }, references);
  const orphans = open.filter((s) => !proposals.some((p) => p.currency === s.currency));
  const told = <F extends SwapFunding | undefined>(f: F): F => {
    if (f && !f.funded && f.notAsSent) {
      held.abort(f.error.message);
      ctx.notAsSent?.(f);
    }
    return f;
  };
  const [funded, leftover] = await Promise.all([
    Promise.all(proposals.map((p) => sender.fund(p).then(told))),
    Promise.all(orphans.map((s) => sender.settleByList(s).then(told))),
  ]);
  return new Map([...funded, ...leftover.filter((f) => !!f)].map((f) => [f.currency, f]));
}

/** What a request came to: a Stopped (no `kind`) ends its currency's funding. */
type Sent =
  | { kind: 'created'; swap: SwapSnapshot }
  | { kind: 'stale-rate' | 'unknown'; attempt: number; key: string; body: string; resent: boolean }
  | Stopped;

type Found = { swap?: SwapAnswer } | { stopped: Stopped };

class SwapSender {
  private listing: Promise<Map<string, SwapAnswer>> | undefined;
  private pairs: Promise<CurrencyPairAnswer[]> | undefined;
  private readonly failures = new Map<string, string>();
  private readonly send: SendContext;

  constructor(
    private readonly ctx: SwapSendContext,
    private readonly references: string[],
  ) {
    this.send = { ...ctx, at: () => new Date().toISOString() };
  }

  async fund(p: SwapProposal): Promise<SwapFunding> {
    const s = this.state(p.currency);
    if (s?.phase === 'created' && s.swap) return this.credit(p, s.swap);
    if (s?.phase === 'conflict') return conflict(p);
    const listed = await this.find(p, false);
    if ('stopped' in listed) return listed.stopped;
    if (listed.swap) return this.fromList(p, listed.swap);
    const beyond = s && unsettled(s) && s.body ? beyondProposal(p, s.body) : undefined;
    if (beyond) return stop(p, false, 'SWAP_REFUSED', beyond);
    let sent: Sent =
      s && unsettled(s) && s.body
        ? await this.request(p, { attempt: s.attempt, key: s.key, body: s.body, apiKeyFingerprint: s.apiKeyFingerprint, resend: true })
        : await this.fresh(p, (s?.attempt ?? 0) + 1, false);
    let recomputed = false;
    for (;;) {
      if (!('kind' in sent)) return sent;
      if (sent.kind === 'created') return this.credit(p, sent.swap);
      // S3, S4
      const again = await this.find(p, true);
      if ('stopped' in again) return again.stopped;
      if (again.swap) return this.fromList(p, again.swap);
      if (sent.kind === 'unknown') {
        if (sent.resent) {
          const why = this.failures.get(p.currency) ?? 'no answer';
          const reason = `the ${p.currency} swap's outcome is not known yet (${why}): resume later, the next run settles it with the same key`;
          return stop(p, true, 'SWAP_OUTCOME_UNKNOWN', reason);
        }
        sent = await this.request(p, { attempt: sent.attempt, key: sent.key, body: sent.body, resend: true });
        continue;
      }
      const moved = `the rate of the ${p.currency} swap moved again after one recomputation: no swap was made`;
      if (recomputed) return stop(p, false, 'SWAP_RATE_MOVED', moved);
      recomputed = true;
      sent = await this.fresh(p, sent.attempt + 1, true);
    }
  }

  /** An unsettled swap no proposal names: the list says whether it was made, and as sent; nothing is sent. */
  async settleByList(s: SwapState): Promise<Stopped | undefined> {
    const found = await this.find(s, false);
    if ('stopped' in found) return found.stopped; // (not compared: its currency's rows wait for the next run)
    if (found.swap) this.created(s.currency, s.reference, found.swap);
    return found.swap && s.body !== undefined ? notAsSent(s, s.body, found.swap, 'listed as') : undefined;
  }

  /** S5: a new attempt priced at the live rate, then sent. */
  private async fresh(p: SwapProposal, attempt: number, reread: boolean): Promise<Sent> {
    // (the reason a string: another swap was not as sent; else Ctrl-C)
    const why = this.ctx.stop?.reason as unknown;
    if (this.ctx.stop?.aborted)
      return stop(p, true, 'STOPPED', typeof why === 'string' ? why : `stopped on request before the ${p.currency} swap`);
    const pairs = await this.livePairs(reread).catch((e: unknown) => unreachable(p, 'the pairs', e));
    if (!Array.isArray(pairs)) return pairs;
    const priced = priceAtLiveRate(p, pairs, this.ctx.rateTolerance);
    if ('refused' in priced) return stop(p, false, 'SWAP_REFUSED', priced.refused);
    const key = idempotencyKey(p.reference, attempt, 'swap');
    return this.request(p, { attempt, key, body: swapBody(p, priced.amountToBeSent), resend: false });
  }

  private async request(p: SwapProposal, a: Attempt): Promise<Sent> {
    const { attempt, key, body, resend } = a;
    const ids = { t: 'swap' as const, currency: p.currency, reference: p.reference, attempt, key };
    const sent = await sendStep(this.send, a, {
      initiating: (stamp) => recordInitiating(this.ctx.session, { ...ids, phase: 'initiating', body, ...stamp }, this.ctx.stop),
      request: () => this.ctx.client.swap(body, { idempotencyKey: key }),
      created: (r) => ({ ...ids, phase: 'created', swap: swapSnapshotOf(r.swap), at: this.send.at() }),
      // 'Invalid payout amount' is the service's refusal of a moved rate: stale-rate, not rejected
      failed: (line, error, e) => ({
        ...ids,
        phase: isStaleRate(e) ? 'stale-rate' : line,
        error,
        at: this.send.at(),
      }),
    });
    if ('notSent' in sent) return stop(p, true, 'SWAP_NOT_SENT', `the ${p.currency} swap was not sent: ${errorText(sent.notSent)}`);
    if ('answer' in sent)
      return notAsSent(p, body, sent.answer.swap, 'answered with') ?? { kind: 'created', swap: this.state(p.currency)!.swap! };
    const e = sent.failed;
    this.failures.set(p.currency, snapshotOfError(e, resend).message);
    if (isStaleRate(e)) return { kind: 'stale-rate', attempt, key, body, resent: resend };
    if (sent.verdict.line === 'unknown') return { kind: 'unknown', attempt, key, body, resent: resend };
    // (the service cannot be used now: the swap stays as journalled, settled by the next run)
    if (sent.verdict.halt) return unreachable(p, 'the swap', e);
    if (sent.verdict.line === 'conflict') return conflict(p);
    return stop(p, false, 'SWAP_REFUSED', `the service refused the ${p.currency} swap: ${errorText(e)}`);
  }

  /** A swap found in the list, journalled `created`; stopped when not what its journalled attempt sent (or none: approved). */
  private fromList(p: SwapProposal, listed: SwapAnswer): Promise<SwapFunding> | Stopped {
    const { body } = this.state(p.currency) ?? {};
    const swap = this.created(p.currency, p.reference, listed);
    // (none journalled here, made by another ledger of the account: the approved swap, but for its credit, priced when sent)
    const approved = { swapAmount: toApi(new Dec(p.swapAmount)), swapCurrency: p.fromCurrency, currencyToBeSent: p.currency };
    const how = body === undefined ? 'listed (this ledger sent none: compared with the approved swap) as' : 'listed as';
    return notAsSent(p, body ?? JSON.stringify(approved), listed, how) || this.credit(p, swap);
  }

  /** A swap found in the list, journalled `created` under its journalled attempt, else the first. */
  private created(currency: string, reference: string, answer: SwapAnswer): SwapSnapshot {
    const s = this.state(currency);
    const attempt = s?.attempt ?? 1;
    const swap = swapSnapshotOf(answer);
    const key = s?.key ?? idempotencyKey(reference, attempt, 'swap');
    record(this.ctx.session, { t: 'swap', phase: 'created', currency, reference, attempt, key, swap, at: this.send.at() }, { sync: true });
    return swap;
  }

  /** A REJECTED swap stops its currency (refused); else the wallet must show the credit (halt). */
  private async credit(p: SwapProposal, swap: SwapSnapshot): Promise<SwapFunding> {
    const rejected = `the ${p.currency} swap ${swap.id} was REJECTED by the service: no ${p.currency} row was sent`;
    if (swap.status === 'REJECTED') return stop(p, false, 'SWAP_REJECTED', rejected);
    const wallets = await this.ctx.client.listWallets().catch((e: unknown) => unreachable(p, 'the wallets', e));
    if (!('data' in wallets)) return wallets;
    const w = wallets.data.find((x) => x.walletId === p.destinationWalletId) ?? wallets.data.find((x) => x.currency === p.currency);
    // (a listing without a balance: the service's INSUFFICIENT_FUNDS decides, as for any row)
    const balance = w ? (w.balance === undefined ? undefined : fromApi(w.balance)) : new Dec(0);
    const need = this.ctx.need?.(p.currency);
    if (balance === undefined || need === undefined || !balance.lessThan(need)) return { currency: p.currency, funded: true, swap };
    // reversed since (REJECTED, spec §3), or not showing yet: the swap says which
    const now = await this.ctx.client.getSwap(swap.id).catch(() => undefined);
    const body = this.state(p.currency)?.body;
    const other = now && body !== undefined && notAsSent(p, body, now, 'read as');
    if (other) return other;
    if (now && now.status !== swap.status) {
      const read = swapSnapshotOf(now);
      record(
        this.ctx.session,
        { t: 'swap', phase: 'status', currency: p.currency, reference: p.reference, swap: read, at: this.send.at() },
        { sync: true },
      );
      if (read.status === 'REJECTED') return this.credit(p, read);
    }
    // (the service credits a swap at once, spec §3: more likely spent since the plan, by a batch this one cannot see)
    const why =
      `the ${p.currency} wallet holds ${formatAmount(balance, p.currency)} after swap ${swap.id} (${swap.status}), its rows need ` +
      `${formatAmount(need, p.currency)}: another batch of the account (or a payout made elsewhere) spent from it since the plan, ` +
      `or the swap's credit does not show yet. No ${p.currency} row was sent: run again once that batch is done; ` +
      `if the wallet is still short, top it up or send part with --allow-partial (a batch makes one swap per currency)`;
    return stop(p, true, 'SWAP_CREDIT_NOT_SHOWN', why);
  }

  private find(p: Pick<SwapProposal, 'currency' | 'reference'>, fresh: boolean): Promise<Found> {
    return this.listed(fresh).then(
      (found) => ({ swap: found.get(p.reference) }),
      (e: unknown) => ({ stopped: unreachable(p, 'the swaps list', e) }),
    );
  }

  /** The wanted references' swaps, paged until each is seen or the pages (newest first) predate the batch's first run. */
  private listed(fresh: boolean): Promise<Map<string, SwapAnswer>> {
    if (this.listing && !fresh) return this.listing;
    const found = new Map<string, SwapAnswer>();
    const wanted = new Set(this.references);
    const since = Date.parse(this.ctx.session.header.createdAt);
    const read = readPages<SwapAnswer>({
      what: 'swaps',
      // (not stopped by the run's stop signal: a listing cut short would read as "no swap")
      stopBelow: Number.isNaN(since) ? undefined : since,
      // (by reference, not by id: once every one is seen, an empty page ends the listing with no request)
      fetch: async (page) => {
        if ([...wanted].every((r) => found.has(r))) return { data: [] };
        const r = await this.ctx.client.listSwaps({ page, limit: LIST_MAX_LIMIT });
        for (const s of r.data) if (s.payoutRef && wanted.has(s.payoutRef) && !found.has(s.payoutRef)) found.set(s.payoutRef, s);
        return r;
      },
    }).then(() => found);
    if (!fresh) this.listing = read;
    return read;
  }

  private livePairs(reread: boolean): Promise<CurrencyPairAnswer[]> {
    if (!this.pairs || reread) this.pairs = listedPairs(this.ctx.client).then((pairs) => pairs ?? []);
    return this.pairs;
  }

  private state(currency: string): SwapState | undefined {
    return this.ctx.session.folded.swaps.get(currency);
  }
}

const stop = (p: Pick<SwapProposal, 'currency'>, halt: boolean, code: string, message: string): Stopped => ({
  currency: p.currency,
  funded: false,
  halt,
  error: { code, message },
});

// I5: the key is bound to another body at the service; never a new key (it could be a second swap): a person looks
const conflict = (p: Pick<SwapProposal, 'currency'>): Stopped =>
  stop(
    p,
    false,
    'SWAP_CONFLICT',
    `the ${p.currency} swap's key is bound to another request at the service (409): no swap is sent under a new key; ask the service`,
  );

const unreachable = (p: Pick<SwapProposal, 'currency'>, what: string, e: unknown): Stopped =>
  stop(p, true, 'SERVICE_UNAVAILABLE', `${what} could not be read or sent for the ${p.currency} swap (${errorText(e)}): resume later`);

const errorText = (e: unknown) => snapshotOfError(e).message;

/** A swap answered (or listed) with another amount or currency than `body` sent (otherThanSent): its currency stops, and the run. */
function notAsSent(p: Pick<SwapProposal, 'currency'>, body: string, swap: SwapAnswer, how: string): Stopped | undefined {
  const b = JSON.parse(body) as SwapRequest;
  const asked = { sourceAmount: b.swapAmount, sourceCurrency: b.swapCurrency, destinationCurrency: b.currencyToBeSent };
  const other = otherThanSent(swap, { ...asked, destinationAmount: b.amountToBeSent });
  const why = `the ${p.currency} swap was ${how} swap ${swap.id} of ${other}, not what was sent: no ${p.currency} row was sent; ask the service about it`;
  return other ? { ...stop(p, true, 'SWAP_NOT_AS_SENT', why), notAsSent: true } : undefined;
}

/** S6: why a journalled swap of unknown outcome is not resent: it sells more than the proposal (the approved plan's), or from or to other wallets. */
function beyondProposal(p: SwapProposal, body: string): string | undefined {
  const b = JSON.parse(body) as SwapRequest;
  const amount = fromApi(b.swapAmount);
  if (b.sourceWalletId === p.sourceWalletId && b.destinationWalletId === p.destinationWalletId && !amount.greaterThan(p.swapAmount))
    return undefined;
  return (
    `the ${p.currency} swap an earlier run sent (${formatAmount(amount, b.swapCurrency)} ${b.swapCurrency}; its outcome unknown, ` +
    `the swaps list does not show it) is not the one planned (${p.swapAmount} ${p.fromCurrency}): it is not sent again, nor another ` +
    `in its place; plan again (the plan proposes it as sent) and run that plan`
  );
}

/** 'Invalid payout amount' (spec §7, no code): the swap's amountToBeSent no longer matches the live rate. */
export function isStaleRate(e: unknown): boolean {
  return e instanceof PayoutApiError && e.status === 400 && e.code === undefined && e.message.includes(INVALID_PAYOUT_AMOUNT_MESSAGE);
}

/** The swap's body (spec §4.7); field order fixed: the same swap always gives the same text. */
export function swapBody(p: SwapProposal, amountToBeSent: Dec): string {
  return JSON.stringify({
    sourceWalletId: p.sourceWalletId,
    destinationWalletId: p.destinationWalletId,
    swapAmount: toApi(new Dec(p.swapAmount)),
    swapCurrency: p.fromCurrency,
    amountToBeSent: toApi(amountToBeSent),
    currencyToBeSent: p.currency,
    reference: p.reference,
  });
}

/** S5 and spec §7's "recompute from pairs": swapAmount at the live rate, or why refused (pair gone, rate moved, credit short). */
export function priceAtLiveRate(
  p: SwapProposal,
  pairs: readonly Pick<CurrencyPairAnswer, 'baseCurrency' | 'quoteCurrency' | 'rate'>[],
  tolerance: Dec,
): { amountToBeSent: Dec; rate: Dec } | { refused: string } {
  const { baseCurrency, quoteCurrency } = p.pair;
  const live = pairs.find((x) => x.baseCurrency === baseCurrency && x.quoteCurrency === quoteCurrency && x.rate !== undefined);
  const pair = `${baseCurrency}/${quoteCurrency}`;
  if (!live) return { refused: `the ${pair} pair is not enabled any more, or shows no rate: the ${p.currency} swap was not sent` };
  const rate = fromApi(live.rate!);
  const approved = new Dec(p.pair.rate);
  if (rate.minus(approved).abs().greaterThan(approved.times(tolerance)))
    return {
      refused:
        `the ${pair} rate moved from ${approved.toFixed()} (approved) to ${rate.toFixed()} (live), more than the tolerance of ` +
        `${tolerance.times(100).toFixed()}%: the ${p.currency} swap was not sent; plan again, the approvers signed a rate`,
    };
  const amountToBeSent = convertAtRate(new Dec(p.swapAmount), p.currency, rate, p.fromCurrency === baseCurrency);
  if (amountToBeSent.lessThan(new Dec(p.shortfall)))
    return {
      refused:
        `at the live ${pair} rate ${rate.toFixed()} the swap would credit ${formatAmount(amountToBeSent, p.currency)} ${p.currency}, ` +
        `less than the shortfall of ${p.shortfall}: the ${p.currency} swap was not sent; plan again`,
    };
  return { amountToBeSent, rate };
}
