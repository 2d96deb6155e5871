// The results file is written once, when the run ends (issue 44): never rewritten on a timer while
// rows are sent. A run that lasts longer than the old 3-second checkpoint writes it exactly once.
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { runBatch } from '../../src/engine/pipeline.ts';
import { readResults } from '../../src/results/read.ts';
import { startSandbox, type LocalSandbox } from '../../src/sandbox/start-sandbox.ts';
import { TEST_SHAPES } from '../shapes.ts';
import { connectionTo, unattended } from '../ops/helpers.ts';
import { tempDirs, writeBatch } from './helpers.ts';

const writes = vi.hoisted(() => [] as string[]);
vi.mock('../../src/results/write.ts', async (original) => {
  const m = await original<typeof import('../../src/results/write.ts')>();
  return {
    ...m,
    writeResults: (path: string, table: Parameters<typeof m.writeResults>[1]) => {
      writes.push(path);
      return m.writeResults(path, table);
    },
  };
});

let sb: LocalSandbox | undefined;
const dirs = tempDirs('pb-results-once-');
afterEach(async () => {
  await sb?.close();
  sb = undefined;
  await dirs.remove();
});

describe('the results file of a run', () => {
  it('is written once, at the end, however long the run sends', async () => {
    sb = await startSandbox({ shapes: TEST_SHAPES, rateLimitPerSecond: null });
    const dir = await dirs.make();
    const file = await writeBatch(dir, 'batch.csv', { rows: 3, currencies: ['GBP'] });
    // every initiate answers after 4 s: the run lasts longer than the 3 s the results file was rewritten at
    sb.setFaults({ latencyMs: [4000, 4000], routes: ['initiate'] });
    const r = await runBatch({ file, conn: connectionTo(sb), stateDir: join(dir, 'state'), ...unattended({ settleDelayMs: 10 }) });
    expect(r.kind).toBe('ok');
    expect(writes).toEqual([r.resultsPath]);
    expect((await readResults(r.resultsPath)).rows.map((x) => x.result.status)).toEqual(['PENDING', 'PENDING', 'PENDING']);
  }, 60_000);
});
