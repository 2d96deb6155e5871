// Spec §4.2 rules 1-3 and §4.7: Idempotency-Key on initiate and swap.
//
// Readings (the spec does not say):
// - keys are scoped per business: two businesses may use the same key independently;
// - "same body" is semantic JSON equality: key order and number spelling (1 vs 1.0) do not
//   matter, every value does; the route is part of the comparison, so an initiate key reused on a
//   swap is a conflict;
// - only a created payout or swap stores the key: a 4xx answer stores nothing, so the client may
//   fix the body and send it again under the same key;
// - stored keys do not expire during the life of the sandbox.
import { IDEMPOTENCY_KEY_HEADER } from '../interface/http.ts';
import { header, type Request } from './request.ts';
import { apiError, type Reply } from './errors.ts';

/** JSON text with object keys sorted at every level: equal for semantically equal bodies. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

type CreatingRoute = 'initiate' | 'swap';
const slot = (businessId: string, key: string): string => `${businessId}\u0000${key}`;
const fingerprint = (route: CreatingRoute, body: unknown): string => `${route}\u0000${canonicalJson(body)}`;

export class IdempotencyStore {
  /** By business and key (read and filled by persist.ts for the local sandbox). */
  readonly entries = new Map<string, { fingerprint: string; recordId: string }>();

  /**
   * Before the body is looked at: the key is required (400 MISSING_IDEMPOTENCY_KEY); a key seen
   * with the same body answers 201 with its record as it is now and the header
   * Idempotent-Replayed, with another body 409 IDEMPOTENCY_KEY_CONFLICT. The key when it is new.
   */
  begin(req: Request, route: CreatingRoute, view: (recordId: string) => unknown): string | Reply {
    const key = header(req.headers, IDEMPOTENCY_KEY_HEADER);
    if (!key) return apiError(400, 'MISSING_IDEMPOTENCY_KEY', 'The Idempotency-Key header is required');
    const e = this.entries.get(slot(req.business.id, key));
    if (!e) return key;
    if (e.fingerprint !== fingerprint(route, req.body))
      return apiError(409, 'IDEMPOTENCY_KEY_CONFLICT', 'This Idempotency-Key was already used with a different request body');
    return { status: 201, body: view(e.recordId), headers: { 'idempotent-replayed': 'true' } };
  }

  remember(businessId: string, key: string, route: CreatingRoute, body: unknown, recordId: string): void {
    this.entries.set(slot(businessId, key), { fingerprint: fingerprint(route, body), recordId });
  }
}
