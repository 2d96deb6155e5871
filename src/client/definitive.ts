// Which answers are definitive: did the service itself say that it did not act?
//
// A request that changes something (initiate, swap, PATCH documents, ...) can be answered by the
// service, or by anything between us and it: a proxy, a load balancer, a WAF, a gateway that gave
// up waiting. Only the service's own refusal proves that nothing happened; an answer from anyone
// else may have come after the service acted (issue 15: a proxy answered 408 to an initiate the
// service had created, the row was sent again under a new key and paid twice). So:
//
//   definitive  the service's error body (spec §7: {statusCode, message, error}) with a 4xx:
//               `error` one of the spec's codes, or statusCode repeating the status with a code
//               of the spec's form (UPPER_SNAKE: the spec's list is "not shown" in full); 401 and
//               403 with {statusCode, message} (spec §5.4; the 403 body is not shown); the
//               code-less 400 'Invalid payout amount' of the swap table (spec §7). And 429: a rate
//               limit, whoever applied it, refuses before processing (RFC 6585 §4), and the
//               transport resends it with the same key anyway.
//   unknown     408, 425, 499, every 5xx and 3xx, whatever the body; a 4xx without that body (an
//               HTML page, plain text, an empty body, JSON of another shape).
//
// Read-only routes are always definitive (there is no effect to be unsure about), and so is a 4xx
// of the document storage (not the service: its PUT is idempotent and resent as it is). The
// engine settles an unknown outcome by resending the same Idempotency-Key with the same bytes.
import { ERROR_CODES, INVALID_PAYOUT_AMOUNT_MESSAGE } from '../interface/codes.ts';
import type { Outcome } from './errors.ts';

/** Statuses that never prove the service did not act, whatever their body says. */
export const NEVER_DEFINITIVE: ReadonlySet<number> = new Set([408, 425, 499]);

/** The spec's codes are UPPER_SNAKE; a framework's "Bad Request" in `error` is not a code. */
export const SPEC_CODE = /^[A-Z][A-Z0-9_]+$/;

const SPEC_CODES: ReadonlySet<string> = new Set(ERROR_CODES);

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

/** Is this non-2xx answer the service's own refusal (spec §7), as opposed to an intermediary's? */
export function isServiceRefusal(status: number, text: string): boolean {
  if (status < 400 || status > 499 || NEVER_DEFINITIVE.has(status)) return false;
  const body = jsonObject(text);
  if (!body) return false;
  const code = body.error;
  // A code of the spec's table: nothing in front of the service makes up INSUFFICIENT_FUNDS.
  if (typeof code === 'string' && SPEC_CODES.has(code)) return true;
  if (!sameStatus(body.statusCode, status) || !isText(body.message)) return false;
  if (typeof code === 'string' && SPEC_CODE.test(code)) return true;
  // Spec §5.4: a 401 body has only statusCode and message; §7: 403's body is not shown.
  if (status === 401 || status === 403) return code === undefined || typeof code === 'string';
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
