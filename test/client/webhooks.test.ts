import { describe, expect, it } from 'vitest';
import { verifyWebhook, WebhookVerificationError } from '../../src/client/verify-webhook.ts';
import { signPayload } from '../ops/helpers.ts';

const SECRET = 'whsec_test_3f9a';
const statusEvent = {
  eventType: 'payout.status.changed',
  deliveryId: '6f1c2b8e-4d3a-4c1b-9e2f-1a2b3c4d5e6f',
  occurredAt: '2025-03-01T12:00:00Z',
  data: {
    payoutId: 'p-1',
    businessId: 'b-1',
    oldStatus: 'PENDING',
    newStatus: 'PROCESSING',
    changedAt: '2025-03-01T12:00:00Z',
    reason: 'approved and processing',
  },
};
const walletEvent = {
  eventType: 'wallet.debited',
  deliveryId: '7f1c2b8e-4d3a-4c1b-9e2f-1a2b3c4d5e6f',
  occurredAt: '2025-03-01T12:00:00Z',
  data: {
    businessId: 'b-1',
    amount: 105,
    currency: 'USD',
    transactionId: 't-1',
    createdAt: '2025-03-01T12:00:00Z',
    transactionType: 'dr',
    reference: 'PO-1',
    narration: 'payout',
  },
};

function reason(f: () => unknown): string {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(WebhookVerificationError);
    return (e as WebhookVerificationError).reason;
  }
  throw new Error('expected a refusal');
}

describe('verifyWebhook', () => {
  it('accepts a delivery signed over the raw bytes and reports the header delivery id', () => {
    // Unusual spacing: the signature is over these bytes, not over a re-serialisation.
    const raw = Buffer.from(JSON.stringify(statusEvent, null, 3));
    const v = verifyWebhook({
      rawBody: raw,
      secret: SECRET,
      headers: { 'x-service-signature': signPayload(raw, SECRET), 'X-Service-Delivery-Id': 'delivery-header-1' },
    });
    expect(v.signed).toBe(true);
    expect(v.deliveryId).toBe('delivery-header-1');
    expect(v.event.eventType).toBe('payout.status.changed');
  });

  it('parses the three event types, the legacy name included', () => {
    for (const ev of [
      statusEvent,
      { ...statusEvent, eventType: 'payout.status.changed.v1' },
      walletEvent,
      { ...walletEvent, eventType: 'wallet.credited', data: { ...walletEvent.data, transactionType: 'cr' } },
    ]) {
      const raw = JSON.stringify(ev);
      const v = verifyWebhook({ rawBody: raw, secret: SECRET, headers: new Headers({ 'X-Service-Signature': signPayload(raw, SECRET) }) });
      expect(v.event.eventType).toBe(ev.eventType);
      expect(v.deliveryId).toBe(ev.deliveryId);
    }
  });

  it('refuses a tampered body, a wrong secret, a missing or malformed signature', () => {
    const raw = JSON.stringify(walletEvent);
    const sig = signPayload(raw, SECRET);
    expect(
      reason(() => verifyWebhook({ rawBody: raw.replace('105', '1050'), secret: SECRET, headers: { 'x-service-signature': sig } })),
    ).toBe('bad-signature');
    expect(reason(() => verifyWebhook({ rawBody: raw, secret: 'other', headers: { 'x-service-signature': sig } }))).toBe('bad-signature');
    expect(reason(() => verifyWebhook({ rawBody: raw, secret: SECRET, headers: {} }))).toBe('missing-signature');
    expect(reason(() => verifyWebhook({ rawBody: raw, secret: SECRET, headers: { 'x-service-signature': sig.slice(7) } }))).toBe(
      'malformed-signature',
    );
    expect(reason(() => verifyWebhook({ rawBody: raw, secret: SECRET, headers: { 'x-service-signature': sig.slice(0, -2) } }))).toBe(
      'malformed-signature',
    );
  });

  it('refuses bodies that are not JSON or not an event of the spec', () => {
    const bad = JSON.stringify({ ...statusEvent, data: { ...statusEvent.data, newStatus: 'DONE' } });
    expect(reason(() => verifyWebhook({ rawBody: 'nope', headers: {} }))).toBe('not-json');
    expect(reason(() => verifyWebhook({ rawBody: bad, headers: {} }))).toBe('invalid-event');
  });

  it('takes configurable header names', () => {
    const raw = JSON.stringify(statusEvent);
    const names = { signature: 'X-Maker-Signature', deliveryId: 'X-Maker-Delivery-Id' };
    const v = verifyWebhook({
      rawBody: raw,
      secret: SECRET,
      headerNames: names,
      headers: { 'x-maker-signature': signPayload(raw, SECRET), 'x-maker-delivery-id': 'd-9' },
    });
    expect(v.deliveryId).toBe('d-9');
    expect(
      reason(() =>
        verifyWebhook({ rawBody: raw, secret: SECRET, headerNames: names, headers: { 'x-service-signature': signPayload(raw, SECRET) } }),
      ),
    ).toBe('missing-signature');
  });

  it('accepts unsigned deliveries only when no secret is set', () => {
    const v = verifyWebhook({ rawBody: JSON.stringify(statusEvent), headers: {} });
    expect(v.signed).toBe(false);
  });

  it('compares case-insensitively in hex', () => {
    const raw = JSON.stringify(statusEvent);
    const upper = signPayload(raw, SECRET).toUpperCase().replace('SHA256', 'sha256');
    expect(verifyWebhook({ rawBody: raw, secret: SECRET, headers: { 'x-service-signature': upper } }).signed).toBe(true);
  });
});
