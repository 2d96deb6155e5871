// The send step of a swap at run time (spec §4.7 swap, §4.8 swaps list, §4.9 pairs): for each
// approved proposal, before any row of its currency is sent,
//
//   find (the journal, then the swaps list by reference) → or price at the live rate (the
//   tolerance) → `initiating` journalled → POST swap → the answer journalled → the credit seen
//
// S1  At most one swap per batch and currency: its reference names both (swap.ts) and is looked
//     for in the journal, then in the swaps list, before anything is sent; a journalled `created`
//     sends nothing at all.
// S2  The send step of every payment (send.ts): the key and the exact body journalled, fsynced,
//     under the ledger's lock, before the request leaves (session.ts recordSwapInitiating).
// S3  An unknown outcome is settled by the swaps list, or by the same key with the same bytes (the
//     service returns the original, spec §4.7), never by a new key.
// S4  A new key (attempt + 1) only after 'Invalid payout amount' (the rate moved, spec §7) and a
//     swaps list that shows no swap with the reference; once per run.
// S5  The approvers signed a rate: a live rate further from it than the tolerance refuses the swap.
import type { PayoutClient } from '../client/client.ts';
import type { CurrencyPairAnswer, SwapAnswer } from '../client/answers.ts';
import { PayoutApiError } from '../client/errors.ts';
import { readPages } from '../client/pages.ts';
import { INVALID_PAYOUT_AMOUNT_MESSAGE, LIST_MAX_LIMIT } from '../spec/codes.ts';
import { applyEvent, type ErrorSnapshot, type SwapEvent, type SwapSnapshot, type SwapState } from '../journal/lines.ts';
import { Dec, formatAmount, fromApi, toApi } from '../money.ts';
import { idempotencyKey } from './identity.ts';
import { sendStep, snapshotOfError, type Attempt, type SendContext } from './send.ts';
import { record, recordSwapInitiating, type BatchSession } from './session.ts';
import { convertAtRate, swapSnapshotOf, type SwapProposal } from './swap.ts';

/** What the send step of a swap works with: the run's client and journal. */
export interface SwapSendContext {
  client: PayoutClient;
  session: BatchSession;
  /**
   * What the rows of a currency still to send need in its wallet (amounts, fees and the fee
   * margin, as the plan counts them): the credit is seen when the wallet holds that much.
   */
  need?: (currency: string) => Dec | undefined;
  /**
   * --swap-rate-tolerance as a fraction (0.01 = 1%): the most the pairs route's rate may have moved
   * since the plan's (the approvers signed that rate) before the swap is refused.
   */
  rateTolerance: Dec;
  stop?: AbortSignal;
  /** Now, as the journal writes it. */
  at?: () => string;
}

/**
 * One currency's funding: `funded` (its rows go), or stopped, as a row the run does not send: its
 * rows NOT_SENT with `error`, and `halt` as the row loop's (execute.ts): the service unreachable
 * or an outcome not settled, resume is safe; else refused (the swap refused, REJECTED, or the
 * rate outside the tolerance: nothing of it moved).
 */
export type SwapFunding =
  { currency: string; funded: true; swap?: SwapSnapshot } | { currency: string; funded: false; error: ErrorSnapshot; halt: boolean };

type Stopped = Extract<SwapFunding, { funded: false }>;

/**
 * Funds each proposal's currency by its swap, before any row of that currency is sent; returns one
 * entry per proposal's currency. A currency that is stopped stops only its own rows. Swaps the
 * journal left unsettled that no proposal names (the wallet covers the rows now) are settled
 * through the swaps list only.
 */
