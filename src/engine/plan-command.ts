// `plan FILE [--out PLAN]`: preflight and plan, nothing sent, the journal read but never written; with
// --out, each row's initiate body, documents' sha256 and indicative quote, for `run --plan` to execute.
import { PayoutApiError } from '../client/errors.ts';
import type { PayoutClient } from '../client/client.ts';
import type { QuoteAnswer } from '../client/answers.ts';
import { emptyFold } from '../journal/lines.ts';
import { formatAmount, fromApi, roundTo, type Dec as DecT } from '../money.ts';
import { nameProblem, swapReasons, type GuardOptions } from './guards.ts';
import { BatchUnusable } from './engine-errors.ts';
import { initiateBody } from './execute.ts';
import { loadBatch, rowByNumber, validReferences, type DuplicateOptions, type LoadedBatch, type LoadOptions } from './prepare.ts';
import { sentByOtherBatches } from '../ledger/account-ledger.ts';
import { ledgerOf } from '../ledger/open.ts';
import { buildPlan, feeForTotals, payableTotals, requestLimitReason, type BatchPlan } from './batch-plan.ts';
import { resolve } from 'node:path';
import { osUserName } from '../os-user.ts';
import { writeFileAtomic } from '../files/atomic.ts';
import { planFileOf, type PlanFile, type PlanRow } from './plan-file.ts';
import { planStage, type PlanStageOptions, type SendOptions } from './pipeline.ts';
import { checkSameBatch, journalReader } from './session.ts';

interface PlanCommandOptions
  extends
    LoadOptions,
    DuplicateOptions,
    Pick<SendOptions, 'conn' | 'stateDir'>,
    Pick<PlanStageOptions, 'allowPartial' | 'mergeDocuments' | 'enablePairs' | 'swapFrom' | 'screening' | 'onEvent' | 'fundBySwap'>,
    // (--max-requests: refused before a quote is sent, no plan file written)
    Pick<GuardOptions, 'maxSwaps' | 'maxRequests'> {
  file: string;
  /** With `out`: quote once per corridor, method and fee band. */
  quote: boolean;
  out?: string;
  /** Default the OS user, who then cannot approve it. */
  preparedBy?: string;
}

export interface PlanCommandResult {
  plan: BatchPlan;
  planFile?: PlanFile;
  quoteErrors: Map<number, string>;
  /** Why `run` would refuse the batch before anything is quoted (--max-requests). */
  refused?: string[];
  /** As `run` counts it: `run --dry-run` checks the control totals against it. */
  payable: ReturnType<typeof payableTotals>;
}

export async function planBatch(o: PlanCommandOptions): Promise<PlanCommandResult> {
  if (o.out && resolve(o.out) === resolve(o.file))
    throw new BatchUnusable(
      'PLAN_FILE',
      `--out ${o.out}: that is the batch file itself; choose another name so the batch is not overwritten`,
    );
  const preparedBy = o.out ? o.preparedBy?.trim() || osUserName() : undefined;
  const bad = preparedBy !== undefined ? nameProblem(preparedBy) : undefined;
  if (bad)
    throw new BatchUnusable('PREPARED_BY', `--prepared-by ${JSON.stringify(preparedBy)}: ${bad}; write the maker's name in one script`);
  const env = o.conn.environment.name;
  const ledger = ledgerOf(o.conn, { root: o.stateDir });
  const journal = journalReader(ledger);
  const batch = await loadBatch(o.file, o, journal.lookup);
  const folded = journal.read()?.folded ?? emptyFold();
  checkSameBatch(folded, batch.file, batch.identity, env, ledger.journalOf(batch.identity.batchId));
  // (and, screening nobody, those another batch's screening held: `run` refuses them, its reservation's same check)
  const sentElsewhere = await sentByOtherBatches(ledger, batch.identity.batchId, validReferences(batch.rows), !o.screening?.lists.length);
  const quoteRows = !!o.out && o.quote;
  // (fundBySwap: default true; `run --dry-run` passes its --fund-by-swap)
  const options = { ...o, ledger, quoteRows, sentElsewhere, fundBySwap: o.fundBySwap ?? true };
  const staged = await planStage(o.conn, batch, folded, env, options);
  const payable = payableTotals(batch, staged.plan, feeForTotals(folded, staged.preflight.estimatedFees));
  const overLimit = [
    requestLimitReason(staged.plan.requests, o.maxRequests) ?? [],
    swapReasons(staged.plan, o),
    staged.plan.screening?.refused ?? [],
  ].flat();
  if (overLimit.length) return { plan: staged.plan, quoteErrors: new Map(), refused: overLimit, payable };
  if (quoteRows && staged.plan.toSend.length) o.onEvent?.({ type: 'preflight', step: { step: 'quotes', rows: staged.plan.toSend.length } });
  const quoted = await planRows(o.conn.client, batch, staged.plan.toSend, staged.preflight.quoteGroups, quoteRows);
  // the quoted fees replace the estimates in the plan's totals
  const again = { ...options, usage: staged.usage, quotedFees: quoted.fees, screened: staged.plan.screening };
  const plan = quoted.fees.size ? buildPlan(batch, staged.preflight, folded, env, again) : staged.plan;
  // (the swap priced again with the quoted fees)
  const overCap = plan === staged.plan ? [] : swapReasons(plan, o);
  if (overCap.length) return { plan, quoteErrors: quoted.errors, refused: overCap, payable };
  let planFile: PlanFile | undefined;
  if (o.out) {
    const sending = new Set(plan.toSend);
    planFile = planFileOf(plan, {
      fileSha256: batch.identity.fileSha256,
      batchLabel: batch.identity.label,
      preparedBy,
      sheet: batch.sheet,
      encoding: o.encoding,
      ...(o.allowDuplicateRows && { allowDuplicateRows: true as const }),
      ...(o.documents !== undefined ? { documents: resolve(o.documents) } : {}),
      baseUrl: o.conn.environment.baseUrl,
      rows: quoted.rows.filter((r) => sending.has(r.rowNumber)),
    });
    await writeFileAtomic(o.out, JSON.stringify(planFile, null, 2) + '\n').catch((e: NodeJS.ErrnoException) => {
      throw new BatchUnusable('PLAN_FILE', `--out ${o.out}: cannot write the plan file (${e.code ?? e.message}): name another file`);
    });
  }
  return { plan, planFile, quoteErrors: quoted.errors, payable };
}

