// `listen` keeps several results files up to date: one that can no longer be read as a results file
// (a copy re-saved without a result column, in a watch folder or named by --results) is skipped and
// said, never a reason to apply the deliveries to no file and no journal.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { startListener } from '../../src/follow-up/webhook-receiver.ts';
import { readResults } from '../../src/results/results.ts';
import { ledgerJournals, listenTeardown, paidBatch, postStatusChange, startSb } from './helpers.ts';

const SECRET = 'whsec_unreadable_0123456789abcdef';
const t = listenTeardown('pb-listen-unreadable-');

it('applies a delivery to the files it can read and to the journal, past one it cannot', async () => {
  t.sb = await startSb();
  const { dir, results, ids } = await paidBatch(t.sb, { rows: 2, dir: await t.dirs.make() });
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

  t.listener = await startListener({ port: 0, secret: SECRET, stateDir: join(dir, 'listen'), results: [broken, results] });
  const r = await postStatusChange(t.listener.url, SECRET, ids[0]!, ['PENDING', 'PROCESSING']);
  expect(r.status).toBe(200);
  await t.listener.idle();
  expect((await readResults(results)).rows.map((x) => x.result.status)).toEqual(['PROCESSING', 'PENDING']);
  const journal = ledgerJournals()
    .map((f) => readFileSync(f, 'utf8'))
    .join('');
  expect(journal).toContain(`"payoutId":"${ids[0]}","status":"PROCESSING"`);
});

it('applies a delivery as it was accepted: a status in other letters is the status', async () => {
  t.sb = await startSb();
  const { dir, results, ids } = await paidBatch(t.sb, { rows: 1, dir: await t.dirs.make() });
  t.listener = await startListener({ port: 0, secret: SECRET, stateDir: join(dir, 'listen'), results: [results] });
  const r = await postStatusChange(t.listener.url, SECRET, ids[0]!, ['pending', 'processing']);
  expect(r.status).toBe(200);
  await t.listener.idle();
  expect((await readResults(results)).rows.map((x) => x.result.status)).toEqual(['PROCESSING']);
});
