// The row loop: every row to send goes through its life, rows in parallel through the one client
// (which keeps the rate limit), a row's own steps in order:
//
//   settle an unknown outcome (same key, same bytes) | quote → upload documents → initiate
//   → PATCH the other documents
//
// The journal is the state: each step reads the row's phase from the fold, and the send step
// (send.ts) is the only code that creates a payout. A run that cannot go on (the key refused, the
// service unreachable) halts: rows not started stay as journalled, and resuming is safe.
import pLimit from 'p-limit';
import type { PayoutClient } from '../client/client.ts';
import { PayoutApiError } from '../client/errors.ts';
import { rowState, type RowState } from '../journal/rows.ts';
import { toApi } from '../money.ts';
import type { DocumentFingerprint } from '../validation/documents.ts';
import type { PayoutRow } from '../validation/schemas.ts';
import { startCheckpoints } from './checkpoints.ts';
import { uploadDocuments } from './documents.ts';
import { documentFinisher } from './finish-documents.ts';
import { idempotencyKey } from './identity.ts';
import { ENGINE_STATUSES, outcomeFromState, type RowOutcome } from './outcome.ts';
import { initiateBody, sendInitiate, snapshotOfError, type Attempt, type SendContext } from './send.ts';
import { record, type BatchSession } from './session.ts';

export type EngineEvent =
  | { type: 'row-start'; rowNumber: number; reference: string; attempt: number; settling: boolean }
  | {
      type: 'row-done';
      rowNumber: number;
      reference: string;
      status: string;
      key?: string;
      requestId?: string;
      payoutId?: string;
      errorCode?: string;
      message?: string;
    }
  | { type: 'halted'; reason: string }
  | { type: 'settle-pass'; rows: number };

export interface WorkItem {
  rowNumber: number;
  payout: PayoutRow;
}

export interface ExecuteOptions {
  client: PayoutClient;
  /** The batch's journal, its fold, and this run's reservation in the ledger (session.ts). */
  session: BatchSession;
  batchId: string;
  /** 'run': a row refused before stays refused (FAILED_TO_SEND); 'retry': it goes again under attempt + 1. */
  mode: 'run' | 'retry';
  quote: boolean;
  mergeDocuments: boolean;
  /** What validation saw of each document (absolute path); the upload reads the same file or none. */
  documents?: Map<string, DocumentFingerprint>;
  concurrency?: number;
  onEvent?: (e: EngineEvent) => void;
  /** Aborted: no new row starts (rows in flight finish, so no outcome is left unknown by us). */
  stop?: AbortSignal;
  /** Rewrites the results file with the outcomes so far, every `checkpointMs` (checkpoints.ts). */
  checkpoint?: () => Promise<void>;
  checkpointMs?: number;
  /** Resend passes for rows still unknown at the end: how many and how long to wait first. */
  settlePasses?: number;
  settleDelayMs?: number;
  /** Created rows whose payouts still lack documents: attached after the rows to send (finish-documents.ts). */
  finish?: FinishItem[];
  now?: () => Date;
  /**
   * retry --resend-failed: references whose payout failed after creation and whose refund is
   * journalled. Such a row gets a `resend` line, then a new attempt (never while the payout is in
   * progress or paid, nor before its refund: the fold refuses the line otherwise).
   */
  resend?: Set<string>;
}

/** A row created by an earlier run whose payout still lacks documents (documentsToAttach). */
export interface FinishItem {
  rowNumber: number;
  reference: string;
}

export interface ExecuteResult {
  outcomes: Map<number, RowOutcome>;
  /** The run stopped early: the service is unreachable or refused the key (exit 4). */
  halted?: string;
  /** The user asked to stop. */
  stopped: boolean;
}

/** Thrown inside a row when the run halts; the loop catches it and records the row as not sent. */
class Halt extends Error {}

export async function executeRows(items: WorkItem[], o: ExecuteOptions): Promise<ExecuteResult> {
  return new RowLoop(o).run(items);
}

