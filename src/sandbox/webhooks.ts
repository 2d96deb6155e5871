// Spec §4.13 and §6: one webhook subscription per business, and the deliveries to it.
//
// Readings (the spec says "not shown" for the record, the bodies and the delivery policy):
// - the stored record is {id, url, eventTypes, hasSecret, createdAt, updatedAt}; the secret is
//   never returned; register answers 201, get/list/update 200, delete 200 with the removed record;
// - a second register while one exists is 409 WEBHOOK_ALREADY_REGISTERED; an unknown id (or one
//   of another business) is 404 WEBHOOK_NOT_FOUND;
// - the url must be HTTPS, except http://127.0.0.1, http://localhost and http://[::1], accepted
//   because there is no TLS on loopback (the register body's schema);
// - deliveries leave after the API answer (never delaying it), each event on its own; an attempt
//   succeeds on any 2xx within the timeout (5 s); otherwise it is retried after 0.5 s, 2 s and
//   10 s (4 attempts in all). Every attempt of one delivery carries the same deliveryId and
//   X-Service-Delivery-Id, so receivers can deduplicate;
// - an attempt goes to the url registered at the moment it leaves; once the subscription is
//   deleted, pending attempts are dropped: nothing goes anywhere else;
// - payout events carry eventType "payout.status.changed" even when the subscription named the
//   legacy "payout.status.changed.v1" (both match the same deliveries, spec §9.2);
// - eventTypes filters payout events only; wallet events always go (spec §4.13).
import { createHmac } from 'node:crypto';
import { z } from 'zod';
import { PAYOUT_STATUS_EVENT, PAYOUT_STATUS_EVENT_LEGACY } from '../spec/codes.ts';
import type { ServiceHeaderNames } from '../spec/endpoints.ts';
import { WebhookRegisterRequest } from '../spec/schemas.ts';
import { later, type Clock } from './clock.ts';
import type { WebhookDeliveryAttempt } from './contract.ts';
import { notFound } from './error-answers.ts';
import { newId } from './ids.ts';
import type { StoreEvent } from './store.ts';

/** "The PATCH body: not shown": url, secret and eventTypes, each optional; secret null removes it. */
export const UpdateBody = WebhookRegisterRequest.partial().extend({ secret: z.string().min(1).nullable().optional() });

export interface SubscriptionRec {
  id: string;
  businessId: string;
  url: string;
  eventTypes: string[];
  secret?: string;
  createdAt: string;
  updatedAt: string;
}

/** "Fields of the stored record as returned: not shown": the record, the secret never in it. */
export function subscriptionView(s: SubscriptionRec) {
  return { id: s.id, url: s.url, eventTypes: [...s.eventTypes], hasSecret: !!s.secret, createdAt: s.createdAt, updatedAt: s.updatedAt };
}

export class Webhooks {
  /** By business: one subscription at most each (spec §4.13). */
  readonly subs = new Map<string, SubscriptionRec>();
  private readonly attempts: WebhookDeliveryAttempt[] = [];
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly inFlight = new Set<AbortController>();
  private closed = false;

  constructor(
    private readonly clock: Clock,
    private readonly settings: { retryDelaysMs: number[]; timeoutMs: number; headers: ServiceHeaderNames },
  ) {}

  /** A subscription of this business by id; 404 WEBHOOK_NOT_FOUND (unknown, or another business's). */
  find(businessId: string, id: string | undefined): SubscriptionRec {
    const s = this.subs.get(businessId);
    if (s && s.id === id) return s;
    throw notFound('WEBHOOK_NOT_FOUND', 'Webhook subscription');
  }

  deliveries(): WebhookDeliveryAttempt[] {
    return this.attempts.map((a) => ({ ...a }));
  }

  /** Attempts scheduled (retries included) or in flight: 0 when nothing more will be sent. */
  pending(): number {
    return this.timers.size + this.inFlight.size;
  }

  private wants(s: SubscriptionRec, eventType: string): boolean {
    if (eventType !== PAYOUT_STATUS_EVENT) return true;
    return s.eventTypes.length === 0 || s.eventTypes.includes(PAYOUT_STATUS_EVENT) || s.eventTypes.includes(PAYOUT_STATUS_EVENT_LEGACY);
  }

  /** Takes an event from the store; sends it after the current answer, if the business listens. */
  publish(e: StoreEvent): void {
    const s = this.subs.get(e.businessId);
    if (!s || this.closed || !this.wants(s, e.eventType)) return;
    const deliveryId = newId();
    const raw = JSON.stringify({ eventType: e.eventType, deliveryId, occurredAt: this.clock.iso(), data: e.data });
    later(this.timers, 0, () => void this.attempt(s.id, e, deliveryId, raw, 1));
  }

  private async attempt(subId: string, e: StoreEvent, deliveryId: string, raw: string, n: number): Promise<void> {
    const s = this.subs.get(e.businessId);
    if (s?.id !== subId || this.closed) return;
    const { headers: names, timeoutMs, retryDelaysMs } = this.settings;
    const headers: Record<string, string> = { 'content-type': 'application/json', [names.deliveryId]: deliveryId };
    if (s.secret) headers[names.signature] = `sha256=${createHmac('sha256', s.secret).update(raw).digest('hex')}`;
    const record: WebhookDeliveryAttempt = {
      deliveryId,
      eventType: e.eventType,
      businessId: e.businessId,
      url: s.url,
      attempt: n,
      status: 0,
      at: this.clock.now(),
    };
    const abort = new AbortController();
    this.inFlight.add(abort);
    const timer = setTimeout(() => abort.abort(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
    try {
      const res = await fetch(s.url, { method: 'POST', headers, body: raw, signal: abort.signal, redirect: 'manual' });
      record.status = res.status;
      await res.arrayBuffer().catch(() => undefined);
    } catch (err) {
      record.error = abort.signal.aborted && abort.signal.reason instanceof Error ? abort.signal.reason.message : (err as Error).message;
    } finally {
      clearTimeout(timer);
      this.inFlight.delete(abort);
    }
    this.attempts.push(record);
    const delivered = record.status >= 200 && record.status < 300;
    const delay = retryDelaysMs[n - 1];
    if (!delivered && delay !== undefined && !this.closed)
      later(this.timers, delay, () => void this.attempt(subId, e, deliveryId, raw, n + 1));
  }

  close(): void {
    this.closed = true;
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
    for (const a of this.inFlight) a.abort(new Error('sandbox closed'));
  }
}
