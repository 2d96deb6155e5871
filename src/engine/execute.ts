// The row loop, rows in parallel through one client: settle an unknown outcome (same key, same bytes) | documents →
// initiate (send.ts) → PATCH the other documents. No quote: the initiate's answer carries rate and fee (spec §4.2).
// A halt or a stop starts no new row; the requests in flight are answered and journalled.
import type { EventEmitter } from 'node:events';
import pLimit from 'p-limit';
import type { PayoutAnswer } from '../client/answers.ts';
import type { PayoutClient } from '../client/client.ts';
import { PayoutApiError } from '../client/errors.ts';
import { readPages } from '../client/pages.ts';
import { LIST_MAX_LIMIT } from '../spec/codes.ts';
import type { InitiateRequest } from '../spec/schemas.ts';
import { rowState, type ErrorSnapshot, type PayoutSnapshot, type RowState } from '../journal/lines.ts';
import { fromApi, toApi, type ApiAmount, type Dec } from '../money.ts';
import type { DocumentFingerprint } from '../validation/document-files.ts';
import type { PayoutRow } from '../validation/row-schemas.ts';
import { documentUploader, type DocumentUrls } from './upload-documents.ts';
import { documentFinisher } from './finish-documents.ts';
import { idempotencyKey } from './identity.ts';
import { defined, ENGINE_STATUSES, outcomeFromState, type RowOutcome } from './outcome.ts';
import type { PreflightStep } from './preflight.ts';
import { record, recordInitiating, type BatchSession } from './session.ts';
import { utcTime } from '../text.ts';
import { sendStep, snapshotOfError, type Attempt, type RowAttempt, type SendContext } from './send.ts';
import { proveSpent, type KeyProof } from './spent.ts';
import { sleep } from '../sleep.ts';
import type { RowList } from '../files/spill.ts';

/** One initiate through the send step: the error that stops the run, or `stopped` before its `initiating` line. */
export async function sendInitiate(ctx: SendContext, a: RowAttempt, fee?: Dec): Promise<{ halt?: unknown; stopped?: boolean }> {
  const { ref, attempt, key } = a;
  const sent = await sendStep(ctx, a, {
    initiating: (stamp) =>
      recordInitiating(ctx.session, { t: 'initiating', ref, row: a.row, attempt, key, body: a.body, ...stamp }, ctx.stop),
    request: () => ctx.client.initiate(a.body, { idempotencyKey: key }),
    failed: (t, error) => ({ t, ref, attempt, key, error: t === 'conflict' ? usedBefore(error, a) : error, at: ctx.at() }),
    created: ({ payout: p, requestId, date }, sentAt) => {
      const payout = snapshotOf(p, JSON.parse(a.body) as SentPayout);
      const at = ctx.at();
      const serviceSentAt = onServiceClock(sentAt, at, date);
      if (!a.resend && createdBefore(p.createdAt, sentAt, serviceSentAt)) payout.existedBefore = p.createdAt;
      if (lacksResultValues(p) || (!a.resend && p.createdAt === undefined))
        payout.incomplete = { sentAt, fresh: !a.resend, ...(serviceSentAt ? { serviceSentAt } : {}) };
      return { t: 'created', ref, attempt, key, requestId, payout, at };
    },
  });
  if ('notSent' in sent) return sent.stopped ? { stopped: true } : { halt: sent.notSent };
  if ('answer' in sent) {
    const { id, transactionFees } = sent.answer.payout;
    const body = JSON.parse(a.body) as InitiateRequest;
    const otherWith = (fee?: ApiAmount) => otherThanSent({ ...sent.answer.payout, transactionFees: fee }, body);
    // (an answer without the fee that §2's "amount debited" may add: the planned fee, else the one the payout read gives)
    const read = async () => (await ctx.client.getPayout(id).catch(() => undefined))?.transactionFees;
    const other = transactionFees !== undefined ? otherWith(transactionFees) : otherWith(fee?.toFixed()) && otherWith(await read());
    const what = `row ${a.row} (${ref}): the service answered with payout ${id} of ${other}, not what was sent`;
    return other ? { halt: new AnswerNotAsSent(`${what}: the run stopped before another row is paid so; ask the service about it`) } : {};
  }
  return sent.verdict.halt ? { halt: sent.failed } : {};
}

