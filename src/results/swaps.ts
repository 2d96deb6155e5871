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

/** What a swap's journal state (engine/swap.ts SwapState) holds that the results show. */
export interface SwapStateLike {
  currency: string;
  reference: string;
  phase: string;
  swap?: {
    id: string;
    status: string;
    sourceAmount?: string;
    sourceCurrency?: string;
    destinationAmount?: string;
    destinationCurrency?: string;
    exchangeRate?: string;
  };
}

/**
 * Without a swap known, the state in the results' words (src/results/README.md): sent with no
 * answer yet (UNKNOWN_OUTCOME: settled through the swaps list), refused by the service
 * (FAILED_TO_SEND), or the rate moved and no swap was made (NOT_SENT).
 */
const WORD_OF_PHASE: Record<string, string> = {
  initiating: 'UNKNOWN_OUTCOME',
  unknown: 'UNKNOWN_OUTCOME',
  rejected: 'FAILED_TO_SEND',
  'stale-rate': 'NOT_SENT',
};

/** The batch's swaps, in currency order. */
export function swapLinesOf(states: Iterable<SwapStateLike>): SwapLine[] {
  return [...states]
    .sort((a, b) => a.currency.localeCompare(b.currency))
    .map(({ currency, reference, phase, swap: s }) => {
      if (!s) return { currency, reference, status: WORD_OF_PHASE[phase] ?? 'UNKNOWN_OUTCOME' };
      const { id, status, sourceAmount, sourceCurrency, destinationAmount, destinationCurrency, exchangeRate } = s;
      const line: SwapLine = {
        currency,
        reference,
        id,
        status,
        sourceAmount,
        sourceCurrency,
        destinationAmount,
        destinationCurrency,
        exchangeRate,
      };
      for (const k of SWAP_COLUMNS) if (line[k] === undefined) delete line[k];
      return line;
    });
}
