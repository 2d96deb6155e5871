// Two retries of one results file at once: the second may not take the name of the first's results
// (retry-N) while the first has not put them in place; each retry's results are a file of their own.
import { readFile } from 'node:fs/promises';

import { afterEach, describe, expect, it, vi } from 'vitest';
import { runBatch } from '../../src/engine/pipeline.ts';
import { readResults } from '../../src/results/read.ts';
import type { LocalSandbox } from '../../src/sandbox/start-sandbox.ts';
import { connectionTo, startSb, unattended } from '../ops/helpers.ts';
import { tempDirs, writeBatch, retryResults } from './helpers.ts';

/** Each retry putting its results in place says so, then waits for `open`. */
const publishing = vi.hoisted(() => ({ entered: [] as ((path: string) => void)[], open: Promise.resolve() }));
vi.mock('../../src/results/write.ts', async (original) => {
  const m = await original<typeof import('../../src/results/write.ts')>();
  return {
    ...m,
    publishResults: async (partial: string, path: string) => {
      publishing.entered.shift()?.(path);
      await publishing.open;
      return m.publishResults(partial, path);
    },
  };
});
const nextPublish = () => new Promise<string>((resolve) => publishing.entered.push(resolve));
/** A retry given a gate waits there before it reserves the batch. */
const reserving = vi.hoisted(() => ({ gates: [] as (() => Promise<void>)[] }));
vi.mock('../../src/engine/prepare.ts', async (original) => {
  const m = await original<typeof import('../../src/engine/prepare.ts')>();
  return {
    ...m,
    reservedSession: async (...args: Parameters<typeof m.reservedSession>) => {
      await reserving.gates.shift()?.();
      return m.reservedSession(...args);
    },
  };
});

let sb: LocalSandbox | undefined;
const dirs = tempDirs('pb-retry-twice-');
afterEach(async () => {
  await sb?.close();
  sb = undefined;
  await dirs.remove();
});

/** A run of two rows whose answers were lost: both outcomes unknown. */
async function unknownOutcomes(dir: string) {
  const file = await writeBatch(dir, 'pay.csv', { rows: 2, currencies: ['GBP'], prefix: 'TWI' });
  let lose = true;
  const via: typeof fetch = async (input, init) => {
    if (lose && (input as string).endsWith('/initiate')) throw new TypeError('fetch failed');
    return fetch(input, init);
  };
  const run = await runBatch({ file, conn: connectionTo(sb!, via), ...unattended({ settleDelayMs: 10 }) });
  expect((await readResults(run.resultsPath)).rows.map((r) => r.result.status)).toEqual(['UNKNOWN_OUTCOME', 'UNKNOWN_OUTCOME']);
  lose = false;
  return run;
}

describe('a second retry of a results file while the first puts its results in place', () => {
  it('is refused as the batch in progress, then writes retry-2: retry-1 stays the first one', async () => {
    sb = await startSb();
    const dir = await dirs.make();
    const run = await unknownOutcomes(dir);
    let open = () => {};
    publishing.open = new Promise((resolve) => (open = resolve));
    const retry = () =>
      retryResults({
        ...unattended({ settleDelayMs: 10 }),
        resultsFile: run.resultsPath,
        conn: connectionTo(sb!),
      });

    const firstPublish = nextPublish();
    const a = retry();
    expect(await firstPublish).toBe(`${dir}/pay.results.retry-1.csv`);
    // the first retry is putting its results in place: a second one now
    const secondPublish = nextPublish();
    const b = retry();
    const second = await Promise.race([
      b.then(
        () => 'sent',
        (e: Error & { reason?: string }) => e.reason ?? e.message,
      ),
      secondPublish.then((path) => `published to ${path}`),
    ]);
    open();
    const first = await a;
    await b.catch(() => undefined);
    expect(second).toBe('batch-in-progress');
    expect(first.resultsPath).toBe(`${dir}/pay.results.retry-1.csv`);
    expect((await readResults(first.resultsPath)).rows.map((r) => r.result.status)).toEqual(['PENDING', 'PENDING']);
    expect((await retry()).resultsPath).toBe(`${dir}/pay.results.retry-2.csv`);
  });

  it('named before the first ended, reserving after: writes retry-2, never over the first retry-1', async () => {
    sb = await startSb();
    const dir = await dirs.make();
    const run = await unknownOutcomes(dir);
    publishing.open = Promise.resolve();
    const retry = () =>
      retryResults({
        ...unattended({ settleDelayMs: 10 }),
        resultsFile: run.resultsPath,
        conn: connectionTo(sb!),
      });
    let arrived = () => {};
    let go = () => {};
    const atGate = new Promise<void>((resolve) => (arrived = resolve));
    reserving.gates.push(() => {
      arrived();
      return new Promise<void>((resolve) => (go = resolve));
    });
    const b = retry();
    await atGate;
    const first = await retry();
    expect(first.resultsPath).toBe(`${dir}/pay.results.retry-1.csv`);
    const firstBytes = await readFile(first.resultsPath);
    go();
    expect((await b).resultsPath).toBe(`${dir}/pay.results.retry-2.csv`);
    expect(await readFile(first.resultsPath)).toEqual(firstBytes);
  });
});
