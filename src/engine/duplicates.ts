// Probable duplicates across batches, at send time (issue 39): a row whose beneficiary account,
// amount and currencies match a payout this account's ledger shows created recently under another
// reference is not sent, by plan, run, retry and watch alike (one check: pipeline.ts planStage).
// A created row renamed in a results file (its reference changed, its key, payout id and status
// cleared) is otherwise a new payment to `retry`. "Recently" is a window (default 24 hours): a
// weekly or monthly payroll paying the same person the same amount is not a duplicate.
import type { JournalLine } from '../journal/lines.ts';
import { isFailedAfterCreation } from '../journal/lines.ts';
import type { Ledger } from '../ledger/account-ledger.ts';
import { fromApi, type ApiAmount } from '../money.ts';
import { probableDuplicateKey } from '../validation/row.ts';
import type { PayoutRow } from '../validation/row-schemas.ts';
import { referenceOf, type EngineRow, type LoadedBatch } from './prepare.ts';

const DEFAULT_DUPLICATE_WINDOW_MS = 24 * 3600_000;

/** A payout of the ledger that a row may repeat. */
interface RecentPayout {
  reference: string;
  payoutId: string;
  payoutRef?: string;
  /** When the ledger journalled it created. */
  at: string;
}

/**
 * The payouts the account's journals show created within `windowMs` before `now` and not failed
 * since, by probable-duplicate key (beneficiary account, amount, currencies: validation/row.ts),
 * read from each row's journalled initiate body.
 */
async function recentPayouts(ledger: Ledger, windowMs: number, now = new Date()): Promise<Map<string, RecentPayout>> {
  const since = now.getTime() - windowMs;
  const out = new Map<string, RecentPayout>();
  for (const batchId of await ledger.batches()) {
    // (a body is kept only until its answer: a journal of 100,000 rows is never held as its bodies)
    const bodies = new Map<string, string>();
    const created = new Map<string, { key: string; payout: RecentPayout }>();
    const failed = new Set<string>();
    await ledger.read(batchId, (line) => {
      const e = line as JournalLine;
      if (e.t === 'initiating') bodies.set(`${e.ref}\u0000${e.key}`, e.body);
      else if (e.t === 'created') {
        const body = bodies.get(`${e.ref}\u0000${e.key}`);
        bodies.delete(`${e.ref}\u0000${e.key}`);
        const key = body !== undefined && Date.parse(e.at) >= since ? keyOfBody(body) : undefined;
        if (key)
          created.set(e.payout.id, {
            key,
            payout: { reference: e.ref, payoutId: e.payout.id, at: e.at, ...(e.payout.payoutRef ? { payoutRef: e.payout.payoutRef } : {}) },
          });
      } else if (e.t === 'status' && isFailedAfterCreation(e.status)) failed.add(e.payoutId);
    });
    for (const [id, c] of created) if (!failed.has(id)) out.set(c.key, c.payout);
  }
  return out;
}

/** The probable-duplicate key of a journalled initiate body; undefined when it cannot be read. */
function keyOfBody(text: string): string | undefined {
  try {
    const b = JSON.parse(text) as Pick<PayoutRow, 'beneficiary' | 'sourceCurrency' | 'destinationCurrency'> & { sourceAmount: ApiAmount };
    return probableDuplicateKey({ ...b, sourceAmount: fromApi(b.sourceAmount) });
  } catch {
    return undefined;
  }
}

/** `--allow-duplicate REF` and `--duplicate-window` (plan, run, retry; a watch's `allowDuplicates`, `duplicateWindow`). */
export interface DuplicateOptions {
  /** References sent though they repeat a recent payout of another (or the earlier references themselves). */
  allowDuplicates?: string[];
  /** How recent a payout a row may not repeat (default 24 hours). */
  duplicateWindowMs?: number;
}

/** A window written 30m, 24h or 7d, in milliseconds; undefined when it is not one. */
export function windowMs(text: string): number | undefined {
  const m = /^\s*(\d+)\s*([mhd])\s*$/i.exec(text);
  return m ? Number(m[1]) * { m: 60_000, h: 3_600_000, d: 86_400_000 }[m[2]!.toLowerCase() as 'm' | 'h' | 'd'] : undefined;
}

/**
 * The check of every send path (pipeline.ts planStage: plan, run, retry, watch): refuses
 * (PROBABLE_DUPLICATE, the row not sent) each row about to go under a new key that repeats a recent
 * payout of the ledger under another reference, unless `allowDuplicates` names its reference or the
 * earlier one. A payout of a reference this batch holds is left to validation's rule within a batch
 * (validation/batch.ts, --allow-duplicate-rows). Mutates the rows.
 */
export async function refuseRecentDuplicates(
  ledger: Ledger,
  batch: Pick<LoadedBatch, 'rows' | 'file'>,
  fresh: (row: EngineRow) => boolean,
  o: DuplicateOptions,
): Promise<void> {
  if (!batch.rows.some((r) => r.payout && fresh(r))) return;
  const earlier = await recentPayouts(ledger, o.duplicateWindowMs ?? DEFAULT_DUPLICATE_WINDOW_MS);
  const allow = new Set(o.allowDuplicates);
  const mine = new Set(batch.rows.map(referenceOf));
  for (const row of batch.rows) {
    const p = row.payout;
    if (!p || !fresh(row)) continue;
    const e = earlier.get(probableDuplicateKey(p));
    if (!e || mine.has(e.reference) || allow.has(p.reference) || allow.has(e.reference)) continue;
    row.problems = [
      ...row.problems,
      {
        severity: 'error',
        code: 'PROBABLE_DUPLICATE',
        file: batch.file,
        row: row.rowNumber,
        message:
          `same beneficiary account, amount and currency as ${e.reference}, paid at this account as payout ` +
          `${e.payoutRef ?? e.payoutId} on ${e.at}: a probable duplicate, not sent. If it is meant, send it with --allow-duplicate ${p.reference}`,
      },
    ];
    row.payout = undefined;
  }
}
