// The webhook subscription routes (spec §4.13); readings in ../webhooks.ts.
import { WEBHOOKS_PREFIX as W } from '../../spec/endpoints.ts';
import { WebhookRegisterRequest } from '../../spec/schemas.ts';
import { route } from '../context.ts';
import { apiError, ok } from '../http.ts';
import { newId } from '../ids.ts';
import { UpdateBody, subscriptionView, type SubscriptionRec } from '../webhooks.ts';

export const SUBSCRIPTION_ROUTES = [
  route('registerWebhook', 'POST', W, WebhookRegisterRequest, (sb, req, body) => {
    const existing = sb.webhooks.subs.get(req.business.id);
    if (existing) {
      return apiError(
        409,
        'WEBHOOK_ALREADY_REGISTERED',
        `This business already has a webhook subscription (${existing.id}); PATCH it or delete it first`,
      );
    }
    const now = sb.clock.iso();
    const s: SubscriptionRec = {
      id: newId(),
      businessId: req.business.id,
      url: body.url,
      eventTypes: body.eventTypes ?? [],
      createdAt: now,
      updatedAt: now,
      ...(body.secret ? { secret: body.secret } : {}),
    };
    sb.webhooks.subs.set(s.businessId, s);
    return ok(subscriptionView(s), 201);
  }),
  route('listWebhooks', 'GET', W, null, (sb, req) => {
    const s = sb.webhooks.subs.get(req.business.id);
    return ok({ data: s ? [subscriptionView(s)] : [] });
  }),
  route('getWebhook', 'GET', `${W}/:id`, null, (sb, req) => ok(subscriptionView(sb.webhooks.find(req.business.id, req.params.id)))),
  route('updateWebhook', 'PATCH', `${W}/:id`, UpdateBody, (sb, req, body) => {
    const s = sb.webhooks.find(req.business.id, req.params.id);
    if (body.url !== undefined) s.url = body.url;
    if (body.secret === null) delete s.secret;
    else if (body.secret !== undefined) s.secret = body.secret;
    if (body.eventTypes !== undefined) s.eventTypes = body.eventTypes;
    s.updatedAt = sb.clock.iso();
    return ok(subscriptionView(s));
  }),
  route('deleteWebhook', 'DELETE', `${W}/:id`, null, (sb, req) => {
    const s = sb.webhooks.find(req.business.id, req.params.id);
    sb.webhooks.subs.delete(s.businessId);
    return ok(subscriptionView(s));
  }),
];
