// `listen --watch-dir W` for a watch with no stateDir in its payout-batch.json: the watch keeps its
// ledger in W/.state (src/watch/inbox.ts layout, which listen passes on), so a payout no results file holds yet (its run
// still in processing/) has its change recorded in that batch's journal there.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { runBatch } from '../../src/engine/pipeline.ts';
import { startListener } from '../../src/follow-up/webhook-receiver.ts';
import { foldAll } from '../../src/ledger/account-ledger.ts';
import { ledgerOf } from '../../src/ledger/open.ts';
import { layout } from '../../src/watch/inbox.ts';
import { connectionTo, listenTeardown, postStatusChange, startSb, unattended, writeBatch } from './helpers.ts';

const SECRET = 'whsec_watch_0123456789abcdef';
const t = listenTeardown('pb-listen-watch-');

it("records a change in the journal of the watch's own state folder", async () => {
  t.sb = await startSb();
  const watch = await t.dirs.make();
  for (const sub of ['inbox', 'processing', 'done', 'failed']) mkdirSync(join(watch, sub));
  const state = join(watch, '.state');
  const elsewhere = await t.dirs.make(); // (its results file in no folder listen reads)
  const file = await writeBatch(elsewhere, 'payroll.csv', { rows: 1, currencies: ['GBP'] });
  const conn = connectionTo(t.sb);
  const run = await runBatch({ file, conn, stateDir: state, ...unattended({ settleDelayMs: 10 }) });
  expect(run.kind).toBe('ok');
  const payoutId = [...(await foldAll([ledgerOf(conn, { root: state })]))[0]!.folded.rows.values()][0]!.payout!.id;

  t.listener = await startListener({
    port: 0,
    secret: SECRET,
    stateDir: join(state, 'listen'),
    watchDirs: [{ dir: watch, state: layout(watch, {}).state }],
  });
  const r = await postStatusChange(t.listener.url, SECRET, payoutId, ['PENDING', 'PROCESSING']);
  expect(r.status).toBe(200);
  await t.listener.idle();
  const [batch] = await foldAll([ledgerOf(conn, { root: state })]);
  expect([...batch!.folded.rows.values()][0]!.payout!.status).toBe('PROCESSING');
});
