// Issue 17 item 10: once rows may have been sent, no failure exits 2 ("nothing was sent"): it is 4,
// resume is safe, and the journal is closed. The failure here: the results file cannot be written
// at the end (a folder appears at its path once the first initiate has reached the service).
import { mkdirSync, readFileSync, readdirSync, readlinkSync } from 'node:fs';
import { rmdir } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runBatch } from '../../src/engine/pipeline.ts';
import { FailedAfterSending } from '../../src/engine/engine-errors.ts';
import { startSandbox, type LocalSandbox } from '../../src/sandbox/start-sandbox.ts';
import { TEST_SHAPES } from '../shapes.ts';
import { allPayouts, cleanEnv, initiates, runCli, runMain, tempDirs, writeBatch } from './helpers.ts';
import { UNATTENDED, connectionTo } from '../ops/helpers.ts';

const dirs = tempDirs('pb-after-send-');
let sb: LocalSandbox | undefined;
afterEach(async () => {
  await sb?.close();
  sb = undefined;
  await dirs.remove();
});

/** A sandbox that puts a folder where the results file goes when the first initiate arrives. */
async function sandboxBlocking(resultsPath: string): Promise<LocalSandbox> {
  return startSandbox({
    shapes: TEST_SHAPES,
    rateLimitPerSecond: null,
    onRequest: (e) => {
      if (e.route === 'initiate') mkdirSync(resultsPath, { recursive: true });
    },
  });
}

/** The journal's lines, each parsed (a torn or unfinished line throws). */
function journalLines(path: string): { t: string; exitCode?: number }[] {
  const text = readFileSync(path, 'utf8');
  expect(text.endsWith('\n')).toBe(true);
  return text
    .trimEnd()
    .split('\n')
    .map((l) => JSON.parse(l) as { t: string; exitCode?: number });
}

/** Files this process holds open (Linux). */
function openFiles(): string[] {
  return readdirSync('/proc/self/fd').flatMap((fd) => {
    try {
      return [readlinkSync(`/proc/self/fd/${fd}`)];
    } catch {
      return [];
    }
  });
}

describe('a failure after sending began', () => {
  it('is FailedAfterSending, with the journal closed and ended (run-end, halted)', async () => {
    const dir = await dirs.make();
    const file = await writeBatch(dir, 'payroll.csv', { rows: 3 });
    const resultsPath = join(dir, 'payroll.results.csv');
    sb = await sandboxBlocking(resultsPath);
    const e = await runBatch({ ...UNATTENDED, file, conn: connectionTo(sb) }).then(
      () => undefined,
      (x: unknown) => x,
    );
    expect(e).toBeInstanceOf(FailedAfterSending);
    const failed = e as FailedAfterSending;
    expect(failed.message).toMatch(/cannot write the results file: a folder has that name/);
    expect(openFiles()).not.toContain(failed.journalPath);
    const lines = journalLines(failed.journalPath);
    expect(lines.filter((l) => l.t === 'created')).toHaveLength(3);
    expect(lines.at(-1)).toMatchObject({ t: 'run-end', kind: 'halted' });
  });

  it('the CLI exits 4 saying resume is safe; the same command then resumes without paying twice', async () => {
    const dir = await dirs.make();
    await writeBatch(dir, 'payroll.csv', { rows: 3 });
    const resultsPath = join(dir, 'payroll.results.csv');
    sb = await sandboxBlocking(resultsPath);
    const env = cleanEnv({ PAYOUT_BATCH_STATE_DIR: join(dir, 'state') });
    const run = (how = runCli) => how(['run', 'payroll.csv', '--yes', '--base-url', sb!.url, '--rate', '100'], { cwd: dir, env });

    const first = await run();
    expect(first.code, first.stderr).toBe(4);
    expect(first.stderr).toMatch(/the run failed after sending began: .*cannot write the results file/);
    expect(first.stderr).toMatch(/Part of the batch may have been sent.*Resume is safe/s);
    expect(first.stderr).not.toMatch(/unexpected error|nothing was sent/i);
    const journal = /in the journal \(([^)]+)\)/.exec(first.stderr)![1]!;
    expect(journalLines(journal).at(-1)).toMatchObject({ t: 'run-end', kind: 'halted' });
    const sent = initiates(sb).length;
    expect(sent).toBe(3);

    await rmdir(resultsPath);
    const again = await run(runMain); // (the resume by main() in this process: the exit 4 is the process)
    expect(again.code, again.stderr).toBe(0);
    expect(initiates(sb).length).toBe(sent);
    expect(await allPayouts(sb)).toHaveLength(3);
  });
});
