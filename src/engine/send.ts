// The send step, the one way money moves, for a payout's initiate (execute.ts) and a swap (swap-send.ts) alike:
//
//   key → `initiating` journalled → the request → classify the answer → the answer journalled
//
// I1  a key is deterministic (identity.ts) and journalled, with the exact body, before the request leaves
//     (fsynced, under the ledger's lock while this run's reservation holds: session.ts)
// I2  an unknown outcome is resent only with the journalled key and byte-identical body, by the API key that sent it
//     (the spec does not say whether the service keeps a key per business or per API key: under another, a new key)
// I3  only the service's own refusal lets the payment go again (a row: under a new key once the refused one is proven spent, spent.ts)
// I5  409 IDEMPOTENCY_KEY_CONFLICT is CONFLICT, never resent under a new key
import { PayoutApiError } from '../client/errors.ts';
import type { PayoutClient } from '../client/client.ts';
import type { ErrorSnapshot, JournalLine } from '../journal/lines.ts';
import { RowStepError } from './upload-documents.ts';
import { record, type BatchSession } from './session.ts';

export interface SendContext {
  client: PayoutClient;
  session: BatchSession;
  /** Now, as the journal writes it. */
  at: () => string;
  /** Aborted (Ctrl-C): no `initiating` line is written after it, so no payment starts after it. */
  stop?: AbortSignal;
}

/** One request that moves money: a fresh attempt (a new key) or a resend of the journalled one. */
export interface Attempt {
  attempt: number;
  key: string;
  /** The exact JSON text sent (a resend: the journalled text, byte for byte). */
  body: string;
  /** A resend of the journalled attempt: its `initiating` line is there already (I2). */
  resend: boolean;
  /** A resend: the fingerprint of the API key that sent it, journalled (none in an older journal: resent by any). */
  apiKeyFingerprint?: string;
}

/** A payout's attempt: its row's reference and number besides. */
export type RowAttempt = Attempt & { ref: string; row: number };

/** What one kind of money movement journals around its request, and the request itself. */
export interface Movement<A> {
  /** Journals the `initiating` line (fsynced, under the ledger's lock) with `stamp`; throws when it may not be written. */
  initiating: (stamp: { at: string; apiKeyFingerprint: string }) => Promise<void>;
  request: () => Promise<A>;
  /** The line of the service's answer. */
  created: (answer: A, sentAt: string) => JournalLine;
  /** The line of a failure, as the verdict names it (`e`: the error itself). */
  failed: (line: NonNullable<Verdict['line']>, error: ErrorSnapshot, e: unknown) => JournalLine;
}

/** What an attempt came to: answered, failed (and how), or not sent (its `initiating` line could not be written). */
export type Sent<A> = { answer: A } | { failed: unknown; verdict: Verdict } | { notSent: unknown; stopped: boolean };

/**
 * Sends one attempt and journals what it means; never throws for the request's failure. A fresh attempt's `initiating`
 * line goes first: when it cannot be written (stopped on request, the reservation gone, the lock failed), nothing is sent.
 */
export async function sendStep<A>(ctx: SendContext, a: Attempt, m: Movement<A>): Promise<Sent<A>> {
  const sentAt = ctx.at();
  if (!a.resend) {
    try {
      await m.initiating({ at: sentAt, apiKeyFingerprint: ctx.client.apiKey.fingerprint });
    } catch (e) {
      return { notSent: e, stopped: !!ctx.stop?.aborted };
    }
  }
  let answer: A;
  try {
    if (a.resend && a.apiKeyFingerprint && a.apiKeyFingerprint !== ctx.client.apiKey.fingerprint) throw otherApiKey(a.apiKeyFingerprint);
    answer = await m.request();
  } catch (e) {
    const verdict = classify(e, a.resend);
    if (verdict.line) record(ctx.session, m.failed(verdict.line, snapshotOfError(e, a.resend), e), { sync: true });
    return { failed: e, verdict };
  }
  record(ctx.session, m.created(answer, sentAt), { sync: true });
  return { answer };
}

/** I2: a resend under another API key than sent it is not sent; its outcome stays unknown. */
const otherApiKey = (sentBy: string) =>
  new RowStepError(
    'OTHER_API_KEY',
    `not resent: sent with the API key of fingerprint ${sentBy}, not this one, and the service may keep its Idempotency-Key ` +
      'per API key, so a resend under this one could pay twice. Its outcome stays unknown: run again with that key (`account` ' +
      "shows a key's fingerprint); if it is revoked, look for this row's payout (amount, beneficiary) in the payout list",
  );

/** What a request that did not succeed means for its payment. */
export interface Verdict {
  /** The journal line that records it; none when the journal already says all (it is resent as it is). */
  line?: 'unknown' | 'conflict' | 'rejected';
  /** The run stops: the service cannot be used now. Resuming is safe. */
  halt: boolean;
}

/** Classifies a failed request (pure). Only the service's own refusal is `rejected` (I3). */
export function classify(e: unknown, resend: boolean): Verdict {
  // Not the client's error: we cannot tell whether the request left, so the outcome is unknown.
  if (!(e instanceof PayoutApiError)) return { line: 'unknown', halt: false };
  // Only a 4xx not the service's own (a gateway's) lets the run go on: no answer, a 5xx past the
  // client's retries, or a 2xx this tool cannot read, and the rows after it would fare no better.
  if (e.outcome === 'unknown') return { line: 'unknown', halt: e.kind !== 'http' || (e.status ?? 0) >= 500 };
  if (e.conflict) return { line: 'conflict', halt: false };
  // The service did not act and cannot be used now: the payment stays as journalled and is resent.
  if (e.serviceTrouble) return { halt: true };
  // Refused here, never sent; on a resend that says nothing of the earlier attempt (it may have moved money): unknown, no new attempt.
  if (e.notSent && resend) return { line: 'unknown', halt: false };
  return { line: 'rejected', halt: false };
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
  const fields = e.fieldErrors.slice(0, 3).map((f) => `${f.field}: ${f.message}`);
  return {
    status: e.status,
    code: e.code ?? (e.status ? `HTTP_${e.status}` : e.kind.toUpperCase().replace(/-/g, '_')),
    message: e.message + (fields.length ? ` (${fields.join('; ')})` : ''),
    requestId: e.requestId,
  };
}
