// `listen` keeps several results files up to date: one that can no longer be read as a results file
// (a copy re-saved without a result column, in a watch folder or named by --results) is skipped and
// said, never a reason to apply the deliveries to no file and no journal.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { startListener, type RunningListener } from '../../src/follow-up/webhook-receiver.ts';
import { readResults } from '../../src/results/results.ts';
import type { LocalSandbox } from '../../src/sandbox/start-sandbox.ts';
import { tempDirs } from '../engine/helpers.ts';
import { ledgerJournals, paidBatch, postStatusChange, startSb } from './helpers.ts';

const SECRET = 'whsec_unreadable_0123456789abcdef';
const dirs = tempDirs('pb-listen-unreadable-');
let sb: LocalSandbox | undefined;
let listener: RunningListener | undefined;
afterEach(async () => {
  await listener?.close();
  listener = undefined;
  await sb?.close();
  sb = undefined;
  await dirs.remove();
});

it('applies a delivery to the files it can read and to the journal, past one it cannot', async () => {
  sb = await startSb();
  const { dir, results, ids } = await paidBatch(sb, { rows: 2, dir: await dirs.make() });
  // a copy whose status column a person deleted: it still names the payouts
  const broken = join(dir, 'copy.results.csv');
  const lines = readFileSync(results, 'utf8').split('\r\n');
  const drop = lines[0]!.split(',').indexOf('status');
  writeFileSync(
    broken,
    lines
      .map((l) =>
        l
          .split(',')
          .filter((_, i) => i !== drop)
          .join(','),
      )
      .join('\r\n'),
  );
  expect(readFileSync(broken, 'utf8')).toContain(ids[0]!);

  listener = await startListener({ port: 0, secret: SECRET, stateDir: join(dir, 'listen'), results: [broken, results] });
  const r = await postStatusChange(listener.url, SECRET, ids[0]!, ['PENDING', 'PROCESSING']);
  expect(r.status).toBe(200);
  await listener.idle();
  expect((await readResults(results)).rows.map((x) => x.result.status)).toEqual(['PROCESSING', 'PENDING']);
  const journal = ledgerJournals()
    .map((f) => readFileSync(f, 'utf8'))
    .join('');
  expect(journal).toContain(`"payoutId":"${ids[0]}","status":"PROCESSING"`);
});

it('applies a delivery as it was accepted: a status in other letters is the status', async () => {
  sb = await startSb();
  const { dir, results, ids } = await paidBatch(sb, { rows: 1, dir: await dirs.make() });
  listener = await startListener({ port: 0, secret: SECRET, stateDir: join(dir, 'listen'), results: [results] });
  const r = await postStatusChange(listener.url, SECRET, ids[0]!, ['pending', 'processing']);
  expect(r.status).toBe(200);
  await listener.idle();
  expect((await readResults(results)).rows.map((x) => x.result.status)).toEqual(['PROCESSING']);
});
