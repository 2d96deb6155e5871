// The commands the CLI prints for the user to run next are copied into a shell as they are: every
// path, id or name in them is one shell word, read back as itself (no $ expansion, no split at a space).
import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { exitReasonText } from '../../src/cli/render.ts';
import { fundBySwapCommand } from '../../src/cli/commands/run.ts';
import type { PipelineResult } from '../../src/engine/pipeline.ts';

/** The words sh reads from the first `payout-batch ...` command in backquotes or after "run ", printed one a line. */
const wordsOf = (command: string): string[] =>
  execFileSync('/bin/sh', ['-c', `printf '%s\\n' ${command.replace(/^payout-batch /, '')}`], { encoding: 'utf8' })
    .split('\n')
    .slice(0, -1);

const PATH = "/data/Pay Roll $HOME/jan's $(id).results.csv";

describe('commands the CLI prints', () => {
  it('name the results file of a run with rows to retry as one word', () => {
    const r = {
      summary: { notCreated: 1, byStatus: { FAILED_TO_SEND: 1 }, outcomes: {} },
      resultsPath: PATH,
    } as unknown as PipelineResult;
    const command = /`(payout-batch retry [^`]*)`/.exec(exitReasonText(r, ' --env sandbox'))?.[1];
    expect(wordsOf(command!)).toEqual(['retry', PATH, '--env', 'sandbox']);
  });

  it('name the batch file of a run to fund by a swap as one word, never in double quotes ($ expands there)', () => {
    const file = 'pay $HOME.csv';
    const text = fundBySwapCommand({ file, 'swap-from': 'EUR' } as Parameters<typeof fundBySwapCommand>[0]);
    const command = /`([^`]*)`/.exec(text)?.[1];
    expect(wordsOf(command!)).toEqual(['run', file, '--swap-from', 'EUR', '--fund-by-swap']);
  });
});
