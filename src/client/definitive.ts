// Did the service itself say it did not act? A proxy or gateway may answer a mutating request after
// the service acted (a 408 to a created initiate; a 400 RESPONSE_BLOCKED in the service's shape), so
// the service's refusals are a closed list: the spec's error table (§7, spec/codes.ts ERROR_STATUS).
import { ERROR_STATUS, INVALID_PAYOUT_AMOUNT_MESSAGE } from '../spec/codes.ts';
import { attempt } from '../files/attempt.ts';
import type { Outcome } from './errors.ts';

/** Statuses that never prove the service did not act, whatever their body says. */
export const NEVER_DEFINITIVE: ReadonlySet<number> = new Set([408, 425, 499]);

/** A framework's "Bad Request" in `error` is not a code. */
export const SPEC_CODE = /^[A-Z][A-Z0-9_]+$/;

const tableStatus = (code: string): number | undefined =>
  Object.hasOwn(ERROR_STATUS, code) ? ERROR_STATUS[code as keyof typeof ERROR_STATUS] : undefined;

export const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

const isText = (v: unknown): boolean =>
  (typeof v === 'string' && v.trim() !== '') || (Array.isArray(v) && v.length > 0 && v.every((m) => typeof m === 'string'));

const sameStatus = (v: unknown, status: number): boolean =>
  v === status || (typeof v === 'string' && /^\d{3}$/.test(v.trim()) && Number(v) === status);

export function jsonObject(text: string): Record<string, unknown> | undefined {
  const v = attempt(() => JSON.parse(text) as unknown);
  return isRecord(v) ? v : undefined;
}

export function isServiceRefusal(status: number, text: string): boolean {
  if (status < 400 || status > 499 || NEVER_DEFINITIVE.has(status)) return false;
  const body = jsonObject(text);
  if (!body) return false;
  const code = body.error;
  const shaped = sameStatus(body.statusCode, status) && isText(body.message);
  // spec §5.4: a 401 body has only statusCode and message; §7: 403's body is not shown
  if (status === 401 || status === 403) return shaped && (code === undefined || typeof code === 'string');
  if (typeof code === 'string' && SPEC_CODE.test(code))
    return tableStatus(code) === status && (body.statusCode === undefined || sameStatus(body.statusCode, status));
  return shaped && status === 400 && body.message === INVALID_PAYOUT_AMOUNT_MESSAGE;
}

/**
 * Definitive: a read-only route; a 4xx of the document storage (not `fromService`); a 429 (refused before processing, RFC
 * 6585 §4); a 4xx whose `error` is a code of the table with its status, 401/403 with {statusCode,
 * message} (§5.4), the swap's 400 'Invalid payout amount'. Unknown: everything else (408, 425, 499, 5xx).
 */
export function errorOutcome(a: { status: number; text: string; mutating: boolean; fromService: boolean }): Outcome {
  if (!a.mutating) return 'definitive';
  if (!a.fromService) return a.status >= 500 ? 'unknown' : 'definitive';
  if (a.status === 429) return 'definitive';
  return isServiceRefusal(a.status, a.text) ? 'definitive' : 'unknown';
}

export function describeForeignBody(text: string, contentType: string | null): string {
  const t = text.trim();
  if (t === '') return 'an empty body';
  if (/html/i.test(contentType ?? '') || /^<(!doctype|html|head|body|\?xml)/i.test(t)) {
    const title = /<title[^>]*>([^<]{1,120})<\/title>/i.exec(t)?.[1]?.trim();
    return title ? `an HTML page "${title}"` : 'an HTML page';
  }
  if (jsonObject(t) || /^\[/.test(t)) return 'JSON that is not the service error body';
  return `text "${t.replace(/\s+/g, ' ').slice(0, 80)}"`;
}