/**
 * The rows to send, quoted once per quoteGroup: rates are not locked (spec §1.11, §4.2 rules 7-8),
 * a quote per row buys nothing. A refused quote is the row's; its group is quoted once more with
 * the next row's amount. A row's destination amount is in the proportion of the quote's own
 * amounts, not from a rate whose direction the spec does not state.
 */
async function planRows(client: PayoutClient, batch: LoadedBatch, toSend: number[], groups: ReadonlyMap<number, string>, quote: boolean) {
  const rows: PlanRow[] = [];
  const errors = new Map<number, string>();
  const fees = new Map<number, DecT>();
  const quotes = new Map<string, Quoted>();
  const rowOf = rowByNumber(batch.rows);
  for (const n of toSend) {
    const { payout, cells } = rowOf(n)!;
    const p = payout!;
    const row: PlanRow = {
      rowNumber: n,
      reference: p.reference,
      sourceCurrency: p.sourceCurrency,
      sourceAmount: p.sourceAmount.toFixed(),
      body: initiateBody(p),
      documents: p.documents.map((file) => ({ file, sha256: batch.documents!.get(file)!.sha256 })),
      ...(p.ultimateCreditor && { ultimateCreditor: p.ultimateCreditor.name }),
      ...(cells.UltmtDbtr && { ultimateDebtor: cells.UltmtDbtr }),
    };
    rows.push(row);
    if (!quote) continue;
    const group = groups.get(n) ?? `row ${n}`;
    const known = quotes.get(group);
    const quoted = known && !('failed' in known && known.again) ? known : await quoteRow(client, row.body, p.sourceAmount, n, known);
    quotes.set(group, quoted);
    if ('failed' in quoted) {
      const tried = `not quoted: its group's quote failed with the amount of row ${quoted.rows.join(', then of row ')}`;
      errors.set(n, quoted.rows.includes(n) ? quoted.failed : `${tried}: ${quoted.failed}`);
      continue;
    }
    const { q, sent } = quoted;
    if (q.exchangeRate !== undefined) row.rate = String(q.exchangeRate);
    const fee = q.fee ? fromApi(q.fee.amount) : undefined;
    if (fee) {
      row.fee = formatAmount(fee, p.sourceCurrency);
      row.totalDeductible = formatAmount(p.sourceAmount.plus(fee), p.sourceCurrency);
      fees.set(n, fee);
    }
    const [qs, qd] = [q.sourceAmount !== undefined ? fromApi(q.sourceAmount) : sent, fromApi(q.destinationAmount)];
    if (!qs.isZero())
      row.destinationAmount = formatAmount(roundTo(p.sourceAmount.times(qd).dividedBy(qs), p.destinationCurrency), p.destinationCurrency);
  }
  return { rows, fees, errors };
}

/** A quote group's quote, or why it failed with the amounts of `rows`: `again` with the next row's (its own amount may be what was refused). */
type Quoted = { q: QuoteAnswer; sent: DecT } | { failed: string; rows: number[]; again: boolean };

async function quoteRow(client: PayoutClient, body: PlanRow['body'], amount: DecT, n: number, before: Quoted | undefined): Promise<Quoted> {
  const { sourceAmount, sourceCurrency, destinationCurrency, destinationCountryCode, method } = body;
  try {
    return { q: await client.quote({ sourceAmount, sourceCurrency, destinationCurrency, destinationCountryCode, method }), sent: amount };
  } catch (e) {
    if (!(e instanceof PayoutApiError)) throw e;
    const rows = [...(before && 'failed' in before ? before.rows : []), n];
    return { failed: e.message, rows, again: rows.length < 2 && !e.serviceTrouble };
  }
}
