// Probable duplicates across batches at send time, one check for every send path
// (pipeline.ts planStage): a row repeating account, amount and currencies of a payout created within
// the window (24h default: a monthly payroll is no duplicate) under another reference is not sent.
import { attempt } from '../files/attempt.ts';
import { isFailedAfterCreation, type JournalLine } from '../journal/lines.ts';
import type { Ledger } from '../ledger/account-ledger.ts';
import { fromApi, type ApiAmount } from '../money.ts';
import { probableDuplicateKey } from '../validation/row.ts';
import type { PayoutRow } from '../validation/row-schemas.ts';
import { referenceOf, rowLookup, type DuplicateOptions, type EngineRow, type LoadedBatch } from './prepare.ts';

const DEFAULT_DUPLICATE_WINDOW_MS = 24 * 3600_000;

interface RecentPayout {
  reference: string;
  /** None while its outcome is not known (a run stopped between its request and the answer). */
  payoutId?: string;
  payoutRef?: string;
  /** Journalled created at (sent at, its outcome not known). */
  at: string;
}

/** The payouts created (or sent, their outcome not known) within the window and not failed since, by the probable-duplicate key of their journalled body (all of them: one payee may have several). */
async function recentPayouts(ledger: Ledger, windowMs: number): Promise<Map<string, RecentPayout[]>> {
  const since = Date.now() - windowMs;
  const out = new Map<string, RecentPayout[]>();
  const add = (key: string, p: RecentPayout) => out.set(key, [...(out.get(key) ?? []), p]);
  for (const batchId of await ledger.batches()) {
    // (a body is kept only until its answer: a journal of 100,000 rows is never held as its bodies)
    const bodies = new Map<string, { body: string; at: string }>();
    const created = new Map<string, { key: string; payout: RecentPayout }>();
    const failed = new Set<string>();
    await ledger.read(batchId, (line) => {
      const e = line as JournalLine;
      if (e.t === 'initiating') bodies.set(`${e.ref}\u0000${e.key}`, { body: e.body, at: e.at });
      else if (e.t === 'rejected' || e.t === 'conflict') bodies.delete(`${e.ref}\u0000${e.key}`);
      else if (e.t === 'created') {
        const body = bodies.get(`${e.ref}\u0000${e.key}`)?.body;
        bodies.delete(`${e.ref}\u0000${e.key}`);
        const key = body !== undefined && Date.parse(e.at) >= since ? keyOfBody(body) : undefined;
        if (key)
          created.set(e.payout.id, {
            key,
            payout: { reference: e.ref, payoutId: e.payout.id, at: e.at, ...(e.payout.payoutRef ? { payoutRef: e.payout.payoutRef } : {}) },
          });
      } else if (e.t === 'status' && isFailedAfterCreation(e.status)) failed.add(e.payoutId);
    });
    for (const [id, c] of created) if (!failed.has(id)) add(c.key, c.payout);
    // (a request left and its answer was never recorded: the payout may exist)
    for (const [k, b] of bodies) {
      const key = Date.parse(b.at) >= since ? keyOfBody(b.body) : undefined;
      if (key && !out.has(key)) add(key, { reference: k.split('\u0000')[0]!, at: b.at });
    }
  }
  return out;
}

function keyOfBody(text: string): string | undefined {
  return attempt(() => {
    const b = JSON.parse(text) as Pick<PayoutRow, 'beneficiary' | 'sourceCurrency' | 'destinationCurrency'> & { sourceAmount: ApiAmount };
    return probableDuplicateKey({ ...b, sourceAmount: fromApi(b.sourceAmount) });
  });
}

/**
 * Mutates the rows: a fresh row repeating a recent payout of another batch's reference is
 * PROBABLE_DUPLICATE unless allowed; one of this batch's own references is validation/batch.ts's.
 */
export async function refuseRecentDuplicates(
  ledger: Ledger,
  batch: Pick<LoadedBatch, 'rows' | 'file'>,
  fresh: (row: EngineRow) => boolean,
  o: DuplicateOptions,
): Promise<void> {
  if (!batch.rows.some((r) => !!r.payout && fresh(r))) return;
  const earlier = await recentPayouts(ledger, o.duplicateWindowMs ?? DEFAULT_DUPLICATE_WINDOW_MS);
  if (!earlier.size) return; // (nothing recent to repeat: no pass over the rows)
  const allow = new Set(o.allowDuplicates);
  const mine = rowLookup(batch.rows, referenceOf);
  batch.rows.forEach((row, i) => {
    const p = row.payout;
    if (!p || !fresh(row)) return;
    // (this batch's own payout is validation's while its row still names that payee, not once edited or sorted apart)
    const own = (e: RecentPayout) => {
      const row = mine(e.reference)?.payout;
      return !!row && probableDuplicateKey(row) === probableDuplicateKey(p);
    };
    const e = earlier.get(probableDuplicateKey(p))?.find((x) => !own(x));
    if (!e || allow.has(p.reference) || allow.has(e.reference)) return;
    const problems: EngineRow['problems'] = [
      ...row.problems,
      {
        severity: 'error',
        code: 'PROBABLE_DUPLICATE',
        file: batch.file,
        row: row.rowNumber,
        message:
          `same beneficiary account, amount and currency as ${e.reference}, ` +
          (e.payoutId
            ? `paid at this account as payout ${e.payoutRef ?? e.payoutId} on ${e.at}`
            : `sent at this account on ${e.at}, its outcome not known yet (run its batch again to settle it)`) +
          `: a probable duplicate, not sent. If it is meant, send it with --allow-duplicate ${p.reference}`,
      },
    ];
    batch.rows.set(i, { ...row, problems, payout: undefined });
  });
}