export async function fundBySwaps(ctx: SwapSendContext, proposals: readonly SwapProposal[]): Promise<Map<string, SwapFunding>> {
  const journalled = [...ctx.session.folded.swaps.values()];
  if (!proposals.length && !journalled.some(unsettled)) return new Map();
  const references = [...proposals.map((p) => p.reference), ...journalled.filter(unsettled).map((s) => s.reference)];
  const sender = new SwapSender(ctx, references);
  const named = new Set(proposals.map((p) => p.currency));
  const orphans = journalled.filter((s) => unsettled(s) && !named.has(s.currency));
  const [funded] = await Promise.all([
    Promise.all(proposals.map((p) => sender.fund(p))),
    Promise.all(orphans.map((s) => sender.settleByList(s))),
  ]);
  return new Map(funded.map((f) => [f.currency, f]));
}

const unsettled = (s: SwapState) => s.phase === 'initiating' || s.phase === 'unknown';

/** What one POST swap came to. */
type Sent =
  | { kind: 'created'; swap: SwapSnapshot }
  | { kind: 'stale-rate' | 'unknown'; attempt: number; key: string; body: string; resent: boolean }
  | { kind: 'stopped'; stop: Stopped };

/** What the swaps list shows of a reference: the swap, none, or a funding stopped because it cannot be read. */
type Found = { swap?: SwapAnswer } | { stopped: Stopped };

class SwapSender {
  private listing: Promise<Map<string, SwapAnswer>> | undefined;
  private pairs: Promise<CurrencyPairAnswer[]> | undefined;
  /** The last failure of each currency's swap, for a message. */
  private readonly failures = new Map<string, string>();
  private readonly send: SendContext;

  constructor(
    private readonly ctx: SwapSendContext,
    /** The references the first reading of the swaps list looks for, all at once. */
    private readonly references: string[],
  ) {
    this.send = { ...ctx, at: ctx.at ?? (() => new Date().toISOString()) };
  }

  /** S1-S4 for one proposal, then the credit. */
  async fund(p: SwapProposal): Promise<SwapFunding> {
    const s = this.state(p.currency);
    if (s?.phase === 'created' && s.swap) return this.credit(p, s.swap);
    const listed = await this.find(p, false);
    if ('stopped' in listed) return listed.stopped;
    if (listed.swap) return this.credit(p, this.created(p.currency, p.reference, listed.swap));
    let sent: Sent =
      s && unsettled(s) && s.body
        ? await this.request(p, { attempt: s.attempt, key: s.key, body: s.body, resend: true })
        : await this.fresh(p, (s?.attempt ?? 0) + 1, false);
    let recomputed = false;
    for (;;) {
      if (sent.kind === 'created') return this.credit(p, sent.swap);
      if (sent.kind === 'stopped') return sent.stop;
      // the swaps list says whether the swap exists (S3, S4)
      const again = await this.find(p, true);
      if ('stopped' in again) return again.stopped;
      if (again.swap) return this.credit(p, this.created(p.currency, p.reference, again.swap));
      if (sent.kind === 'unknown') {
        if (sent.resent) {
          const why = this.failures.get(p.currency) ?? 'no answer';
          const reason = `the ${p.currency} swap's outcome is not known yet (${why}): resume later, the next run settles it with the same key`;
          return stop(p, true, 'SWAP_OUTCOME_UNKNOWN', reason);
        }
        sent = await this.request(p, { attempt: sent.attempt, key: sent.key, body: sent.body, resend: true });
        continue;
      }
      if (recomputed)
        return stop(
          p,
          false,
          'SWAP_RATE_MOVED',
          `the rate of the ${p.currency} swap moved again after one recomputation: no swap was made`,
        );
      recomputed = true;
      sent = await this.fresh(p, sent.attempt + 1, true);
    }
  }

  /** An unsettled swap no proposal names: the list says whether it was made; nothing is sent. */
  async settleByList(s: SwapState): Promise<void> {
    const listed = await this.listed(false).catch(() => undefined);
    const found = listed?.get(s.reference);
    if (found) this.created(s.currency, s.reference, found);
  }

