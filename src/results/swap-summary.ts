// The batch's swaps (spec §4.7, §2 Swap), one line per short currency: in the run's summary and
// an XLSX results file's "Swaps" sheet (a CSV results file has none: it stays a `retry` input).
/** Amounts of a swap: in XLSX, numbers with a money format, as the results' amounts (numbers.ts). */
export const SWAP_AMOUNT_COLUMNS: readonly SwapColumn[] = ['sourceAmount', 'destinationAmount'];

/** The columns of the Swaps sheet and the fields of a summary's swap, in the spec's words (§2 Swap). */
export const SWAP_COLUMNS = [
  'currency',
  'reference',
  'id',
  'status',
  'sourceAmount',
  'sourceCurrency',
  'destinationAmount',
  'destinationCurrency',
  'exchangeRate',
] as const;
type SwapColumn = (typeof SWAP_COLUMNS)[number];

/** One swap: `currency` the short currency it funds, `reference` its payoutRef; amounts exact decimal strings. */
export type SwapLine = { currency: string; reference: string; status: string } & Partial<
  Record<Exclude<SwapColumn, 'currency' | 'reference' | 'status'>, string>
>;

export const SWAPS_SHEET = 'Swaps';
