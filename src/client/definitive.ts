// Which answers are definitive: did the service itself say that it did not act?
//
// A request that changes something (initiate, swap, PATCH documents, ...) can be answered by the
// service, or by anything between us and it: a proxy, a load balancer, a WAF, a gateway that gave
// up waiting. Only the service's own refusal proves that nothing happened; an answer from anyone
// else may have come after the service acted (issue 15: a proxy answered 408 to an initiate the
// service had created; issue 39: a gateway answered 400 RESPONSE_BLOCKED in the service's own
// shape). So the service's refusals are a closed list, the spec's error table (§7,
// spec/codes.ts ERROR_STATUS):
//
//   definitive  a 4xx whose body's `error` is a code of the table with the status the table gives
//               it (statusCode, when present, the same); the table's code-less rows: 401 and 403
//               with {statusCode, message} (spec §5.4; the 403 body is not shown), the swap's 400
//               'Invalid payout amount'; and 429: a rate limit, whoever applied it, refuses before
//               processing (RFC 6585 §4), and the transport resends it with the same key anyway.
//   unknown     everything else: 408, 425, 499, every 5xx and 3xx, whatever the body; a 4xx with a
//               code the table does not list or lists under another status, however well shaped;
//               a 4xx without that body (an HTML page, plain text, an empty body, other JSON).
//
// Read-only routes are always definitive (there is no effect to be unsure about), and so is a 4xx
// of the document storage (not the service: its PUT is idempotent and resent as it is). The
// engine settles an unknown outcome by resending the same Idempotency-Key with the same bytes.
import { ERROR_STATUS, INVALID_PAYOUT_AMOUNT_MESSAGE } from '../spec/codes.ts';
import type { Outcome } from './errors.ts';

/** Statuses that never prove the service did not act, whatever their body says. */
export const NEVER_DEFINITIVE: ReadonlySet<number> = new Set([408, 425, 499]);

/** The spec's codes are UPPER_SNAKE; a framework's "Bad Request" in `error` is not a code. */
export const SPEC_CODE = /^[A-Z][A-Z0-9_]+$/;

/** The status the spec's table gives a code; undefined for a code it does not list. */
const tableStatus = (code: string): number | undefined =>
  Object.hasOwn(ERROR_STATUS, code) ? ERROR_STATUS[code as keyof typeof ERROR_STATUS] : undefined;

export const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

const isText = (v: unknown): boolean =>
  (typeof v === 'string' && v.trim() !== '') || (Array.isArray(v) && v.length > 0 && v.every((m) => typeof m === 'string'));

/** statusCode as the spec writes it (an integer), or the same number as text. */
const sameStatus = (v: unknown, status: number): boolean =>
  v === status || (typeof v === 'string' && /^\d{3}$/.test(v.trim()) && Number(v) === status);

/** Parses a body as a JSON object; undefined for anything else. */
export function jsonObject(text: string): Record<string, unknown> | undefined {
  try {
    const v = JSON.parse(text) as unknown;
    return isRecord(v) ? v : undefined;
  } catch {
    return undefined;
  }
}

/** Is this non-2xx answer the service's own refusal (spec §7's table), as opposed to an intermediary's? */
export function isServiceRefusal(status: number, text: string): boolean {
  if (status < 400 || status > 499 || NEVER_DEFINITIVE.has(status)) return false;
  const body = jsonObject(text);
  if (!body) return false;
  const code = body.error;
  const shaped = sameStatus(body.statusCode, status) && isText(body.message);
  // Spec §5.4: a 401 body has only statusCode and message; §7: 403's body is not shown.
  if (status === 401 || status === 403) return shaped && (code === undefined || typeof code === 'string');
  // A code of the table, with its status: nothing in front of the service makes up INSUFFICIENT_FUNDS.
  if (typeof code === 'string' && SPEC_CODE.test(code))
    return tableStatus(code) === status && (body.statusCode === undefined || sameStatus(body.statusCode, status));
  if (!shaped) return false;
  // Spec §7, swap: a 400 with no code, only this message.
  return status === 400 && body.message === INVALID_PAYOUT_AMOUNT_MESSAGE;
}

export interface ErrorAnswer {
  status: number;
  /** The body as received. */
  text: string;
  /** The route changes something at the service (initiate, swap, PATCH, ...). */
  mutating: boolean;
  /** The answer is expected from the service (authenticated routes), not the document storage. */
  fromService: boolean;
}

/** The outcome of a non-2xx answer: see the table at the top of this file. */
export function errorOutcome(a: ErrorAnswer): Outcome {
  if (!a.mutating) return 'definitive';
  if (!a.fromService) return a.status >= 500 ? 'unknown' : 'definitive';
  if (a.status === 429) return 'definitive';
  return isServiceRefusal(a.status, a.text) ? 'definitive' : 'unknown';
}

/** A few words on a body that is not the service's error body, for the message of the error. */
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
