// The commands a results report suggests run as shown when copied into a shell: every value from the
// file (its path, a row's payoutId) is one shell word, read back as itself.
import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { resultsViewOf } from '../../src/report/model.ts';
import type { ResultsTable } from '../../src/results/results.ts';
import { shellWord } from '../../src/text.ts';

const tableOf = (status: string, payoutId: string): ResultsTable => ({
  format: 'csv',
  inputColumns: ['reference', 'sourceAmount', 'sourceCurrency'],
  rows: [{ rowNumber: 2, cells: { reference: 'R-2', sourceAmount: '10', sourceCurrency: 'EUR' }, result: { status, payoutId } }],
});

/** The words sh reads from a command line (printed one a line by printf). */
const wordsOf = (line: string): string[] =>
  execFileSync('/bin/sh', ['-c', `printf '%s\\n' ${line.replace(/^payout-batch /, '')}`], { encoding: 'utf8' })
    .split('\n')
    .slice(0, -1);

describe('commands suggested by a results report', () => {
  it("quote a row's payoutId: a cell of the file never becomes shell syntax", async () => {
    const id = 'x; touch /tmp/pwned $(id)';
    const [action] = (await resultsViewOf(tableOf('ADDITIONAL_INFO_REQUIRED', id), '/data/b.results.csv')).action;
    expect(action!.command).toBe(`payout-batch attach 'x; touch /tmp/pwned $(id)' FILE...`);
    expect(wordsOf(action!.command!)).toEqual(['attach', id, 'FILE...']);
  });

  it('name the results file as it is, a "$&" or "$\'" in its path included', async () => {
    for (const file of ['/data/a$&b.results.csv', "/data/it's $'x.results.csv", '/data/$$.results.csv']) {
      const [action] = (await resultsViewOf(tableOf('FAILED_TO_SEND', ''), file)).action;
      expect(wordsOf(action!.command!)).toEqual(['retry', file]);
    }
  });

  it('shellWord gives one word sh reads back as itself', () => {
    for (const w of ['plain.csv', '/a b/c.csv', "it's", '$HOME', '`id`', '=ls', '', '!x', '*', '~/x'])
      expect(wordsOf(`payout-batch ${shellWord(w)}`)).toEqual([w]);
  });
});