  /** S5: a new attempt priced at the live rate, within the tolerance of the approved one, then sent. */
  private async fresh(p: SwapProposal, attempt: number, reread: boolean): Promise<Sent> {
    if (this.ctx.stop?.aborted)
      return { kind: 'stopped', stop: stop(p, true, 'STOPPED', `stopped on request before the ${p.currency} swap`) };
    let pairs: CurrencyPairAnswer[];
    try {
      pairs = await this.livePairs(reread);
    } catch (e) {
      return { kind: 'stopped', stop: unreachable(p, 'the pairs', e) };
    }
    const priced = priceAtLiveRate(p, pairs, this.ctx.rateTolerance);
    if ('refused' in priced) return { kind: 'stopped', stop: stop(p, false, 'SWAP_REFUSED', priced.refused) };
    const key = idempotencyKey(p.reference, attempt, 'swap');
    return this.request(p, { attempt, key, body: swapBody(p, priced.amountToBeSent), resend: false });
  }

  /** S2, S3: one POST swap through the send step (send.ts), and what it came to. */
  private async request(p: SwapProposal, a: Attempt): Promise<Sent> {
    const { attempt, key, body, resend } = a;
    const ids = { t: 'swap' as const, currency: p.currency, reference: p.reference, attempt, key };
    const { session } = this.ctx;
    const sent = await sendStep(this.send, a, {
      initiating: async (at) => {
        const line = { ...ids, phase: 'initiating' as const, body, at };
        await recordSwapInitiating(session, line);
        applyEvent(session.folded, line);
      },
      request: () => this.ctx.client.swap(body, { idempotencyKey: key }),
      created: (r) => ({ ...ids, phase: 'created', swap: swapSnapshotOf(r.swap), at: this.send.at() }),
      // 'Invalid payout amount' is the service's refusal of a moved rate: stale-rate, not rejected
      failed: (line, error, e) => ({
        ...ids,
        phase: isStaleRate(e) ? 'stale-rate' : line === 'unknown' ? line : 'rejected',
        error,
        at: this.send.at(),
      }),
    });
    if ('notSent' in sent)
      return { kind: 'stopped', stop: stop(p, true, 'SWAP_NOT_SENT', `the ${p.currency} swap was not sent: ${errorText(sent.notSent)}`) };
    if ('answer' in sent) return { kind: 'created', swap: this.state(p.currency)!.swap! };
    const e = sent.failed;
    this.failures.set(p.currency, snapshotOfError(e, resend).message);
    if (isStaleRate(e)) return { kind: 'stale-rate', attempt, key, body, resent: resend };
    if (sent.verdict.line === 'unknown') return { kind: 'unknown', attempt, key, body, resent: resend };
    // (the service cannot be used now: the swap stays as journalled, settled by the next run)
    if (sent.verdict.halt) return { kind: 'stopped', stop: unreachable(p, 'the swap', e) };
    return { kind: 'stopped', stop: stop(p, false, 'SWAP_REFUSED', `the service refused the ${p.currency} swap: ${errorText(e)}`) };
  }

  /** The swap found in the list, journalled `created` under the attempt that made it (or the first, found without a journal). */
  private created(currency: string, reference: string, answer: SwapAnswer): SwapSnapshot {
    const s = this.state(currency);
    const attempt = s?.attempt ?? 1;
    const swap = swapSnapshotOf(answer);
    const key = s?.key ?? idempotencyKey(reference, attempt, 'swap');
    this.record({ t: 'swap', phase: 'created', currency, reference, attempt, key, swap, at: this.send.at() });
    return swap;
  }

