// `plan FILE [--out PLAN]`: the preflight and the plan without sending anything, its fees the
// methods route's (estimated); with --out, per row to send, its initiate body, its documents'
// sha256 and its quote (unless --no-quote: its fees exact), written to a plan file that `run
// --plan` executes exactly. Reads the journal (a resumed batch plans only what is left) but never
// writes it.
import { userInfo } from 'node:os';
import type { Connection } from '../client/connect.ts';
import { PayoutApiError } from '../client/errors.ts';
import type { PayoutClient } from '../client/client.ts';
import { emptyFold } from '../journal/rows.ts';
import { formatAmount, fromApi, toApi, type Dec as DecT } from '../money.ts';
import { nameProblem, swapReasons, type GuardOptions } from './approval.ts';
import { BatchUnusable } from './errors.ts';
import { initiateBody } from './execute.ts';
import { loadBatch, validReferences, type LoadedBatch, type LoadOptions } from './prepare.ts';
import { ledgerJournalPath, ledgerOf, sentByOtherBatches, syncLedger } from './ledger.ts';
import { buildPlan, feeForTotals, payableTotals, requestLimitReason, type BatchPlan } from './plan.ts';
import { planFileOf, writePlanFile, type PlanFile, type PlanRow } from './plan-file.ts';
import { planStage, type PlanStageOptions } from './pipeline.ts';
import { checkSameBatch, journalReader } from './session.ts';

export interface PlanCommandOptions
  extends
    LoadOptions,
    Pick<PlanStageOptions, 'allowPartial' | 'mergeDocuments' | 'enablePairs' | 'swapFrom'>,
    Pick<GuardOptions, 'maxSwaps'> {
  file: string;
  /** With `out`: quote each row to send (a quote per row, its fee exact); without `out` nothing is quoted. */
  quote: boolean;
  /** --max-requests: a batch that needs more is refused before a quote is sent, and no plan file is written. */
  maxRequests?: number;
  conn: Connection;
  stateDir?: string;
  out?: string;
  /** The plan's swaps fund the batch (default: `plan` proposes them so); `run --dry-run` says whether its run would (--fund-by-swap). */
  fundBySwap?: boolean;
  /** Who makes the plan, recorded in the plan file (default the OS user): they cannot approve it. A look-alike name is refused (BatchUnusable). */
  preparedBy?: string;
}

/** The OS user's name; $USER (or "unknown") where the user database has no entry (a container's uid). */
function osUserName(env: NodeJS.ProcessEnv = process.env): string {
  try {
    return userInfo().username;
  } catch {
    return env.USER || env.USERNAME || 'unknown';
  }
}

export interface PlanCommandResult {
  plan: BatchPlan;
  planFile?: PlanFile;
  /** Quotes that failed (row number → message). */
  quoteErrors: Map<number, string>;
  /** Why `run` would refuse the batch before anything is quoted (--max-requests). */
  refused?: string[];
  /** What the control totals compare with, as `run` counts it: `run --dry-run` checks them. */
  payable: ReturnType<typeof payableTotals>;
}

