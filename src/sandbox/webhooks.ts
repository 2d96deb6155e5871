// Spec §4.13 and §6: one webhook subscription per business, and the deliveries to it. Readings ("not shown"):
// - the record is {id, url, eventTypes, hasSecret, createdAt, updatedAt}, never the secret; register 201,
//   the others 200 (delete with the removed record); a second register 409, an unknown id 404;
// - deliveries leave after the answer, each event on its own; any 2xx within 5 s succeeds, else retried
//   after 0.5, 2 and 10 s, every attempt with the same deliveryId so receivers can deduplicate;
// - an attempt goes to the url registered when it leaves; once deleted, pending attempts are dropped;
// - eventType is "payout.status.changed" even for a subscription to the legacy ".v1" (spec §9.2);
//   eventTypes names payout events only (§4.13, the body schema), so it holds back no event.
import { createHmac } from 'node:crypto';
import * as z from 'zod';
import type { ServiceHeaderNames } from '../spec/endpoints.ts';
import { WebhookUpdateRequest } from '../spec/schemas.ts';
import { later, type Clock } from './clock.ts';
import type { WebhookDeliveryAttempt } from './contract.ts';
import { apiError } from './http.ts';
import { newId } from './ids.ts';
import type { StoreEvent } from './store.ts';

/** "The PATCH body: not shown": each field optional, none at all too; secret null removes it. */
export const UpdateBody = WebhookUpdateRequest.extend({ secret: z.string().min(1).nullable().optional() }).default({});

export interface SubscriptionRec {
  id: string;
  businessId: string;
  url: string;
  eventTypes: string[];
  secret?: string;
  createdAt: string;
  updatedAt: string;
}

export function subscriptionView(s: SubscriptionRec) {
  return { id: s.id, url: s.url, eventTypes: [...s.eventTypes], hasSecret: !!s.secret, createdAt: s.createdAt, updatedAt: s.updatedAt };
}

export class Webhooks {
  /** By business (spec §4.13: one subscription each). */
  readonly subs = new Map<string, SubscriptionRec>();
  private readonly attempts: WebhookDeliveryAttempt[] = [];
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly inFlight = new Set<AbortController>();
  private closed = false;

  constructor(
    private readonly clock: Clock,
    private readonly settings: { retryDelaysMs: number[]; timeoutMs: number; headers: ServiceHeaderNames },
  ) {}

  find(businessId: string, id: string | undefined): SubscriptionRec {
    const s = this.subs.get(businessId);
    if (s && s.id === id) return s;
    throw apiError(404, 'WEBHOOK_NOT_FOUND', 'Webhook subscription not found');
  }

  deliveries(): WebhookDeliveryAttempt[] {
    return this.attempts.map((a) => ({ ...a }));
  }

  pending(): number {
    return this.timers.size + this.inFlight.size;
  }

  publish(e: StoreEvent): void {
    const s = this.subs.get(e.businessId);
    if (!s || this.closed) return;
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
    const delay = retryDelaysMs[n - 1];
    if ((record.status < 200 || record.status >= 300) && delay !== undefined && !this.closed)
      later(this.timers, delay, () => void this.attempt(subId, e, deliveryId, raw, n + 1));
  }

  close(): void {
    this.closed = true;
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
    for (const a of this.inFlight) a.abort(new Error('sandbox closed'));
  }
}