/** An answered payout's (or swap's) amounts and currencies not the request's (spec §4.2); sourceAmount may add the fee (§2). */
export function otherThanSent(
  p: Pick<PayoutAnswer, 'sourceAmount' | 'sourceCurrency' | 'destinationAmount' | 'destinationCurrency' | 'transactionFees'>,
  sent: Pick<InitiateRequest, 'sourceCurrency' | 'destinationCurrency'> & { sourceAmount: ApiAmount; destinationAmount?: ApiAmount },
): string | undefined {
  const currencies = (['sourceCurrency', 'destinationCurrency'] as const).filter((k) => p[k] && p[k].trim().toUpperCase() !== sent[k]);
  const debited = [0, p.transactionFees ?? 0].map((fee) => fromApi(sent.sourceAmount).plus(fromApi(fee)));
  const amount =
    p.sourceAmount !== undefined && !debited.some((d) => d.eq(fromApi(p.sourceAmount!))) ? [`sourceAmount ${p.sourceAmount}`] : [];
  // (a swap's credit: amountToBeSent, spec §4.7)
  const [credit, asked] = [p.destinationAmount, sent.destinationAmount];
  const credited =
    credit !== undefined && asked !== undefined && !fromApi(credit).eq(fromApi(asked)) ? [`destinationAmount ${credit}`] : [];
  const other = [...amount, ...credited, ...currencies.map((k) => `${k} ${p[k]}`)];
  return other.length ? `${other.join(', ')} (sent ${sent.sourceAmount} ${sent.sourceCurrency} to ${sent.destinationCurrency})` : undefined;
}

/**
 * Whether a fresh attempt's payout existed before its `initiating` line: created under this key by someone else (spec
 * §4.2 rule 1, §2 createdAt; none: created now). On the service's clock when ours is off it (onServiceClock), so a clock
 * running ahead never makes our own payout look older; on either, at the createdAt's precision: 10:00:00Z is not before 10:00:00.500.
 */
export function createdBefore(createdAt: string | undefined, sentAt: string, serviceSentAt?: string): boolean {
  const t = utcTime(createdAt);
  if (t === undefined) return false;
  // (a createdAt cut to its precision was made up to a unit after it: on either clock)
  const unit = 10 ** (3 - Math.min(3, /:\d\d[.,](\d+)/.exec(createdAt!)?.[1]?.length ?? 0));
  return t < Math.floor(Date.parse(serviceSentAt ?? sentAt) / unit) * unit;
}

/**
 * `sentAt` on the service's clock when ours is off it by more than its answer's Date (whole seconds) allows: that Date less
 * `sentAt` to `answeredAt` on ours. Undefined when ours agrees (finer: a replay of a second ago is still seen), or undated.
 */
export function onServiceClock(sentAt: string, answeredAt: string, date: number | undefined): string | undefined {
  const [sent, answered] = [Date.parse(sentAt), Date.parse(answeredAt)];
  // (in step: the service answered, on its clock, between our sentAt and answeredAt, within the second its Date names)
  if (date === undefined || (answered >= date && sent < date + 1000)) return undefined;
  return new Date(date - (answered - sent)).toISOString();
}

/** A 409 on a first attempt (spec §4.2 rule 2): the key was used before with another body, by a batch this ledger does not hold. */
function usedBefore(e: ErrorSnapshot, a: Attempt): ErrorSnapshot {
  if (a.resend || a.attempt !== 1) return e;
  return {
    ...e,
    message:
      `reference used before with other content: the service holds this reference's key with another body (${e.message}); ` +
      'nothing was created by this run and it is never sent again. It may be paid at this account already: look it up; ' +
      'to pay this person again, give the row a new reference',
  };
}

