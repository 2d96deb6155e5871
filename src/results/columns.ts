// The result columns and how a header row splits into the batch's own columns and the result block.

export const RESULT_COLUMNS = [
  'status',
  'payoutId',
  'payoutRef',
  'idempotencyKey',
  'quotedRate',
  'appliedRate',
  'fee',
  'totalDeductible',
  'destinationAmount',
  'errorCode',
  'errorMessage',
  'requestId',
  'documentUrls',
  'updatedAt',
] as const;

/**
 * Written after RESULT_COLUMNS (so after errorMessage, the positions of the 14 never move), and
 * only when some row holds a value (a results file written by `run` before any payout moved keeps
 * exactly the 14 columns above). Filled by `status`, `listen` and `retry` (src/ops, src/engine):
 *   statusDetail         as the service gives it (ADDITIONAL_INFO_UNDER_REVIEW)
 *   informationRequests  the service's array as compact JSON, while ADDITIONAL_INFO_REQUIRED
 *   statusReason         the service's reason for the latest status (webhook data.reason)
 *   refunded             FAILED/REJECTED: the CREDIT the wallet's transactions show for the payout (exact decimal, source currency)
 *   nextStep             what to do: the `attach` command to answer information requests, `retry --resend-failed`, wait for a refund
 *   earlierPayouts       compact JSON of the payouts this row replaced (failed, refunded, sent again): payoutId, status, amount, fee, refunded
 */
export const OPTIONAL_RESULT_COLUMNS = [
  'statusDetail',
  'informationRequests',
  'statusReason',
  'refunded',
  'nextStep',
  'earlierPayouts',
] as const;

export type ResultColumn = (typeof RESULT_COLUMNS)[number] | (typeof OPTIONAL_RESULT_COLUMNS)[number];

/** Amounts: in XLSX, numbers with a money number format (#,##0.00); see numbers.ts moneyCell. */
export const MONEY_RESULT_COLUMNS: readonly ResultColumn[] = ['fee', 'totalDeductible', 'destinationAmount', 'refunded'];

/** Written as real numbers in XLSX and never neutralised when they hold a plain decimal. */
export const NUMERIC_RESULT_COLUMNS: readonly ResultColumn[] = ['quotedRate', 'appliedRate', ...MONEY_RESULT_COLUMNS];

/** A header row without these is not a results file (retry cannot work without them). */
export const REQUIRED_RESULT_COLUMNS: readonly ResultColumn[] = ['status', 'idempotencyKey'];

const NUMERIC = new Set<string>(NUMERIC_RESULT_COLUMNS);
export const isNumericResultColumn = (c: ResultColumn): boolean => NUMERIC.has(c);

const RESULT_SET = new Set<string>([...RESULT_COLUMNS, ...OPTIONAL_RESULT_COLUMNS]);

/** "fee", or "fee (2)": readBatch makes a repeated header unique with " (n)". */
function baseOf(header: string): string {
  const m = / \((\d+)\)$/.exec(header);
  return m ? header.slice(0, m.index) : header;
}
const resultColumnOf = (header: string): ResultColumn | undefined => {
  const base = RESULT_SET.has(header) ? header : baseOf(header);
  return RESULT_SET.has(base) ? (base as ResultColumn) : undefined;
};

export interface ColumnSplit {
  /** True when every REQUIRED_RESULT_COLUMNS header is present. */
  isResults: boolean;
  /** The batch's own columns, in order: every header that is not in the result block. */
  input: string[];
  /** result column → the header that holds it (when isResults). */
  result: Partial<Record<ResultColumn, string>>;
  /** Result columns absent from the header row. */
  missing: ResultColumn[];
}

/**
 * Splits a header row. The result block comes after the batch's columns, so for each result
 * column the LAST header naming it is the result column; an earlier one is the batch's own (a
 * batch may have its own "status" column).

 *
 * Only a header row holding the required result columns (status, idempotencyKey) is a results
 * layout; otherwise nothing is taken out, so a plain batch with a column that happens to be
 * called "status" keeps it as its own.
 */
export function splitColumns(headers: readonly string[]): ColumnSplit {
  const last = new Map<ResultColumn, number>();
  headers.forEach((h, i) => {
    const c = resultColumnOf(h);
    if (c) last.set(c, i);
  });
  const missing: ResultColumn[] = RESULT_COLUMNS.filter((c) => !last.has(c));
  const isResults = REQUIRED_RESULT_COLUMNS.every((c) => last.has(c));
  if (!isResults) return { isResults, input: [...headers], result: {}, missing };
  const taken = new Set(last.values());
  const result: Partial<Record<ResultColumn, string>> = {};
  for (const [c, i] of last) result[c] = headers[i]!;
  return { isResults, input: headers.filter((_, i) => !taken.has(i)), result, missing };
}
