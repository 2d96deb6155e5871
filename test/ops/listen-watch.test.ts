// `listen --watch-dir W` for a watch with no stateDir in its payout-batch.json: the watch keeps its
// ledger in W/.state (src/watch/inbox.ts layout), so a payout no results file holds yet (its run
// still in processing/) has its change recorded in that batch's journal there.
import { createHmac, randomUUID } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { runBatch } from '../../src/engine/pipeline.ts';
import { startListener, type RunningListener } from '../../src/follow-up/webhook-receiver.ts';
import { foldAll } from '../../src/ledger/account-ledger.ts';
import { ledgerOf } from '../../src/ledger/open.ts';
import type { LocalSandbox } from '../../src/sandbox/start-sandbox.ts';
import { tempDirs } from '../engine/helpers.ts';
import { connectionTo, startSb, unattended, writeBatch } from './helpers.ts';

const SECRET = 'whsec_watch_0123456789abcdef';
const dirs = tempDirs('pb-listen-watch-');
let sb: LocalSandbox | undefined;
let listener: RunningListener | undefined;
afterEach(async () => {
  await listener?.close();
  listener = undefined;
  await sb?.close();
  sb = undefined;
  await dirs.remove();
});

it("records a change in the journal of the watch's own state folder", async () => {
  sb = await startSb();
  const watch = await dirs.make();
  for (const sub of ['inbox', 'processing', 'done', 'failed']) mkdirSync(join(watch, sub));
  const state = join(watch, '.state');
  const elsewhere = await dirs.make(); // (its results file in no folder listen reads)
  const file = await writeBatch(elsewhere, 'payroll.csv', { rows: 1, currencies: ['GBP'] });
  const conn = connectionTo(sb);
  const run = await runBatch({ file, conn, stateDir: state, ...unattended({ settleDelayMs: 10 }) });
  expect(run.kind).toBe('ok');
  const payoutId = [...(await foldAll([ledgerOf(conn, { root: state })]))[0]!.folded.rows.values()][0]!.payout!.id;

  listener = await startListener({ port: 0, secret: SECRET, stateDir: join(state, 'listen'), watchDirs: [watch] });
  const changedAt = new Date(Date.now() + 1000).toISOString();
  const body = JSON.stringify({
    eventType: 'payout.status.changed',
    deliveryId: randomUUID(),
    occurredAt: changedAt,
    data: { payoutId, businessId: 'biz_acme', oldStatus: 'PENDING', newStatus: 'PROCESSING', changedAt },
  });
  const signature = `sha256=${createHmac('sha256', SECRET).update(body).digest('hex')}`;
  const r = await fetch(listener.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-service-delivery-id': randomUUID(), 'x-service-signature': signature },
    body,
  });
  expect(r.status).toBe(200);
  await listener.idle();
  const [batch] = await foldAll([ledgerOf(conn, { root: state })]);
  expect([...batch!.folded.rows.values()][0]!.payout!.status).toBe('PROCESSING');
});
