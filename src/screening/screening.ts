// Screening payees against sanctions lists, offline: read (sanctions-lists.ts), index and compare (match.ts).
import { readList, ScreeningError, type Payee, type Thresholds, type Hit } from './sanctions-lists.ts';
import { buildIndex, screenPayee } from './match.ts';

export * from './sanctions-lists.ts';
export const DEFAULT_THRESHOLDS: Thresholds = { hit: 0.92, review: 0.85 };

/** Reads every list (an unreadable or unknown one throws, never counts as empty) and indexes their entries once. */
export async function loadScreener(paths: string[], thresholds: Thresholds = DEFAULT_THRESHOLDS) {
  if (!(thresholds.review > 0 && thresholds.review <= thresholds.hit && thresholds.hit <= 1))
    throw new ScreeningError(
      'THRESHOLDS',
      `thresholds must satisfy 0 < review <= hit <= 1 (got hit ${thresholds.hit}, review ${thresholds.review})`,
    );
  const read = [];
  for (const path of paths) read.push(await readList(path));
  const index = buildIndex(read);
  return { lists: read.map((r) => r.info), screen: (payee: Payee): Hit[] => screenPayee(index, payee, thresholds) };
}
