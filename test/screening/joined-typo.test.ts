import { describe, expect, it } from 'vitest';
import { readList } from '../../src/screening/sanctions-lists.ts';
import { buildIndex, nameScore, nameTokens } from '../../src/screening/match.ts';
import { DEFAULT_THRESHOLDS, loadScreener } from '../../src/screening/screening.ts';
import { LABELLED_LIST } from './labelled.ts';

describe('a payee writing two listed words as one, with a typo', () => {
  it('is held as comparing it with each listed name holds it (Weimin for Wei Ming, Cholun for Chol Ung)', async () => {
    const index = buildIndex([await readList(LABELLED_LIST)]);
    const screener = await loadScreener([LABELLED_LIST]);
    for (const [name, entry] of [
      ['Zhang Weimin', 'ZHANG, Wei Ming'],
      ['Kim Cholun', 'KIM, Chol Ung'],
      ['Jose Luis Fernandesgarcia', 'FERNANDEZ GARCIA, Jose Luis'],
      ['Schwarzindustritechnik GmbH', 'SCHWARZ INDUSTRIETECHNIK GMBH'],
    ]) {
      const listed = index.names.find((n) => n.text === entry)!;
      // (the score alone: a hit)
      expect(nameScore(nameTokens(name!), listed.tokens, DEFAULT_THRESHOLDS.review), name).toBeGreaterThanOrEqual(DEFAULT_THRESHOLDS.hit);
      expect(
        screener.screen({ reference: 'R1', row: 2, name: name! }).map((h) => [h.entryName, h.band]),
        name,
      ).toContainEqual([entry, 'hit']);
    }
  });
});
