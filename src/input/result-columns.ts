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

/** Written after RESULT_COLUMNS (whose positions never move), only when some row holds a value. */
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

/** Put before a result column's name (as many times as needed) when the batch has its own column of that name. */
const RESULT_PREFIX = 'result.';

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

/** The header of a result column beside `batchColumns`: `status`, or `result.status` when the batch has one, and so on. */
export function resultHeaderOf(column: ResultColumn, batchColumns: readonly string[]): string {
  const depths = batchColumns.map(resultColumnOf).flatMap((named) => (named?.column === column ? [named.depth] : []));
  return RESULT_PREFIX.repeat(Math.max(-1, ...depths) + 1) + column;
}

/**
 * Splits a header row into the batch's own columns (`input`, in order) and the result columns
 * (`result`: each to the header that holds it): of the headers naming one result column, the most
 * prefixed (the last on a tie) is the result's. `isResults`: every REQUIRED_RESULT_COLUMNS header is
 * present; without them nothing is taken out: a batch's own "status" stays its own.
 */
export function splitColumns(headers: readonly string[]) {
  const deepest = new Map<ResultColumn, { index: number; depth: number }>();
  headers.forEach((h, index) => {
    const named = resultColumnOf(h);
    if (!named) return;
    const held = deepest.get(named.column);
    if (!held || named.depth >= held.depth) deepest.set(named.column, { index, depth: named.depth });
  });
  const missing: ResultColumn[] = RESULT_COLUMNS.filter((c) => !deepest.has(c));
  const isResults = REQUIRED_RESULT_COLUMNS.every((c) => deepest.has(c));
  const result: Partial<Record<ResultColumn, string>> = {};
  if (isResults) for (const [c, { index }] of deepest) result[c] = headers[index]!;
  const taken = new Set(isResults ? [...deepest.values()].map((d) => d.index) : []);
  return { isResults, input: headers.filter((_, i) => !taken.has(i)), result, missing };
}
