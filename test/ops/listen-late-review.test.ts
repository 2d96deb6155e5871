// `listen` with deliveries out of order around a second request for information (spec §3, §6): the
// payout was asked (T1), answered (under review, T2) and asked again (T3); the T2 delivery arriving
// after the T3 one is older than what the row holds and must not move it to "under review".
import { createHmac, randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startListener } from '../../src/follow-up/webhook-receiver.ts';
import { readResults } from '../../src/results/results.ts';
import { listenTeardown, paidBatch, startSb } from './helpers.ts';

const SECRET = 'whsec_late_review_0123456789ab';
const t = listenTeardown('pb-listen-late-review-');

/** T1, T2, T3: minutes after the batch was created. */
const at = (minutes: number) => new Date(Date.now() + minutes * 60_000).toISOString();
const sign = (body: string) => `sha256=${createHmac('sha256', SECRET).update(body).digest('hex')}`;
const deliver = async (data: Record<string, unknown>) => {
  const body = JSON.stringify({ eventType: 'payout.status.changed', deliveryId: randomUUID(), occurredAt: data.changedAt, data });
  const r = await fetch(t.listener!.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-service-delivery-id': randomUUID(), 'x-service-signature': sign(body) },
    body,
  });
  return r.status;
};

describe('listen: a late "under review" after a second request for information', () => {
  it('leaves the row ADDITIONAL_INFO_REQUIRED with the newer request', async () => {
    t.sb = await startSb();
    const { results, ids } = await paidBatch(t.sb, { rows: 1, dir: await t.dirs.make() });
    t.listener = await startListener({ port: 0, secret: SECRET, stateDir: join(results, '..', 'listen-state'), results: [results] });
    const payoutId = ids[0]!;
    const [t1, t2, t3] = [at(1), at(2), at(3)];
    const request = (title: string) => [{ title, type: 'FILE' }];
    const asked = { payoutId, oldStatus: 'PENDING', newStatus: 'ADDITIONAL_INFO_REQUIRED', informationRequests: request('Invoice') };
    expect(await deliver({ ...asked, changedAt: t1 })).toBe(200);
    // T3 (asked again) arrives before T2 (under review)
    const again = {
      ...asked,
      oldStatus: 'PENDING',
      oldStatusDetail: 'ADDITIONAL_INFO_UNDER_REVIEW',
      informationRequests: request('Signed invoice'),
    };
    expect(await deliver({ ...again, changedAt: t3 })).toBe(200);
    const review = {
      payoutId,
      oldStatus: 'ADDITIONAL_INFO_REQUIRED',
      newStatus: 'PENDING',
      newStatusDetail: 'ADDITIONAL_INFO_UNDER_REVIEW',
    };
    expect(await deliver({ ...review, changedAt: t2 })).toBe(200);
    await t.listener.idle();

    const row = (await readResults(results)).rows[0]!.result;
    expect(row.status).toBe('ADDITIONAL_INFO_REQUIRED');
    expect(row.statusDetail).toBeUndefined();
    expect(row.informationRequests).toContain('Signed invoice');
    expect(row.updatedAt).toBe(t3);
  });
});