/** The initiate body of a row (spec §4.2). Field order is fixed: the same row always gives the same text. */
export function initiateBody(p: PayoutRow, supportingDocument?: string): InitiateRequest {
  const body: InitiateRequest = {
    sourceAmount: toApi(p.sourceAmount),
    sourceCurrency: p.sourceCurrency,
    destinationCurrency: p.destinationCurrency,
    destinationCountryCode: p.destinationCountryCode,
    method: p.method,
    beneficiary: p.beneficiary,
    narration: p.narration,
  };
  if (supportingDocument) body.supportingDocument = supportingDocument;
  if (p.remitterAddress) body.remitterAddress = p.remitterAddress;
  return body;
}

// ---- the created payout as the journal keeps it. An answer with an id and a status is created, whatever else is missing
// (spec §4.2 promises few fields); the rest, the fee above all (rule 8), is read after the rows (completeCreated) or next run.

/** The request's own values, for what the answer does not repeat. */
type SentPayout = Pick<PayoutSnapshot, 'sourceAmount' | 'sourceCurrency' | 'destinationCurrency'>;

const RESULT_FIELDS = ['payoutRef', 'transactionFees', 'destinationAmount', 'exchangeRate', 'sourceAmount'] as const;
const lacksResultValues = (p: PayoutAnswer): boolean => RESULT_FIELDS.some((k) => p[k] === undefined);

/**
 * Created payouts whose answer lacked what the results show (or a fresh attempt's createdAt), read from the payout list
 * (spec §4.4) or one GET each, journalled whole (`completed`). Never throws: what cannot be read now, the next run reads.
 * Returns the first one read not as sent (the run halts as for an answer).
 */
export async function completeCreated({ client, session, at }: SendContext): Promise<string | undefined> {
  const pending = [...session.folded.rows.values()].filter((s) => s.phase === 'created' && s.payout?.incomplete);
  if (!pending.length) return;
  const wanted = new Set(pending.map((s) => s.payout!.id));
  const fetch = (page: number) => client.listPayouts({ page, limit: LIST_MAX_LIMIT });
  // (a list the service refuses: one GET each below; none while the service is not working)
  const r = await readPages({ fetch, wanted, what: 'payouts' }).catch((e: unknown) => (notWorking(e) ? 'stop' : undefined));
  if (r === 'stop') return;
  const listed = new Map((r?.items ?? []).map((item) => [item.id, item]));
  let notAsSent: string | undefined;
  for (const s of pending) {
    const { incomplete, ...known } = s.payout!;
    const read = listed.get(known.id) ?? (await client.getPayout(known.id).catch((e: unknown) => (notWorking(e) ? 'stop' : undefined)));
    if (read === 'stop') break;
    if (read?.id !== known.id) continue;
    const other = listedOtherThan(read, known);
    notAsSent ??=
      other && `row ${s.row} (${s.ref}): the service now shows payout ${known.id} of ${other}, not what was sent; ask the service about it`;
    // (a list item carries no documents: the count stays the initiate's)
    const payout: PayoutSnapshot = { ...known, ...defined(snapshotOf(read, known)), documents: known.documents };
    if (incomplete!.fresh && createdBefore(read.createdAt, incomplete!.sentAt, incomplete!.serviceSentAt))
      payout.existedBefore = read.createdAt;
    record(session, { t: 'completed', ref: s.ref, payoutId: known.id, payout, at: at() }, { sync: true });
  }
  return notAsSent;
}