class RowLoop {
  readonly outcomes = new Map<number, RowOutcome>();
  private halted: string | undefined;
  private readonly send: SendContext;
  private readonly limit: ReturnType<typeof pLimit>;
  private readonly attachPending: (s: RowState, fresh: boolean) => Promise<void>;

  constructor(private readonly o: ExecuteOptions) {
    const now = o.now ?? (() => new Date());
    this.send = { client: o.client, session: o.session, at: () => now().toISOString() };
    this.limit = pLimit(Math.max(1, o.concurrency ?? 8));
    this.attachPending = documentFinisher({
      client: o.client,
      journal: (e) => record(o.session, e),
      at: this.send.at,
      failure: (e) => {
        if (e instanceof PayoutApiError && e.serviceTrouble) this.halt(e);
        return snapshotOfError(e);
      },
    });
  }

  /** Every row, created rows' missing documents, then resend passes for outcomes still unknown. */
  async run(items: WorkItem[]): Promise<ExecuteResult> {
    const o = this.o;
    const stopCheckpoints = o.checkpoint ? startCheckpoints(o.checkpoint, o.checkpointMs ?? 3000) : undefined;
    try {
      await Promise.all([this.each(items, (i) => this.row(i)), this.each(o.finish ?? [], (f) => this.finishDocuments(f))]);
      for (let pass = 0; pass < (o.settlePasses ?? 2) && this.going(); pass++) {
        const unknown = items.filter((i) => this.outcomes.get(i.rowNumber)?.status === ENGINE_STATUSES.UNKNOWN_OUTCOME);
        if (!unknown.length) break;
        o.onEvent?.({ type: 'settle-pass', rows: unknown.length });
        await new Promise((r) => setTimeout(r, o.settleDelayMs ?? 1000));
        await this.each(unknown, (i) => this.row(i));
      }
    } finally {
      await stopCheckpoints?.();
    }
    return { outcomes: this.outcomes, halted: this.halted, stopped: !!o.stop?.aborted };
  }

  /** The life of one row, from whatever its journal says (I2: an unknown outcome is settled first). */
  private async row(item: WorkItem): Promise<void> {
    const ref = item.payout.reference;
    let s = this.state(ref);
    if (s.phase === 'created' && this.o.resend?.has(ref)) {
      record(this.o.session, { t: 'resend', ref, payoutId: s.payout!.id, at: this.send.at() }, { sync: true });
      s = this.state(ref);
    }
    if (s.phase === 'created') await this.attachPending(s, false);
    else if (s.phase === 'initiating' || s.phase === 'unknown') {
      this.o.onEvent?.({ type: 'row-start', rowNumber: item.rowNumber, reference: ref, attempt: s.attempt, settling: true });
      s = await this.initiate({ ref, row: item.rowNumber, attempt: s.attempt, key: s.key!, body: s.body!, resend: true });
      // I3: only the service's own refusal of the settled attempt opens a new one, and only in retry.
      if (s.phase === 'rejected' && this.o.mode === 'retry') await this.newAttempt(item, s.attempt + 1);
    } else if (s.phase === 'none' || (s.phase === 'rejected' && this.o.mode === 'retry')) {
      await this.newAttempt(item, s.attempt + 1);
    }
    this.done(item);
  }

