// The labelled set (labelled.csv against fixtures/labelled/, a synthetic list in OFAC's SDN format):
// each payee is a true match of the entry it names, or of no entry. Recall: the true matches found
// (hit or review) on their entry; false positives: the non-matches held by any entry.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parse } from 'csv-parse/sync';
import { loadScreener, type Hit, type Thresholds } from '../../src/screening/screening.ts';

export const LABELLED_LIST = fileURLToPath(new URL('fixtures/labelled/sdn.csv', import.meta.url));
export const LABELLED = parse<{ payee: string; entry: string; kind: string }>(readFileSync(new URL('labelled.csv', import.meta.url)), {
  columns: true,
}).map((r, i) => ({ ...r, row: i + 2 }));

export interface Measured {
  recall: number;
  falsePositiveRate: number;
  missed: { payee: string; entry: string; kind: string; hits: Hit[] }[];
  falsePositives: { payee: string; kind: string; hits: Hit[] }[];
  matches: number;
  nonMatches: number;
}

export async function measure(thresholds?: Thresholds): Promise<Measured> {
  const screener = await loadScreener([LABELLED_LIST], thresholds);
  const m: Measured = { recall: 0, falsePositiveRate: 0, missed: [], falsePositives: [], matches: 0, nonMatches: 0 };
  for (const { payee, entry, kind, row } of LABELLED) {
    const hits = screener.screen({ reference: `L${row}`, row, name: payee });
    if (entry) {
      m.matches++;
      if (!hits.some((h) => h.entryId === entry)) m.missed.push({ payee, entry, kind, hits });
    } else {
      m.nonMatches++;
      if (hits.length) m.falsePositives.push({ payee, kind, hits });
    }
  }
  m.recall = 1 - m.missed.length / m.matches;
  m.falsePositiveRate = m.falsePositives.length / m.nonMatches;
  return m;
}
