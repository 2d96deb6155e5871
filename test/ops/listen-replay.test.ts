// `listen` against replays of signed deliveries under new delivery ids (issue 17, item 9): the
// inbox keeps one record per event (its type and data), also after a restart; a replay is answered 200 as a duplicate and applied once.
import { createHmac, randomUUID } from 'node:crypto';
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { MAX_DELIVERY_BYTES, startListener } from '../../src/follow-up/webhook-receiver.ts';
import { readResults } from '../../src/results/results.ts';
import { listenTeardown, paidBatch, startSb } from './helpers.ts';

const SECRET = 'whsec_replay_0123456789abcdef';
const t = listenTeardown('pb-listen-replay-');

const sign = (body: string) => `sha256=${createHmac('sha256', SECRET).update(body).digest('hex')}`;
/** Posts `body` signed, under the delivery id given (a replay: the same body, a new id). */
const deliver = async (body: string, deliveryId: string) => {
  const r = await fetch(t.listener!.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-service-delivery-id': deliveryId, 'x-service-signature': sign(body) },
    body,
  });
  return { status: r.status, body: (await r.json()) as Record<string, unknown> };
};
const statusChanged = (payoutId: string, newStatus: string, changedAt: string) =>
  JSON.stringify({
    eventType: 'payout.status.changed',
    deliveryId: randomUUID(),
    occurredAt: changedAt,
    data: { payoutId, businessId: 'biz_acme', oldStatus: 'PENDING', newStatus, changedAt },
  });
const inboxLines = (stateDir: string) =>
  readFileSync(join(stateDir, 'inbox.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
const deliveries = (stateDir: string) => inboxLines(stateDir).filter((l) => l.t === 'delivery');

async function setup() {
  t.sb = await startSb();
  const batch = await paidBatch(t.sb, { rows: 2, dir: await t.dirs.make() });
  const stateDir = join(batch.dir, 'listen-state');
  t.listener = await startListener({ port: 0, secret: SECRET, stateDir, results: [batch.results] });
  return { ...batch, stateDir };
}

describe('listen: one record per event, whatever the delivery id', () => {
  it('a signed body replayed under new delivery ids is answered 200 as a duplicate, recorded and applied once, also after a restart', async () => {
    const { results, ids, stateDir } = await setup();
    const body = statusChanged(ids[0]!, 'PROCESSING', new Date().toISOString());
    expect(await deliver(body, randomUUID())).toEqual({ status: 200, body: { received: true } });
    for (let i = 0; i < 5; i++)
      expect(await deliver(body, randomUUID())).toEqual({ status: 200, body: { received: true, duplicate: true } });
    await t.listener!.idle();
    expect(t.listener!.stats()).toMatchObject({ accepted: 1, duplicates: 5, applied: 1 });
    expect(deliveries(stateDir)).toHaveLength(1);
    expect((await readResults(results)).rows[0]!.result.status).toBe('PROCESSING');

    // Restarted on the same state folder: the keys are rebuilt from the inbox file.
    await t.listener!.close();
    t.listener = await startListener({ port: 0, secret: SECRET, stateDir, results: [results] });
    expect(await deliver(body, randomUUID())).toEqual({ status: 200, body: { received: true, duplicate: true } });
    // Another event of the same payout is another record.
    const later = statusChanged(ids[0]!, 'SUCCESSFUL', new Date(Date.now() + 1000).toISOString());
    expect(await deliver(later, randomUUID())).toEqual({ status: 200, body: { received: true } });
    expect(await deliver(later, randomUUID())).toEqual({ status: 200, body: { received: true, duplicate: true } });
    await t.listener.idle();
    expect(t.listener.stats()).toMatchObject({ accepted: 1, duplicates: 2, applied: 1 });
    expect(deliveries(stateDir).map((l) => JSON.parse(l.raw).data.newStatus)).toEqual(['PROCESSING', 'SUCCESSFUL']);
    expect((await readResults(results)).rows[0]!.result.status).toBe('SUCCESSFUL');
  });

  it('an empty delivery id header is no id: two events under one are both recorded and applied', async () => {
    const { results, ids, stateDir } = await setup();
    const first = statusChanged(ids[0]!, 'PROCESSING', new Date().toISOString());
    const second = statusChanged(ids[1]!, 'PROCESSING', new Date().toISOString());
    expect(await deliver(first, '')).toEqual({ status: 200, body: { received: true } });
    expect(await deliver(second, '')).toEqual({ status: 200, body: { received: true } });
    await t.listener!.idle();
    expect(deliveries(stateDir).map((l) => l.deliveryId)).toEqual([JSON.parse(first).deliveryId, JSON.parse(second).deliveryId]);
    expect((await readResults(results)).rows.map((r) => r.result.status)).toEqual(['PROCESSING', 'PROCESSING']);
  });

  it('a wallet event replayed under a new id is one record; a body over the limit is refused (413) and not recorded', async () => {
    const { stateDir } = await setup();
    const wallet = JSON.stringify({
      eventType: 'wallet.credited',
      deliveryId: randomUUID(),
      occurredAt: new Date().toISOString(),
      data: {
        businessId: 'biz_acme',
        amount: 10,
        currency: 'GBP',
        transactionId: 'txn_replay_1',
        createdAt: new Date().toISOString(),
        transactionType: 'cr',
        reference: 'TOPUP-1',
        narration: 'top-up',
      },
    });
    expect((await deliver(wallet, randomUUID())).body).toEqual({ received: true });
    expect((await deliver(wallet, randomUUID())).body).toEqual({ received: true, duplicate: true });
    const big = wallet.replace('"top-up"', JSON.stringify('x'.repeat(MAX_DELIVERY_BYTES)));
    expect((await deliver(big, randomUUID())).status).toBe(413);
    await t.listener!.idle();
    expect(deliveries(stateDir)).toHaveLength(1);
  });
});

describe('a start that fails', () => {
  it('lets the state folder go: an inbox it cannot read leaves no lock behind', async () => {
    const stateDir = await t.dirs.make();
    // (a folder where the inbox file belongs: reading it fails)
    mkdirSync(join(stateDir, 'inbox.jsonl'));
    await expect(startListener({ port: 0, secret: SECRET, stateDir })).rejects.toThrow();
    rmSync(join(stateDir, 'inbox.jsonl'), { recursive: true });
    t.listener = await startListener({ port: 0, secret: SECRET, stateDir });
    expect(t.listener.stats().accepted).toBe(0);
  });
});
