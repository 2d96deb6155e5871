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
 *   screeningClearance   the approved clearances its sanctions hits were sent under: id, list entry, who signed, expiry
 */
export const OPTIONAL_RESULT_COLUMNS = [
  'statusDetail',
  'informationRequests',
  'statusReason',
  'refunded',
  'nextStep',
  'earlierPayouts',
  'screeningClearance',
] as const;

export type ResultColumn = (typeof RESULT_COLUMNS)[number] | (typeof OPTIONAL_RESULT_COLUMNS)[number];

/** Amounts: in XLSX, numbers with a money number format (#,##0.00); see numbers.ts numberCell. */
export const MONEY_RESULT_COLUMNS: readonly ResultColumn[] = ['fee', 'totalDeductible', 'destinationAmount', 'refunded'];

/** Written as real numbers in XLSX and never neutralised when they hold a plain decimal. */
export const NUMERIC_RESULT_COLUMNS: readonly ResultColumn[] = ['quotedRate', 'appliedRate', ...MONEY_RESULT_COLUMNS];

/** A header row without these is not a results file (retry cannot work without them). */
export const REQUIRED_RESULT_COLUMNS: readonly ResultColumn[] = ['status', 'idempotencyKey'];

const RESULT_SET = new Set<string>([...RESULT_COLUMNS, ...OPTIONAL_RESULT_COLUMNS]);

/**
 * Put before a result column's name when the batch has its own column of that name (a `status` or
 * `fee` of its own), so every header of a results file is unique: `status` stays the batch's,
 * the result is `result.status`. Put as many times as needed to name no batch column.
 */
export const RESULT_PREFIX = 'result.';

/** "result.result.fee" → { column: 'fee', depth: 2 }; undefined for a header naming no result column. */
function resultColumnOf(header: string): { column: ResultColumn; depth: number } | undefined {
  let depth = 0;
  let name = header;
  while (!RESULT_SET.has(name) && name.startsWith(RESULT_PREFIX)) {
    name = name.slice(RESULT_PREFIX.length);
    depth++;
  }
  return RESULT_SET.has(name) ? { column: name as ResultColumn, depth } : undefined;
}

/**
 * The header of result column `column` in a results file of the batch columns `batchColumns`: its
 * own name, or that name with RESULT_PREFIX put before it once more than on any batch column
 * named like it (`status` → `result.status`; with `result.status` in the batch too,
 * `result.result.status`).
 */
export function resultHeaderOf(column: ResultColumn, batchColumns: readonly string[]): string {
  let deepest = -1;
  for (const h of batchColumns) {
    const named = resultColumnOf(h);
    if (named?.column === column) deepest = Math.max(deepest, named.depth);
  }
  return RESULT_PREFIX.repeat(deepest + 1) + column;
}

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
 * Splits a header row into the batch's own columns and the result columns. Of the headers naming
 * one result column (`status`, `result.status`, ...), the one with the most RESULT_PREFIX is the
 * result column (resultHeaderOf writes it so), the last of them on a tie (the result block comes
 * after the batch's columns); the others are the batch's own.
 *
 * Only a header row holding the required result columns (status, idempotencyKey) is a results
 * layout; otherwise nothing is taken out, so a plain batch with a column that happens to be
 * called "status" keeps it as its own.
 */
export function splitColumns(headers: readonly string[]): ColumnSplit {
  const deepest = new Map<ResultColumn, { index: number; depth: number }>();
  headers.forEach((h, index) => {
    const named = resultColumnOf(h);
    if (!named) return;
    const held = deepest.get(named.column);
    if (!held || named.depth >= held.depth) deepest.set(named.column, { index, depth: named.depth });
  });
  const missing: ResultColumn[] = RESULT_COLUMNS.filter((c) => !deepest.has(c));
  const isResults = REQUIRED_RESULT_COLUMNS.every((c) => deepest.has(c));
  if (!isResults) return { isResults, input: [...headers], result: {}, missing };
  const taken = new Set([...deepest.values()].map((d) => d.index));
  const result: Partial<Record<ResultColumn, string>> = {};
  for (const [c, { index }] of deepest) result[c] = headers[index]!;
  return { isResults, input: headers.filter((_, i) => !taken.has(i)), result, missing };
}