/** otherThanSent of a payout read later, against the journalled answer (as sent, its sourceAmount that sent or with its fee). */
function listedOtherThan(read: PayoutAnswer, k: PayoutSnapshot): string | undefined {
  const [sourceCurrency, destinationCurrency] = [k.sourceCurrency.trim().toUpperCase(), k.destinationCurrency.trim().toUpperCase()];
  const other = (sourceAmount: ApiAmount) => otherThanSent(read, { sourceAmount, sourceCurrency, destinationCurrency });
  const net = fromApi(k.sourceAmount).minus(fromApi(k.transactionFees ?? 0));
  return other(net.toFixed()) && other(k.sourceAmount);
}

const notWorking = (e: unknown): boolean => e instanceof PayoutApiError && e.serviceTrouble;

function snapshotOf(p: PayoutAnswer, sent: SentPayout): PayoutSnapshot {
  const { id, status, payoutRef, destinationAmount, transactionFees, exchangeRate } = p;
  // (§2's "amount debited" may add the fee: the amount sent is kept, so that the fee counts once; no fee: read later)
  const debit =
    p.sourceAmount !== undefined &&
    (transactionFees === undefined || fromApi(p.sourceAmount).eq(fromApi(sent.sourceAmount).plus(fromApi(transactionFees))));
  return {
    id,
    status,
    sourceAmount: debit ? sent.sourceAmount : (p.sourceAmount ?? sent.sourceAmount),
    sourceCurrency: p.sourceCurrency ?? sent.sourceCurrency,
    destinationCurrency: p.destinationCurrency ?? sent.destinationCurrency,
    documents: p.supportingDocuments?.length ?? 0,
    ...defined({ payoutRef, destinationAmount, transactionFees, exchangeRate, updatedAt: (p.updatedAt ?? p.createdAt) || undefined }),
  };
}

export type EngineEvent =
  | { type: 'row-start'; rowNumber: number; reference: string; attempt: number; settling: boolean }
  | { type: 'row-done'; rowNumber: number; reference: string; outcome: RowOutcome; noDocument?: true }
  | { type: 'halted'; reason: string }
  | { type: 'settle-pass'; rows: number }
  | { type: 'preflight'; step: PreflightStep };

/** The progress of a run, as a stream: each EngineEvent is emitted as `event`. */
export type EngineEvents = EventEmitter<{ event: [EngineEvent] }>;

/** How a run goes, apart from what it may send (the guards). */
export interface RunSettings {
  mergeDocuments: boolean;
  concurrency?: number;
  /** Aborted (Ctrl-C, SIGTERM): no new row starts; rows in flight finish. */
  stop?: AbortSignal;
  events?: EngineEvents;
  /** Wait before the first request when the last run was killed (default 1100 ms). */
  crashWaitMs?: number;
  /** Wait before each resend pass for rows still unknown at the end. */
  settleDelayMs?: number;
  /** --swap-rate-tolerance as a fraction (default 0.01). */
  swapRateTolerance?: Dec;
}

export interface ExecuteOptions {
  client: PayoutClient;
  session: BatchSession;
  /** 'run': a row refused before stays refused (FAILED_TO_SEND); 'retry': it goes again under attempt + 1. */
  mode: 'run' | 'retry';
  settings: RunSettings;
  /** What validation saw of each document: the upload reads the same file or none. */
  documents?: Map<string, DocumentFingerprint>;
  /** The plan's fee of each row: the wallet read of a refused row's retry (spent.ts). */
  fees?: ReadonlyMap<number, Dec>;
  /** Created rows whose payouts still lack documents: attached after the rows to send. */
  finish?: string[];
  /** retry --resend-failed: a `resend` line, then a new attempt (the fold refuses the line unless refunded). */
  resend?: Set<string>;
  /** Rows settling an unknown outcome resent as first sent, though edited since (pipeline.ts planStage): no new attempt this run. */
  asFirstSent?: Set<number>;
  /** Rows waiting for their wallet's swap, taken last: `funded`'s reason leaves a row NOT_SENT (`notAsSent`: halts the run). */
  before?: {
    waits: (row: PayoutRow) => boolean;
    funded: (row: PayoutRow) => Promise<{ currency: string; error: ErrorSnapshot; notAsSent?: boolean } | undefined>;
  };
  /** A swap answered not as sent, told at once: no row starts after it, as after a payout's. */
  halts?: Promise<string>;
  /** Why a row may not start a payout now (its sanctions clearance expired): left not sent. */
  held?: (row: PayoutRow) => string | undefined;
}

