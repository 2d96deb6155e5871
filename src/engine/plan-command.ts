// `plan FILE [--out PLAN]`: the preflight and the plan without sending anything; with quotes per
// row to send (unless --no-quote), written to a plan file that `run --plan` executes exactly.
// Reads the journal (a resumed batch plans only what is left) but never writes it.
import { userInfo } from 'node:os';
import type { Connection } from '../client/connect.ts';
import { PayoutApiError } from '../client/errors.ts';
import { emptyFold, rowState } from '../journal/rows.ts';
import { formatAmount, fromApi, toApi, type Dec as DecT } from '../money.ts';
import { loadBatch, type LoadOptions } from './batch.ts';
import { stateDirFor } from './identity.ts';
import { findBatchJournal, ledgerJournalPath, ledgerOf } from './ledger.ts';
import { buildPlan, type BatchPlan } from './plan.ts';
import { planFileOf, writePlanFile, type PlanFile, type PlanRow } from './plan-file.ts';
import { preflight } from './preflight.ts';
import { checkSameBatch, journalReader } from './session.ts';

export interface PlanOptions extends LoadOptions {
  file: string;
  conn: Connection;
  stateDir?: string;
  out?: string;
  quote: boolean;
  mergeDocuments: boolean;
  allowPartial: boolean;
  enablePairs: boolean;
  /** Who makes the plan, recorded in the plan file (default the OS user): they cannot approve it. */
  preparedBy?: string;
}

/** The OS user's name; $USER (or "unknown") where the user database has no entry (a container's uid). */
export function osUserName(env: NodeJS.ProcessEnv = process.env): string {
  try {
    return userInfo().username;
  } catch {
    return env.USER || env.USERNAME || 'unknown';
  }
}

export interface PlanResult {
  plan: BatchPlan;
  planFile?: PlanFile;
  /** Quotes that failed (row number → message). */
  quoteErrors: Map<number, string>;
}

export async function planBatch(o: PlanOptions): Promise<PlanResult> {
  const env = o.conn.environment.name;
  const ledger = ledgerOf(o.conn, { root: o.stateDir, legacy: [stateDirFor(o.file), ...(o.stateDir ? [o.stateDir] : [])] });
  // As `run` does: the journal read once the identity is known, its created rows not validated
  // again (the account's ledger's, else one of the layout before it: read, never adopted here).
  let jpath = '';
  const journal = journalReader(
    (identity) => (jpath = findBatchJournal(ledger, identity.batchId) ?? ledgerJournalPath(ledger, identity.batchId)),
  );
  const batch = await loadBatch(
    o.file,
    { encoding: o.encoding, sheet: o.sheet, allowDuplicateRows: o.allowDuplicateRows, batchId: o.batchId, stop: o.stop },
    journal.lookup,
  );
  const folded = journal.read()?.scan.folded ?? emptyFold();
  if (folded.header) checkSameBatch(folded, folded.header, batch.file, batch.identity, env, jpath);
  const { client } = o.conn;
  const toCheck = batch.rows
    .filter((r) => r.payout && rowState(folded, r.payout.reference).phase !== 'created')
    .map((r) => ({ rowNumber: r.rowNumber, payout: r.payout! }));
  const pf = await preflight(client, toCheck, { enablePairs: o.enablePairs });
  await o.conn.usage?.flush().catch(() => undefined);
  const usage = await client.quotaUsage().catch(() => undefined);
  let plan = buildPlan(batch, pf, folded, env, { allowPartial: o.allowPartial, quote: o.quote, mergeDocuments: o.mergeDocuments, usage });

  const rows: PlanRow[] = [];
  const quoteErrors = new Map<number, string>();
  const quotedFees = new Map<number, DecT>();
  const byNumber = new Map(batch.rows.map((r) => [r.rowNumber, r]));
  for (const n of plan.toSend) {
    const p = byNumber.get(n)!.payout!;
    const row: PlanRow = { rowNumber: n, reference: p.reference, sourceCurrency: p.sourceCurrency, sourceAmount: p.sourceAmount.toFixed() };
    if (o.quote) {
      try {
        const q = await client.quote({
          sourceAmount: toApi(p.sourceAmount),
          sourceCurrency: p.sourceCurrency,
          destinationCurrency: p.destinationCurrency,
          destinationCountryCode: p.destinationCountryCode,
          method: p.method,
        });
        if (q.exchangeRate !== undefined) row.rate = String(q.exchangeRate);
        if (q.fee) {
          row.fee = formatAmount(fromApi(q.fee.amount), p.sourceCurrency);
          quotedFees.set(n, fromApi(q.fee.amount));
        }
        if (q.totalDeductible !== undefined) row.totalDeductible = formatAmount(fromApi(q.totalDeductible), p.sourceCurrency);
        row.destinationAmount = formatAmount(fromApi(q.destinationAmount), p.destinationCurrency);
      } catch (e) {
        if (!(e instanceof PayoutApiError)) throw e;
        quoteErrors.set(n, e.message);
      }
    }
    rows.push(row);
  }
  if (quotedFees.size)
    plan = buildPlan(batch, pf, folded, env, {
      allowPartial: o.allowPartial,
      quote: o.quote,
      mergeDocuments: o.mergeDocuments,
      usage,
      quotedFees,
    });
  let planFile: PlanFile | undefined;
  if (o.out) {
    planFile = planFileOf(plan, {
      fileSha256: batch.identity.fileSha256,
      batchLabel: batch.identity.label,
      baseUrl: o.conn.environment.baseUrl,
      rows: rows.filter((r) => plan.toSend.includes(r.rowNumber)),
      preparedBy: o.preparedBy?.trim() || osUserName(),
    });
    await writePlanFile(o.out, planFile);
  }
  return { plan, planFile, quoteErrors };
}
