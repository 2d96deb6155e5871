// The pain.002 status report (CustomerPaymentStatusReport) of a results file, for the ERP that sent
// the batch (issue 41): one transaction per results row, its ISO status and reason by the one table
// below. What each element holds, for a pain.001's batch and for a CSV or Excel one: REFERENCE.md.
import { Dec, xsDecimal } from '../money.ts';
import { PAIN001_VERSIONS, PAIN002_FOR, type Pain001Version, type Pain002Version } from '../spec/iso20022.ts';
import { readAmountText } from '../validation/amount.ts';
import { isoAmount, isoEscaped, isoId, isoMessageId, isoText, longIdRmtInf, writeIsoXml } from './iso-xml.ts';
import { batchColumns, spillResults } from './read.ts';
import type { ResultRow, ResultsList, ResultValues } from './types.ts';

type IsoTxStatus = 'ACSC' | 'ACSP' | 'ACTC' | 'PDNG' | 'RJCT';

/** `{ ISO code: [ours...] }` read the other way: each of ours → its ISO code. */
const byOurs = <C extends string>(table: Record<C, readonly string[]>): Record<string, C> =>
  Object.fromEntries(Object.entries<readonly string[]>(table).flatMap(([iso, ours]) => ours.map((o) => [o, iso as C])));

/** Our row statuses (the payout's, or ours when none exists: README.md) → ISO transaction status. Any other: PDNG. */
export const ISO_STATUS = byOurs<IsoTxStatus>({
  ACSC: ['SUCCESSFUL'],
  ACSP: ['PENDING', 'PROCESSING'],
  PDNG: ['ADDITIONAL_INFO_REQUIRED', 'UNKNOWN_OUTCOME'],
  ACTC: ['NOT_SENT'],
  RJCT: ['FAILED', 'REJECTED', 'INVALID', 'FAILED_TO_SEND', 'CONFLICT', 'ALREADY_PAID'],
});

/**
 * The service's error codes (spec §7), our problem codes (src/validation/problems.ts) and statuses
 * → ISO 20022 ExternalStatusReason1Code (REFERENCE.md's table). Anything else: NARR, with the service's or our text.
 */
const ISO_REASON = byOurs({
  AM04: ['INSUFFICIENT_FUNDS'],
  AC01: ['INVALID_IBAN', 'IBAN_MISMATCH', 'INVALID_ACCOUNT_NUMBER', 'NUBAN_CHECK_DIGIT', 'EXCEL_DIGITS_LOST', 'EXCEL_LEADING_ZEROS_LOST'],
  RC01: ['INVALID_BIC', 'INVALID_ROUTING_NUMBER', 'INVALID_SORT_CODE', 'INVALID_BANK_CODE'],
  BE01: ['MISSING_REQUIRED_FIELDS', 'MISSING_VALUE', 'MISSING_ONE_OF'],
  BE09: ['INVALID_COUNTRY'],
  AG01: ['CORRIDOR_NOT_ENABLED'],
  AG03: ['METHOD_NOT_AVAILABLE', 'INVALID_METHOD'],
  RR04: ['PROHIBITED_DESTINATION'],
  AM03: ['INVALID_CURRENCY', 'ACCOUNT_CURRENCY_MISMATCH'],
  AM12: ['INVALID_AMOUNT', 'AMBIGUOUS_AMOUNT', 'AMOUNT_PRECISION'],
  AM05: ['DUPLICATE_REFERENCE', 'PROBABLE_DUPLICATE'],
  DUPL: ['ALREADY_PAID', 'CONFLICT'],
});