/** Thrown inside a row when the run halts, or is stopped before its payout started: recorded as not sent. */
class Halt extends Error {}
class Stopped extends Error {}
/** A payout answered of another amount or currency than sent: not a transient stop, unlike the service's trouble. */
class AnswerNotAsSent extends Error {}

export const STOPPED_BEFORE_ROW: ErrorSnapshot = {
  code: 'NOT_SENT',
  message: 'not sent: the run was stopped on request (Ctrl-C) before this payout started; run the same command again to send it',
};

/** Every row's life; `halted`: the service is unreachable or refused the key (exit 4); `stopped`: the user asked to stop. */
export const executeRows = (rows: RowList<PayoutRow>, o: ExecuteOptions) => new RowLoop(o).run(rows);

class RowLoop {
  /** The outcomes of rows this run did not leave created (a created row's is its journal state's). */
  readonly outcomes = new Map<number, RowOutcome>();
  /** retry of a refused row: what key n showed before a new key (spent.ts). */
  private readonly keyProofs: KeyProof[] = [];
  private created = 0;
  private halted: string | undefined;
  private answerNotAsSent = false;
  /** Aborted by an answer not as sent: no `initiating` line after it, not even one waiting on the ledger's lock. */
  private readonly notAsSent = new AbortController();
  private readonly send: SendContext;
  private readonly limit: ReturnType<typeof pLimit>;
  private readonly attachPending: (s: RowState, fresh: boolean) => Promise<void>;
  private readonly documentUrls: DocumentUrls;
  private readonly emit: (e: EngineEvent) => void;

  constructor(private readonly o: ExecuteOptions) {
    const { client, session, settings } = o;
    const stop = settings.stop ? AbortSignal.any([settings.stop, this.notAsSent.signal]) : this.notAsSent.signal;
    this.send = { client, session, at: () => new Date().toISOString(), stop };
    this.emit = (e) => settings.events?.emit('event', e);
    this.limit = pLimit(Math.max(1, settings.concurrency ?? 8));
    this.documentUrls = documentUploader({ client, session, mergeDocuments: settings.mergeDocuments, fingerprints: o.documents });
    this.attachPending = documentFinisher({
      client,
      journal: (e) => record(session, e),
      at: this.send.at,
      failure: (e) => (notWorking(e) ? this.halt(e) : snapshotOfError(e)),
    });
  }

  /** Every row, created rows' missing documents, then two resend passes for outcomes still unknown. */
  async run(rows: RowList<PayoutRow>) {
    const { settings } = this.o;
    let running = true;
    void this.o.halts?.then((why) => running && this.halting(new AnswerNotAsSent(why)));
    await Promise.all([
      this.each(rows, (p) => this.row(p)),
      this.each(this.o.finish ?? [], (ref) => this.attachPending(this.state(ref), false)),
    ]);
    for (let pass = 0; pass < 2 && this.going(); pass++) {
      const unknown = rows.filter((p) => this.outcomes.get(p.rowNumber)?.status === ENGINE_STATUSES.UNKNOWN_OUTCOME);
      if (!unknown.length) break;
      this.emit({ type: 'settle-pass', rows: unknown.length });
      await sleep(settings.settleDelayMs ?? 1000);
      await this.each(unknown, (p) => this.row(p));
    }
    const listed = this.going() ? await completeCreated(this.send) : undefined;
    if (listed) this.halting(new AnswerNotAsSent(listed));
    running = false;
    const { outcomes, keyProofs, created, halted, answerNotAsSent } = this;
    return { outcomes, keyProofs, created, halted, answerNotAsSent, stopped: !!settings.stop?.aborted };
  }

