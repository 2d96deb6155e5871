// The send step: the one place a payout is created.
//
//   key → `initiating` journalled → the request → classify the answer → the answer journalled
//
// I1  a key is deterministic (identity.ts) and journalled, with the exact body, before the request
//     leaves (fsynced, under the ledger's lock while this run's reservation holds: session.ts)
// I2  an unknown outcome is resent only with the journalled key and byte-identical body
// I3  only the service's own refusal lets the row go again, under attempt + 1 and a new key
// I5  409 IDEMPOTENCY_KEY_CONFLICT is CONFLICT, never resent under a new key
import type { PayoutAnswer } from '../client/answers.ts';
import type { PayoutClient } from '../client/client.ts';
import { PayoutApiError } from '../client/errors.ts';
import type { ErrorSnapshot, PayoutSnapshot } from '../journal/rows.ts';
import { toApi } from '../money.ts';
import type { InitiateRequest } from '../interface/schemas.ts';
import type { PayoutRow } from '../validation/schemas.ts';
import { record, recordInitiating, type BatchSession } from './session.ts';

/** One initiate of a row: a fresh attempt (a new key) or a resend of the journalled one. */
export interface Attempt {
  ref: string;
  row: number;
  attempt: number;
  key: string;
  /** The exact JSON text sent (a resend: the journalled text, byte for byte). */
  body: string;
  resend: boolean;
}

export interface SendContext {
  client: PayoutClient;
  session: BatchSession;
  /** Now, as the journal writes it. */
  at: () => string;
}

/** What an initiate that did not create a payout means for its row. */
export interface Verdict {
  /** The journal line that records it; none when the journal already says all (the row is resent as it is). */
  line?: 'unknown' | 'conflict' | 'rejected';
  /** The run stops: the service cannot be used now. Resuming is safe. */
  halt: boolean;
}

/** Classifies a failed initiate (pure). Only the service's own refusal is `rejected` (I3). */
export function classify(e: unknown, resend: boolean): Verdict {
  // Not the client's error: we cannot tell whether the request left, so the outcome is unknown.
  if (!(e instanceof PayoutApiError)) return { line: 'unknown', halt: false };
  if (e.outcome === 'unknown') return { line: 'unknown', halt: e.kind === 'network' || e.kind === 'timeout' };
  if (e.conflict) return { line: 'conflict', halt: false };
  // The service did not act and cannot be used now: the row stays as journalled and is resent.
  if (e.serviceTrouble) return { halt: true };
  // Refused here, never sent. On a resend that says nothing of the earlier attempt, which may
  // have created the payout: the row stays unknown, and no new attempt may follow it.
  if (e.notSent && resend) return { line: 'unknown', halt: false };
  return { line: 'rejected', halt: false };
}

/**
 * Sends one initiate and journals what it means. Returns the error that stops the run, if any
 * (the row is then as journalled: resuming resends it with the same key and body).
 */
export async function sendInitiate(ctx: SendContext, a: Attempt): Promise<{ halt?: unknown }> {
  const { client, session, at } = ctx;
  const { ref, attempt, key } = a;
  if (!a.resend) {
    try {
      await recordInitiating(session, { t: 'initiating', ref, row: a.row, attempt, key, body: a.body, at: at() });
    } catch (e) {
      return { halt: e }; // the reservation is gone or the lock failed: nothing was sent
    }
  }
  let answer: { payout: PayoutAnswer; requestId: string };
  try {
    answer = await client.initiate(a.body, { idempotencyKey: key });
  } catch (e) {
    const v = classify(e, a.resend);
    if (v.line) record(session, { t: v.line, ref, attempt, key, error: snapshotOfError(e, a.resend), at: at() }, { sync: true });
    return v.halt ? { halt: e } : {};
  }
  const payout = snapshotOf(await completeCreated(client, answer.payout), JSON.parse(a.body) as SentPayout);
  record(session, { t: 'created', ref, attempt, key, requestId: answer.requestId, payout, at: at() }, { sync: true });
  return {};
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

/** A step of a row that failed here, before any request: recorded on the row with its code. */
export class RowStepError extends Error {
  override readonly name = 'RowStepError';
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/** An error as the journal and the results file keep it. A resend refused here says so (NOT_RESENT). */
export function snapshotOfError(e: unknown, resend = false): ErrorSnapshot {
  if (e instanceof RowStepError) return { code: e.code, message: e.message };
  if (!(e instanceof PayoutApiError)) return { code: 'LOCAL_ERROR', message: e instanceof Error ? e.message : String(e) };
  if (resend && e.notSent)
    return {
      code: 'NOT_RESENT',
      message:
        `not resent: ${e.message}. The earlier attempt under this key may have created the payout, so its outcome ` +
        'stays unknown and no new key is used; run `status` or ask the service about this reference',
      requestId: e.requestId,
    };
  const fields = e.fieldErrors.length
    ? ` (${e.fieldErrors
        .slice(0, 3)
        .map((f) => `${f.field}: ${f.message}`)
        .join('; ')})`
    : '';
  return {
    status: e.status,
    code: e.code ?? (e.status ? `HTTP_${e.status}` : e.kind.toUpperCase().replace(/-/g, '_')),
    message: e.message + fields,
    requestId: e.requestId,
  };
}

// ---- the created payout as the journal keeps it
//
// Spec §4.2 promises only id, status PENDING, payoutRef, sourceAmount, destinationAmount and
// exchangeRate on the initiate answer ("full response field list: not shown"). An answer with an
// id and a status means the payout exists: it is recorded as created, whatever else is missing.
// What the results file needs and the answer lacks (the fee above all: rule 8 says the applied fee
// is in transactionFees) is read once with get-payout; if that read fails, the row is still created
// and the gaps stay empty until `status` reads the payout.

/** The request's own values, for what the answer does not repeat. */
interface SentPayout {
  sourceAmount: number;
  sourceCurrency: string;
  destinationCurrency: string;
}

const lacksResultValues = (p: PayoutAnswer): boolean =>
  p.payoutRef === undefined ||
  p.transactionFees === undefined ||
  p.destinationAmount === undefined ||
  p.exchangeRate === undefined ||
  p.sourceAmount === undefined;

const defined = <T extends object>(o: T): Partial<T> =>
  Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;

/** The initiate answer completed by get-payout when it lacks what the results show. Never throws. */
async function completeCreated(client: PayoutClient, p: PayoutAnswer): Promise<PayoutAnswer> {
  if (!lacksResultValues(p)) return p;
  try {
    const read = await client.getPayout(p.id);
    return read.id === p.id ? { ...p, ...defined(read) } : p;
  } catch {
    return p;
  }
}

function snapshotOf(p: PayoutAnswer, sent: SentPayout): PayoutSnapshot {
  const s: PayoutSnapshot = {
    id: p.id,
    status: p.status,
    sourceAmount: p.sourceAmount ?? sent.sourceAmount,
    sourceCurrency: p.sourceCurrency ?? sent.sourceCurrency,
    destinationCurrency: p.destinationCurrency ?? sent.destinationCurrency,
    documents: p.supportingDocuments?.length ?? 0,
  };
  if (p.payoutRef !== undefined) s.payoutRef = p.payoutRef;
  if (p.destinationAmount !== undefined) s.destinationAmount = p.destinationAmount;
  if (p.transactionFees !== undefined) s.transactionFees = p.transactionFees;
  if (p.exchangeRate !== undefined) s.exchangeRate = p.exchangeRate;
  if (p.updatedAt ?? p.createdAt) s.updatedAt = p.updatedAt ?? p.createdAt;
  return s;
}