/** A FAILED or REJECTED payout carries only the service's text (spec §3: reasons "not shown"): these words name a code, else NARR. */
const REASON_WORDS: [RegExp, string][] = [
  [/insufficient (funds|balance)/i, 'AM04'],
  [/account (is |was |has been )?closed|closed account/i, 'AC04'],
  [/name (does not|doesn't) match|name mismatch/i, 'BE01'],
  [/(invalid|incorrect|unknown|wrong) (beneficiary )?account|account (number )?(is )?(invalid|incorrect|unknown|not found)/i, 'AC01'],
];

/** A results row's ISO status, and why it is rejected, pending or not sent: the reason's code, and the service's or our text in Max105Text pieces. */
export function isoTxOf(result: ResultValues): { status: IsoTxStatus; reason?: { code: string; text: string[] } } {
  const status = result.status ?? '';
  const iso = ISO_STATUS[status] ?? 'PDNG';
  if (iso === 'ACSC' || iso === 'ACSP') return { status: iso };
  const failed = iso === 'RJCT' && !!result.payoutId; // FAILED or REJECTED after creation: the service's reason
  const text = (failed ? result.statusReason : result.errorMessage) || result.statusReason || '';
  const code =
    (result.errorCode && ISO_REASON[result.errorCode]) ||
    ISO_REASON[status] ||
    (failed ? REASON_WORDS.find(([re]) => re.test(text))?.[1] : undefined);
  const words = !code && result.errorCode ? `${result.errorCode}${text ? `: ${text}` : ''}` : text;
  if (!code && !words) return { status: iso };
  return { status: iso, reason: { code: code ?? 'NARR', text: words.match(/[\s\S]{1,105}/gu)?.slice(0, 5) ?? [] } };
}

/** The least advanced status first: a group is as far as its least advanced transaction, unless some are rejected. */
const PROGRESS: readonly IsoTxStatus[] = ['PDNG', 'ACTC', 'ACSP', 'ACSC'];

/** A group's status from its transactions' counts: all alike → theirs; some rejected → PART; else the least advanced. */
export function groupStatus(counts: ReadonlyMap<IsoTxStatus, unknown>): string {
  if (counts.size === 1) return [...counts.keys()][0]!;
  if (counts.has('RJCT')) return 'PART';
  return PROGRESS.find((s) => counts.has(s)) ?? 'RJCT';
}

/** Rows counted per ISO status, with their control sum and the most decimals its amounts were written with. */
type Tally = Map<IsoTxStatus, { n: number; sum: Dec; places: number }>;

/** A control sum with as many decimals as its amounts (100.10 + 0.30 is 100.40, as the pain.001's CtrlSum); none past 18 digits. */
function ctrlSum(xs: { sum: Dec; places: number }[]) {
  const sum = xs.reduce((a, x) => a.plus(x.sum), new Dec(0));
  return sum.precision(true) <= 18 ? sum.toFixed(Math.max(0, ...xs.map((x) => x.places))) : undefined;
}

/** A tally's count, control sum and status, under the name of the status's element (GrpSts, PmtInfSts). */
const totalsOf = (t: Tally, statusElement: string) => ({
  OrgnlNbOfTxs: String([...t.values()].reduce((a, x) => a + x.n, 0)),
  OrgnlCtrlSum: ctrlSum([...t.values()]),
  [statusElement]: groupStatus(t),
});

interface StatusReportOptions {
  /** Default: the input's family (PAIN002_FOR), pain.002.001.03 for a batch that was not a pain.001. */
  version?: Pain002Version;
  /** A batch that was not a pain.001: its id, the report's OrgnlMsgId. */
  batchId?: string;
}

/** Writes the status report of the results file `resultsFile` to `path` (atomically). Returns the version written. */
export async function writeStatusReport(resultsFile: string, path: string, o: StatusReportOptions = {}): Promise<Pain002Version> {
  return reportOf(await spillResults(resultsFile), resultsFile, path, o);
}

/** A watch's: for a batch read from a pain.001 only, its report beside its results (`x.results.csv` → `x.results.pain002.xml`). */
export async function writeStatusReportBeside(resultsFile: string): Promise<string | undefined> {
  const table = await spillResults(resultsFile);
  if (!PAIN001_VERSIONS.includes(table.rows.at(0)?.cells.MsgNmId as Pain001Version)) return undefined;
  const path = resultsFile.replace(/\.[^./\\]+$/, '') + '.pain002.xml';
  await reportOf(table, resultsFile, path, {});
  return path;
}

async function reportOf(table: ResultsList, file: string, path: string, o: StatusReportOptions): Promise<Pain002Version> {
  const cols = { reference: 'reference', sourceAmount: 'sourceAmount', sourceCurrency: 'sourceCurrency', ...batchColumns(table, file) };
  const cell = (r: ResultRow, name: string | undefined) => (name ? r.cells[name]?.trim() : undefined) || undefined;
  const first = table.rows.at(0);
  const msgNmId = first && cell(first, 'MsgNmId');
  const version = o.version ?? PAIN002_FOR[msgNmId as Pain001Version] ?? 'pain.002.001.03';
  const orgnlMsgId = (first && cell(first, 'MsgId')) ?? (o.batchId?.trim() || 'NOTPROVIDED');

  // first pass: the payment informations in order, each with its rows and tally
  // the pain.001's amount as sent, in its own currency (Amt, AmtCcy: a retry may edit sourceAmount), else the row's; its text as
  // written when that is an ISO amount (100.10, not 100.1: an ERP matches the text it sent)
  const amountOf = (r: ResultRow) => {
    const [column, currency] = cell(r, 'AmtCcy') ? ['Amt', 'AmtCcy'] : [cols.sourceAmount, cols.sourceCurrency];
    const text = cell(r, column) ?? '';
    // as the run read it: a pain.001's xs:decimal (1500. is 1500); a CSV's "1.234,56" is 1234.56; "-100.00" none, never 100
    const read = column === 'Amt' ? { ok: !!xsDecimal(text), text } : readAmountText(text);
    const amount = read.ok ? isoAmount(read.text, cell(r, currency)?.toUpperCase()) : undefined;
    return amount && read.ok && /^\d{1,13}(\.\d{1,5})?$/.test(read.text) ? { ...amount, '#': read.text } : amount;
  };
  // (a group holds its rows' places, read again when written)
  const groups = new Map<string, { rows: number[]; tally: Tally }>();
  const all: Tally = new Map();
  table.rows.forEach((r, i) => {
    const id = cell(r, 'PmtInfId') ?? orgnlMsgId;
    const g = groups.get(id) ?? { rows: [], tally: new Map() as Tally };
    groups.set(id, g);
    g.rows.push(i);
    const status = isoTxOf(r.result).status;
    const amount = amountOf(r);
    const decimals = amount?.['#'].split('.')[1]?.length ?? 0;
    for (const t of [g.tally, all]) {
      const { n, sum, places } = t.get(status) ?? { n: 0, sum: new Dec(0), places: 0 };
      t.set(status, { n: n + 1, sum: amount ? sum.plus(amount['#']) : sum, places: Math.max(places, decimals) });
    }
  });

  await writeIsoXml(path, version, 'CstmrPmtStsRpt', function* (xml) {
    xml.ele({ GrpHdr: { MsgId: isoMessageId(), CreDtTm: new Date().toISOString() } });
    xml.ele({
      OrgnlGrpInfAndSts: {
        OrgnlMsgId: isoText(orgnlMsgId),
        OrgnlMsgNmId: isoText(msgNmId) ?? 'payout-batch',
        ...totalsOf(all, 'GrpSts'),
        NbOfTxsPerSts: [...all].map(([s, t]) => ({ DtldNbOfTxs: String(t.n), DtldSts: s, DtldCtrlSum: ctrlSum([t]) })),
      },
    });
    for (const [id, g] of groups) {
      xml.ele('OrgnlPmtInfAndSts').ele({
        OrgnlPmtInfId: isoText(id),
        ...totalsOf(g.tally, 'PmtInfSts'),
      });
      for (const i of g.rows) {
        const r = table.rows.at(i)!;
        const tx = isoTxOf(r.result);
        const amount = amountOf(r);
        const ccyOfTrf = /^[A-Z]{3}$/.exec(cell(r, 'CcyOfTrf')?.toUpperCase() ?? '')?.[0]; // (the pain.001 gave an equivalent amount)
        const endToEndId = cell(r, 'EndToEndId') ?? cell(r, cols.reference);
        xml.ele({
          TxInfAndSts: {
            OrgnlInstrId: isoId(cell(r, 'InstrId')),
            OrgnlEndToEndId: isoId(endToEndId),
            TxSts: tx.status,
            StsRsnInf: tx.reason && { Rsn: { Cd: tx.reason.code }, AddtlInf: tx.reason.text.map(isoEscaped) },
            AcctSvcrRef: isoId(r.result.payoutRef),
            OrgnlTxRef: (amount || longIdRmtInf(endToEndId)) && {
              Amt: amount && (ccyOfTrf ? { EqvtAmt: { Amt: amount, CcyOfTrf: ccyOfTrf } } : { InstdAmt: amount }),
              RmtInf: longIdRmtInf(endToEndId),
            },
          },
        });
        yield;
      }
      xml.up();
    }
  });
  return version;
}