  /** The life of one row, from whatever its journal says (I2: an unknown outcome is settled first). */
  private async row(p: PayoutRow): Promise<void> {
    const ref = p.reference;
    let s = this.state(ref);
    if (s.phase === 'created' && this.o.resend?.has(ref)) {
      record(this.o.session, { t: 'resend', ref, payoutId: s.payout!.id, at: this.send.at() }, { sync: true });
      s = this.state(ref);
    }
    if (s.phase === 'created') await this.attachPending(s, false);
    else if (s.phase === 'initiating' || s.phase === 'unknown') {
      this.emit({ type: 'row-start', rowNumber: p.rowNumber, reference: ref, attempt: s.attempt, settling: true });
      s = await this.initiate({ ...s, row: p.rowNumber, key: s.key!, body: s.body!, resend: true });
      // I3: only the service's own refusal of the settled attempt lets it go again, and only in retry, and
      // not with the body an edit replaced; a 409 to a body sent after a refusal under the same key (its answer lost): the proof goes on.
      const r = s.phase === 'conflict' && s.refused;
      const again = this.o.mode === 'retry' && !this.o.asFirstSent?.has(p.rowNumber);
      if (s.phase === 'rejected' && again) await this.newAttempt(p, s);
      else if (r && r.key === s.key && r.body !== s.body && again)
        await this.newAttempt(p, { ...s, phase: 'rejected', body: r.body, error: r.error });
    } else if (s.phase === 'none' || (s.phase === 'rejected' && this.o.mode === 'retry')) {
      const held = this.o.held?.(p);
      if (held) return this.done(p, { code: ENGINE_STATUSES.HELD_SCREENING, message: held });
      await this.newAttempt(p, s);
    }
    this.done(p);
  }

  /** Documents → initiate → PATCH. After a refusal at attempt n, a new key only once key n is proven spent (spent.ts). */
  private async newAttempt(p: PayoutRow, s: RowState): Promise<void> {
    const ref = p.reference;
    // (a refusal of a sent body; not a refunded failure reopened, nor documents that failed first)
    const refused = s.phase === 'rejected' && s.body !== undefined && s.attempt > 0;
    let attempt = refused ? s.attempt : s.attempt + 1;
    this.emit({ type: 'row-start', rowNumber: p.rowNumber, reference: ref, attempt, settling: false });
    const urls = await this.documentUrls(p).catch((e: unknown) => {
      if (notWorking(e)) this.halt(e);
      const key = idempotencyKey(ref, attempt);
      record(this.o.session, { t: 'rejected', ref, attempt, key, error: snapshotOfError(e), at: this.send.at() }, { sync: true });
    });
    if (!urls) return;
    if (this.o.settings.stop?.aborted) throw new Stopped();
    const attach = (n: number) =>
      urls.length &&
      record(this.o.session, { t: 'attach', ref, attempt: n, supportingDocument: urls[0]!, documents: urls.slice(1), at: this.send.at() });
    const body = JSON.stringify(initiateBody(p, urls[0]));
    if (refused) {
      attach(attempt);
      const { go, proof } = await proveSpent(
        { send: this.send, state: (r) => this.state(r), fees: this.o.fees, initiate: (a) => this.initiate(a) },
        { rowNumber: p.rowNumber, payout: p, body },
        s,
      );
      this.keyProofs.push(proof);
      if (!go) return;
      attempt++;
    }
    attach(attempt);
    await this.initiate({ ref, row: p.rowNumber, attempt, key: idempotencyKey(ref, attempt), body, resend: false });
  }

