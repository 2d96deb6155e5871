// Spec §4.13: the webhook subscription routes (readings in ../webhooks.ts).
import type { Handler } from '../context.ts';
import { isApiError, ok, parseWith } from '../errors.ts';
import { RegisterBody, UpdateBody } from '../webhooks.ts';

export const registerWebhook: Handler = (sb, req) => {
  const body = parseWith(RegisterBody, req.body);
  if (isApiError(body)) return body;
  const s = sb.webhooks.register(req.business.id, body);
  return isApiError(s) ? s : ok(s, 201);
};

export const listWebhooks: Handler = (sb, req) => ok({ data: sb.webhooks.list(req.business.id) });

export const getWebhook: Handler = (sb, req) => {
  const s = sb.webhooks.get(req.business.id, req.params.id ?? '');
  return isApiError(s) ? s : ok(s);
};

export const updateWebhook: Handler = (sb, req) => {
  const body = parseWith(UpdateBody, req.body ?? {});
  if (isApiError(body)) return body;
  const s = sb.webhooks.update(req.business.id, req.params.id ?? '', body);
  return isApiError(s) ? s : ok(s);
};

export const deleteWebhook: Handler = (sb, req) => {
  const s = sb.webhooks.remove(req.business.id, req.params.id ?? '');
  return isApiError(s) ? s : ok(s);
};