  /** Step 4: a REJECTED swap stops its currency (refused); else the destination wallet must show the credit (halt). */
  private async credit(p: SwapProposal, swap: SwapSnapshot): Promise<SwapFunding> {
    if (swap.status === 'REJECTED')
      return stop(
        p,
        false,
        'SWAP_REJECTED',
        `the ${p.currency} swap ${swap.id} was REJECTED by the service: no ${p.currency} row was sent`,
      );
    let balance: Dec | undefined;
    try {
      const wallets = (await this.ctx.client.listWallets()).data;
      const w = wallets.find((x) => x.walletId === p.destinationWalletId) ?? wallets.find((x) => x.currency === p.currency);
      // (a listing without a balance: the service's INSUFFICIENT_FUNDS decides, as for any row)
      balance = w ? (w.balance === undefined ? undefined : fromApi(w.balance)) : new Dec(0);
    } catch (e) {
      return unreachable(p, 'the wallets', e);
    }
    const need = this.ctx.need?.(p.currency);
    if (balance === undefined || need === undefined || !balance.lessThan(need)) return { currency: p.currency, funded: true, swap };
    // Not credited: reversed since (REJECTED, spec §3), or not showing yet. The swap says which.
    const now = await this.ctx.client.getSwap(swap.id).catch(() => undefined);
    if (now && now.status !== swap.status) {
      const read = swapSnapshotOf(now);
      this.record({ t: 'swap', phase: 'status', currency: p.currency, reference: p.reference, swap: read, at: this.send.at() });
      if (read.status === 'REJECTED') return this.credit(p, read);
    }
    return stop(
      p,
      true,
      'SWAP_CREDIT_NOT_SHOWN',
      `the swap's credit does not show yet: the ${p.currency} wallet holds ${formatAmount(balance, p.currency)}, ` +
        `its rows need ${formatAmount(need, p.currency)} (swap ${swap.id}, ${swap.status}); resume later`,
    );
  }

  /** The batch's swap with this reference in the swaps list (spec §4.8); nothing is sent without looking first. */
  private async find(p: SwapProposal, fresh: boolean): Promise<Found> {
    try {
      return { swap: (await this.listed(fresh)).get(p.reference) };
    } catch (e) {
      return { stopped: unreachable(p, 'the swaps list', e) };
    }
  }

  /**
   * The swaps of the wanted references, 100 a page until each is seen, or the list ends, or the
   * pages (newest first) reach below the batch's first run: its swaps cannot be older. The first
   * reading serves every proposal; `fresh` reads again.
   */
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
    if (!this.pairs || reread) this.pairs = this.ctx.client.listPairs().then((r) => r.data);
    return this.pairs;
  }

  private state(currency: string): SwapState | undefined {
    return this.ctx.session.folded.swaps.get(currency);
  }

  /** A swap line, fsynced, and folded into the batch's states. */
  private record(e: SwapEvent): void {
    record(this.ctx.session, e, { sync: true });
  }
}

/** A currency's funding stopped: its rows NOT_SENT with `error`; `halt`: the service unreachable or an outcome not settled (resume is safe), else refused. */
const stop = (p: SwapProposal, halt: boolean, code: string, message: string): Stopped => ({
  currency: p.currency,
  funded: false,
  halt,
  error: { code, message },
});

function unreachable(p: SwapProposal, what: string, e: unknown): Stopped {
  return stop(
    p,
    true,
    'SERVICE_UNAVAILABLE',
    `${what} could not be read or sent for the ${p.currency} swap (${errorText(e)}): resume later`,
  );
}

const errorText = (e: unknown) => snapshotOfError(e).message;

/** 'Invalid payout amount' (spec §7, no code): the swap's amountToBeSent no longer matches the live rate. */
export function isStaleRate(e: unknown): boolean {
  return e instanceof PayoutApiError && e.status === 400 && e.code === undefined && e.message.includes(INVALID_PAYOUT_AMOUNT_MESSAGE);
}

/** The swap's body (spec §4.7). Field order is fixed: the same swap always gives the same text. */
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

/**
 * S5 and the recomputation (spec §7: "recompute from pairs"): the approved swapAmount converted at
 * the live rate of the approved pair, or why the swap is refused: the pair gone, its rate moved
 * further than the tolerance from the approved one, or a credit that no longer covers the
 * shortfall. The conversion is the plan's (swap.ts convertAtRate: the rate read as quoteCurrency
 * units per baseCurrency unit, spec §2 and §4.9).
 */
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