/** prepare (the batch and its journal, read, never written) -> the plan stage -> quotes -> the plan file. */
export async function planBatch(o: PlanCommandOptions): Promise<PlanCommandResult> {
  const preparedBy = o.out ? o.preparedBy?.trim() || osUserName() : undefined;
  const bad = preparedBy !== undefined ? nameProblem(preparedBy) : undefined;
  if (bad)
    throw new BatchUnusable('PREPARED_BY', `--prepared-by ${JSON.stringify(preparedBy)}: ${bad}; write the maker's name in one script`);
  const env = o.conn.environment.name;
  const ledger = ledgerOf(o.conn, { root: o.stateDir });
  await syncLedger(ledger);
  // As `run` does: the journal read once the identity is known, for the rows it shows created.
  let jpath = '';
  const journal = journalReader((identity) => (jpath = ledgerJournalPath(ledger, identity.batchId)));
  const batch = await loadBatch(
    o.file,
    { encoding: o.encoding, sheet: o.sheet, allowDuplicateRows: o.allowDuplicateRows, batchId: o.batchId, stop: o.stop },
    journal.lookup,
  );
  const folded = journal.read()?.scan.folded ?? emptyFold();
  if (folded.header) checkSameBatch(folded, folded.header, batch.file, batch.identity, env, jpath);
  // A reference another batch of the account sent is left out, as `run` would refuse it.
  const sentElsewhere = sentByOtherBatches(ledger, batch.identity.batchId, validReferences(batch.rows));
  // Only a plan file needs each row's quote (`run --plan` pays what it shows); a preview prices
  // rows from the methods route's fee, as `run` does.
  const quoteRows = !!o.out && o.quote;
  // The plan proposes a swap for a short wallet, and counts it: `run --plan` sends it, `run --fund-by-swap` too.
  const fundBySwap = o.fundBySwap ?? true;
  const staged = await planStage(o.conn, batch, folded, env, { ...o, quoteRows, sentElsewhere, fundBySwap });
  // (as `run` counts it: pipeline.ts approve)
  const payable = payableTotals(batch, staged.plan, feeForTotals(folded, staged.preflight.estimatedFees));
  const overLimit = [requestLimitReason(staged.plan.requests, o.maxRequests) ?? [], swapReasons(staged.plan, o)].flat();
  if (overLimit.length) return { plan: staged.plan, quoteErrors: new Map(), refused: overLimit, payable };
  const quoted = await planRows(o.conn.client, batch, staged.plan.toSend, quoteRows);
  // the quoted fees replace the estimates in the plan's totals
  const plan = quoted.fees.size
    ? buildPlan(batch, staged.preflight, folded, env, {
        ...o,
        quoteRows,
        sentElsewhere,
        usage: staged.usage,
        quotedFees: quoted.fees,
        fundBySwap,
      })
    : staged.plan;
  // (the swap priced again with the quoted fees: its cap is checked again)
  const overCap = plan === staged.plan ? [] : swapReasons(plan, o);
  if (overCap.length) return { plan, quoteErrors: quoted.errors, refused: overCap, payable };
  let planFile: PlanFile | undefined;
  if (o.out) {
    planFile = planFileOf(plan, {
      fileSha256: batch.identity.fileSha256,
      batchLabel: batch.identity.label,
      sheet: batch.sheet,
      baseUrl: o.conn.environment.baseUrl,
      rows: quoted.rows.filter((r) => plan.toSend.includes(r.rowNumber)),
      preparedBy,
    });
    await writePlanFile(o.out, planFile);
  }
  return { plan, planFile, quoteErrors: quoted.errors, payable };
}

/** The plan file's rows to send, each with its quote (rate, fee, total) unless --no-quote. */
async function planRows(
  client: PayoutClient,
  batch: LoadedBatch,
  toSend: number[],
  quote: boolean,
): Promise<{ rows: PlanRow[]; fees: Map<number, DecT>; errors: Map<number, string> }> {
  const rows: PlanRow[] = [];
  const errors = new Map<number, string>();
  const fees = new Map<number, DecT>();
  const byNumber = new Map(batch.rows.map((r) => [r.rowNumber, r]));
  for (const n of toSend) {
    const p = byNumber.get(n)!.payout!;
    const row: PlanRow = {
      rowNumber: n,
      reference: p.reference,
      sourceCurrency: p.sourceCurrency,
      sourceAmount: p.sourceAmount.toFixed(),
      body: initiateBody(p),
      // (validation fingerprinted every document of a valid row: loadBatch)
      documents: p.documents.map((file) => ({ file, sha256: batch.documents!.get(file)!.sha256 })),
    };
    rows.push(row);
    if (!quote) continue;
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
        fees.set(n, fromApi(q.fee.amount));
      }
      if (q.totalDeductible !== undefined) row.totalDeductible = formatAmount(fromApi(q.totalDeductible), p.sourceCurrency);
      row.destinationAmount = formatAmount(fromApi(q.destinationAmount), p.destinationCurrency);
    } catch (e) {
      if (!(e instanceof PayoutApiError)) throw e;
      errors.set(n, e.message);
    }
  }
  return { rows, fees, errors };
}