  /** A new attempt under a new key: quote → documents → initiate → PATCH the other documents. */
  private async newAttempt(item: WorkItem, attempt: number): Promise<void> {
    const p = item.payout;
    const ref = p.reference;
    const key = idempotencyKey(this.o.batchId, ref, attempt);
    this.o.onEvent?.({ type: 'row-start', rowNumber: item.rowNumber, reference: ref, attempt, settling: false });
    let urls: string[];
    try {
      if (this.o.quote) await this.quote(p, attempt);
      const { client, session, mergeDocuments } = this.o;
      urls = await uploadDocuments(p, { client, session, mergeDocuments, fingerprints: this.o.documents });
    } catch (e) {
      if (e instanceof PayoutApiError && e.serviceTrouble) this.halt(e);
      record(this.o.session, { t: 'rejected', ref, attempt, key, error: snapshotOfError(e), at: this.send.at() }, { sync: true });
      return;
    }
    // What the payout is to get by PATCH once created: if this run stops first, the next one does it.
    if (urls.length) record(this.o.session, { t: 'attach', ref, attempt, documents: urls.slice(1), at: this.send.at() });
    const body = JSON.stringify(initiateBody(p, urls[0]));
    await this.initiate({ ref, row: item.rowNumber, attempt, key, body, resend: false });
  }

  /** The send step, then the documents a payout it created still lacks. */
  private async initiate(a: Attempt): Promise<RowState> {
    const { halt } = await sendInitiate(this.send, a);
    if (halt) this.halt(halt);
    const s = this.state(a.ref);
    // Right after creation the payout holds only the initiate's document: PATCH the rest.
    if (s.phase === 'created') await this.attachPending(s, true);
    return this.state(a.ref);
  }

  /** One quote per attempt (spec §4.1), journalled for the results file's quotedRate. */
  private async quote(p: PayoutRow, attempt: number): Promise<void> {
    const q = await this.o.client.quote({
      sourceAmount: toApi(p.sourceAmount),
      sourceCurrency: p.sourceCurrency,
      destinationCurrency: p.destinationCurrency,
      destinationCountryCode: p.destinationCountryCode,
      method: p.method,
    });
    const line = { rate: q.exchangeRate, fee: q.fee?.amount, totalDeductible: q.totalDeductible, destinationAmount: q.destinationAmount };
    record(this.o.session, { t: 'quote', ref: p.reference, attempt, ...line });
  }

  private async finishDocuments(f: FinishItem): Promise<void> {
    await this.attachPending(this.state(f.reference), false);
  }

  /**
   * Runs `step` for each item through the concurrency limit; after a halt or a stop no new one
   * starts. A row the halt interrupted is recorded as not sent, with the reason.
   */
  private each<T extends WorkItem | FinishItem>(list: T[], step: (item: T) => Promise<void>): Promise<void[]> {
    const guarded = async (item: T) => {
      if (!this.going()) return;
      try {
        await step(item);
      } catch (e) {
        if (!(e instanceof Halt)) throw e;
        if ('payout' in item) this.done(item, `not sent: ${e.message}`);
      }
    };
    return Promise.all(list.map((item) => this.limit(() => guarded(item))));
  }

  private going(): boolean {
    return !this.halted && !this.o.stop?.aborted;
  }

  private state(ref: string): RowState {
    return rowState(this.o.session.folded, ref);
  }

  /** Records the row's outcome as its journal now says (`haltedWith`: the run halted before it was sent). */
  private done(item: WorkItem, haltedWith?: string): void {
    const out = outcomeFromState(this.state(item.payout.reference), {
      status: ENGINE_STATUSES.NOT_SENT,
      documents: [],
      ...(haltedWith ? { error: { code: 'SERVICE_UNAVAILABLE', message: haltedWith } } : {}),
    });
    this.outcomes.set(item.rowNumber, out);
    this.o.onEvent?.({
      type: 'row-done',
      rowNumber: item.rowNumber,
      reference: item.payout.reference,
      status: out.status,
      key: out.key,
      requestId: out.requestId ?? out.error?.requestId,
      payoutId: out.payout?.id,
      errorCode: out.error?.code,
      message: out.error?.message,
    });
  }

  /** Stops the run: no new row starts; throws out of the current row. */
  private halt(e: unknown): never {
    this.halted ??= snapshotOfError(e).message;
    this.o.onEvent?.({ type: 'halted', reason: this.halted });
    throw new Halt(this.halted);
  }
}