  /** The send step, then the documents a payout it created still lacks. */
  private async initiate(a: RowAttempt): Promise<RowState> {
    // (after an answer not as sent no payout starts, not even one of a row started before it)
    if (this.answerNotAsSent) throw new Halt(this.halted);
    const { halt, stopped } = await sendInitiate(this.send, a, this.o.fees?.get(a.row));
    if (stopped) throw this.answerNotAsSent ? new Halt(this.halted) : new Stopped();
    if (halt) this.halt(halt);
    const s = this.state(a.ref);
    if (s.phase === 'created') await this.attachPending(s, true);
    return this.state(a.ref);
  }

  /** `step` for each row (or created row's reference) through the limit, taken as it frees (never a promise per row). */
  private async each<T extends PayoutRow | string>(list: RowList<T>, step: (item: T) => Promise<void>): Promise<void> {
    const guarded = async (item: T) => {
      if (!this.going()) return;
      try {
        await step(item);
      } catch (e) {
        if (!(e instanceof Halt || e instanceof Stopped)) throw e;
        const code = this.answerNotAsSent ? 'NOT_SENT' : 'SERVICE_UNAVAILABLE';
        const why = e instanceof Halt ? { code, message: `not sent: ${e.message}` } : STOPPED_BEFORE_ROW;
        if (typeof item !== 'string') this.done(item, why);
      }
    };
    const { before } = this.o;
    const waits = (item: T) => !!before && typeof item !== 'string' && before.waits(item);
    const go = async (item: T) => {
      const why = waits(item) ? await before!.funded(item as PayoutRow) : undefined;
      // (a swap answered not as sent: no row starts after it, as after a payout's; a row of another currency is held as those)
      if (why?.notAsSent && !this.answerNotAsSent) this.halting(new AnswerNotAsSent(why.error.message));
      const held = why && why.currency !== (item as PayoutRow).sourceCurrency;
      if (held) return this.done(item as PayoutRow, { code: 'NOT_SENT', message: `not sent: ${this.halted}` });
      return why ? this.done(item as PayoutRow, why.error) : this.limit(() => guarded(item));
    };
    // (the rows waiting for a swap once the others are taken, when it is known)
    const pass = async (take: boolean) => {
      let next = 0;
      const worker = async () => {
        while (next < list.length) {
          const item = list.at(next++)!;
          if (waits(item) === take) await go(item);
        }
      };
      await Promise.all(Array.from({ length: this.limit.concurrency }, worker));
    };
    await pass(false);
    if (before) await pass(true);
  }

  private going(): boolean {
    return !this.halted && !this.o.settings.stop?.aborted;
  }

  private state(ref: string): RowState {
    return rowState(this.o.session.folded, ref);
  }

  /** Records the row's outcome as its journal now says (`notSent`: why, when halted, stopped or held first). */
  private done(p: PayoutRow, notSent?: ErrorSnapshot): void {
    const s = this.state(p.reference);
    const outcome = outcomeFromState(s, { status: ENGINE_STATUSES.NOT_SENT, documents: [], ...(notSent ? { error: notSent } : {}) });
    if (s.phase === 'created') {
      this.outcomes.delete(p.rowNumber); // (unknown in an earlier pass)
      this.created++;
    } else this.outcomes.set(p.rowNumber, outcome);
    const noDocument = !p.withdrawal && !p.documents.length ? { noDocument: true as const } : {};
    this.emit({ type: 'row-done', rowNumber: p.rowNumber, reference: p.reference, outcome, ...noDocument });
  }

  /** Stops the run: no new row starts; throws out of the current row. */
  private halt(e: unknown): never {
    throw new Halt(this.halting(e));
  }

  /** No new row starts; the reason the run says. */
  private halting(e: unknown): string {
    // (a payout answered not as sent is said whatever stopped the run first: running again would pay another row so)
    if (e instanceof AnswerNotAsSent && !this.answerNotAsSent) [this.halted, this.answerNotAsSent] = [e.message, true];
    if (this.answerNotAsSent) this.notAsSent.abort();
    this.halted ??= snapshotOfError(e).message;
    this.emit({ type: 'halted', reason: this.halted });
    return this.halted;
  }
}
