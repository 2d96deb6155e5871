// Probable duplicates across batches, at send time (issue 39): a row whose beneficiary account,
// amount and currencies match a payout this account's ledger shows created recently under another
// reference is not sent. A created row renamed in a results file (its reference changed, its key,
// payout id and status cleared) is otherwise a new payment to `retry`; the ledger knows that payee
// and amount were paid minutes ago. "Recently" is a window (default 24 hours): a weekly or monthly
// payroll paying the same person the same amount is not a duplicate. `--allow-duplicate REF`
// sends the row of that reference (or the earlier one's) anyway.
import type { JournalLine } from '../journal/lines.ts';
import { isFailedAfterCreation } from '../journal/lines.ts';
import type { Ledger } from '../ledger/account-ledger.ts';
import { Dec } from '../money.ts';
import { probableDuplicateKey } from '../validation/row.ts';
import type { PayoutRow } from '../validation/row-schemas.ts';
import type { EngineRow } from './prepare.ts';

export const DEFAULT_DUPLICATE_WINDOW_MS = 24 * 3600_000;

/** A payout of the ledger that a row may repeat. */
export interface EarlierPayout {
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
export async function recentPayouts(ledger: Ledger, windowMs: number, now = new Date()): Promise<Map<string, EarlierPayout>> {
  const since = now.getTime() - windowMs;
  const out = new Map<string, EarlierPayout>();
  for (const batchId of await ledger.batches()) {
    const bodies = new Map<string, string>();
    const created = new Map<string, { key: string; payout: EarlierPayout }>();
    const failed = new Set<string>();
    await ledger.read(batchId, (line) => {
      const e = line as JournalLine;
      if (e.t === 'initiating') bodies.set(`${e.ref}\u0000${e.key}`, e.body);
      else if (e.t === 'created' && Date.parse(e.at) >= since)
        created.set(e.payout.id, {
          key: `${e.ref}\u0000${e.key}`,
          payout: { reference: e.ref, payoutId: e.payout.id, at: e.at, ...(e.payout.payoutRef ? { payoutRef: e.payout.payoutRef } : {}) },
        });
      else if (e.t === 'status' && isFailedAfterCreation(e.status)) failed.add(e.payoutId);
    });
    for (const [id, c] of created) {
      const body = bodies.get(c.key);
      if (failed.has(id) || body === undefined) continue;
      const key = keyOfBody(body);
      if (key) out.set(key, c.payout);
    }
  }
  return out;
}

/** The probable-duplicate key of a journalled initiate body; undefined when it cannot be read. */
function keyOfBody(text: string): string | undefined {
  try {
    const b = JSON.parse(text) as Pick<PayoutRow, 'beneficiary' | 'sourceCurrency' | 'destinationCurrency'> & { sourceAmount: number };
    return probableDuplicateKey({ ...b, sourceAmount: new Dec(String(b.sourceAmount)) });
  } catch {
    return undefined;
  }
}

/**
 * Refuses (PROBABLE_DUPLICATE, the row not sent) each row to send that repeats an earlier payout
 * of another reference, unless `allow` names its reference or the earlier one. Mutates the rows.
 */
export function refuseRecentDuplicates(
  rows: EngineRow[],
  toSend: (row: EngineRow) => boolean,
  earlier: Map<string, EarlierPayout>,
  allow: ReadonlySet<string>,
  file: string,
): void {
  for (const row of rows) {
    const p = row.payout;
    if (!p || !toSend(row)) continue;
    const e = earlier.get(probableDuplicateKey(p));
    if (!e || e.reference === p.reference || allow.has(p.reference) || allow.has(e.reference)) continue;
    row.problems = [
      ...row.problems,
      {
        severity: 'error',
        code: 'PROBABLE_DUPLICATE',
        file,
        row: row.rowNumber,
        message:
          `same beneficiary account, amount and currency as ${e.reference}, paid at this account as payout ` +
          `${e.payoutRef ?? e.payoutId} on ${e.at}: a probable duplicate, not sent. If it is meant, send it with --allow-duplicate ${p.reference}`,
      },
    ];
    row.payout = undefined;
  }
}
