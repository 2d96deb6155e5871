// Spec §6 writes the service's header names with the neutral word "Service" in place of its maker's name: the real
// service sends X-<maker>-Signature and X-<maker>-Delivery-Id. Without names given, the client reads those as the spec's.
import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { verifyWebhook, WebhookVerificationError } from '../../src/client/verify-webhook.ts';

const SECRET = 'whsec_maker_headers_7d21';
const raw = JSON.stringify({
  eventType: 'payout.status.changed',
  occurredAt: '2025-03-01T12:00:00Z',
  data: { payoutId: 'p-1', oldStatus: 'PENDING', newStatus: 'PROCESSING', changedAt: '2025-03-01T12:00:00Z' },
});
const signature = (secret: string) => `sha256=${createHmac('sha256', secret).update(raw).digest('hex')}`;

describe("a delivery under the maker's header names", () => {
  it('is verified by its X-<maker>-Signature and known by its X-<maker>-Delivery-Id', () => {
    const headers = { 'x-acme-pay-signature': signature(SECRET), 'x-acme-pay-delivery-id': 'd-42', 'content-type': 'application/json' };
    const r = verifyWebhook({ rawBody: raw, headers, secret: SECRET });
    expect(r).toMatchObject({ deliveryId: 'd-42', signed: true });
    expect(verifyWebhook({ rawBody: raw, headers: new Headers(headers), secret: SECRET }).deliveryId).toBe('d-42');
  });

  it('is still refused when the signature does not match, or when two makers sign', () => {
    const wrong = () => verifyWebhook({ rawBody: raw, headers: { 'X-Acme-Signature': signature('another secret') }, secret: SECRET });
    expect(wrong).toThrow(WebhookVerificationError);
    expect(wrong).toThrow(/does not match/);
    const two = { 'X-Acme-Signature': signature(SECRET), 'X-Other-Signature': signature(SECRET) };
    expect(() => verifyWebhook({ rawBody: raw, headers: two, secret: SECRET })).toThrow(/no X-Service-Signature/);
  });

  it('names given are taken as given: no other header stands for them', () => {
    const headerNames = { signature: 'X-Custom-Sig', deliveryId: 'X-Custom-Id' };
    const headers = { 'X-Acme-Signature': signature(SECRET) };
    expect(() => verifyWebhook({ rawBody: raw, headers, secret: SECRET, headerNames })).toThrow(/no X-Custom-Sig/);
  });
});
