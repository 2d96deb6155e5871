// The batch's swaps (spec §4.7, §2 Swap) as the results show them: one line per short currency,
// in the run's JSON summary and, in an XLSX results file, on a second sheet "Swaps". A CSV results
// file has no room for them (it stays a valid input for `retry`): the summary carries them.
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
export type SwapColumn = (typeof SWAP_COLUMNS)[number];

/**
 * One swap of the batch: `currency` the short currency it funds, `reference` its payoutRef. Amounts
 * and the rate are exact decimal strings as the service gave them; absent when no swap is known.
 */
export type SwapLine = { currency: string; reference: string; status: string } & Partial<
  Record<Exclude<SwapColumn, 'currency' | 'reference' | 'status'>, string>
>;

export const SWAPS_SHEET = 'Swaps';
