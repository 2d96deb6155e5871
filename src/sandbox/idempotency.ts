// Spec §4.2 rules 1-3 and §4.7: Idempotency-Key on initiate and swap.
//
// Readings (the spec does not say):
// - keys are scoped per business: two businesses may use the same key independently;
// - "same body" is semantic JSON equality: key order and number spelling (1 vs 1.0) do not
//   matter, every value does; the route is part of the comparison, so an initiate key reused on a
//   swap is a conflict;
// - a refused key, two readings (issue 39; spec §4.2 rules 1-3 speak only of payouts):
//   'not stored' (the default, strict): only a created payout or swap stores the key, a 4xx stores
//   nothing, so the client may fix the body and send it again under the same key;
//   'stored' (`storeRefusals`, part of the variant reading): a refusal that reached the route's
//   execution (after the key was found new: every 4xx of initiate or swap but the missing key's)
//   binds the key as Stripe's does: the same key and body get the same refusal again, even once
//   its cause is gone, another body 409;
// - stored keys do not expire during the life of the sandbox.
import { IDEMPOTENCY_KEY_HEADER } from '../spec/endpoints.ts';
import type { SandboxState } from './contract.ts';
import { header, type Request } from './request.ts';
import { ApiError, apiError, type Reply } from './error-answers.ts';
import { canonicalJson } from '../text.ts';

type CreatingRoute = 'initiate' | 'swap';
const slot = (businessId: string, key: string): string => `${businessId}\u0000${key}`;
const fingerprint = (route: CreatingRoute, body: unknown): string => `${route}\u0000${canonicalJson(body)}`;

/** What a key holds: the record it created, or (refusals stored) the refusal it got; kept as persist.ts writes it. */
type KeyEntry = Omit<SandboxState['idempotency'][number], 'slot'>;

export class IdempotencyStore {
  /** By business and key (read and filled by persist.ts for the local sandbox). */
  readonly entries = new Map<string, KeyEntry>();

  constructor(readonly storeRefusals = false) {}

  /**
   * A creating route under its key: the key is required (400 MISSING_IDEMPOTENCY_KEY); a key seen
   * with the same body answers as it did (201 with its record as it is now and the header
   * Idempotent-Replayed, or its stored refusal), with another body 409 IDEMPOTENCY_KEY_CONFLICT.
   * A new key runs `create`; its refusal binds the key when refusals are stored.
   */
  once(req: Request, route: CreatingRoute, view: (recordId: string) => unknown, create: (key: string) => Reply): Reply {
    const key = header(req.headers, IDEMPOTENCY_KEY_HEADER);
    if (!key) return apiError(400, 'MISSING_IDEMPOTENCY_KEY', 'The Idempotency-Key header is required');
    const e = this.entries.get(slot(req.business.id, key));
    if (e && e.fingerprint !== fingerprint(route, req.body))
      return apiError(409, 'IDEMPOTENCY_KEY_CONFLICT', 'This Idempotency-Key was already used with a different request body');
    if (e?.refusal) return new ApiError(e.refusal.status, e.refusal.body);
    if (e?.recordId) return { status: 201, body: view(e.recordId), headers: { 'idempotent-replayed': 'true' } };
    let reply: Reply;
    try {
      reply = create(key);
    } catch (err) {
      if (err instanceof ApiError) this.refused(req, route, key, err);
      throw err;
    }
    if (reply instanceof ApiError) this.refused(req, route, key, reply);
    return reply;
  }

  remember(businessId: string, key: string, route: CreatingRoute, body: unknown, recordId: string): void {
    this.entries.set(slot(businessId, key), { fingerprint: fingerprint(route, body), recordId });
  }

  private refused(req: Request, route: CreatingRoute, key: string, e: ApiError): void {
    if (this.storeRefusals && e.status >= 400 && e.status < 500)
      this.entries.set(slot(req.business.id, key), {
        fingerprint: fingerprint(route, req.body),
        refusal: { status: e.status, body: e.body },
      });
  }
}
