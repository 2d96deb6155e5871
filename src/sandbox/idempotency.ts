// Spec §4.2 rules 1-3 and §4.7: Idempotency-Key on initiate and swap. Readings (the spec does not say): "same body"
// is canonical JSON equality, the route included; stored keys never expire; a key is the business's (`perApiKey`:
// the API key's, as §8 counts rate and quota); a 4xx stores nothing, so the body may be fixed and sent again
// (`storeRefusals`: a refusal that reached the route binds the key, as Stripe's does). Which reading has which: README.
import { createHash } from 'node:crypto';
import { API_KEY_HEADER, IDEMPOTENCY_KEY_HEADER } from '../spec/endpoints.ts';
import type { SandboxState } from './contract.ts';
import { apiError, ApiError, header, type Reply, type Request } from './http.ts';
import { canonicalJson } from '../text.ts';

type CreatingRoute = 'initiate' | 'swap';
/** (an API key as its hash: the state file holds none) */
const scope = (req: Request, perApiKey: boolean): string =>
  perApiKey ? createHash('sha256').update(header(req.headers, API_KEY_HEADER)!).digest('hex') : req.business.id;
const fingerprint = (route: CreatingRoute, body: unknown): string => `${route}\u0000${canonicalJson(body)}`;

/** The record a key created, or (refusals stored) the refusal it got; as snapshotState writes it. */
type KeyEntry = Omit<SandboxState['idempotency'][number], 'slot'>;

export class IdempotencyStore {
  /** By business (or API key) and key (snapshotState reads it, restoreState fills it). */
  readonly entries = new Map<string, KeyEntry>();

  constructor(
    readonly storeRefusals = false,
    readonly perApiKey = false,
  ) {}

  /** A creating route under its key (400 MISSING_IDEMPOTENCY_KEY without one), which binds the record a reply `created`. */
  once(req: Request, route: CreatingRoute, view: (recordId: string) => unknown, create: () => Reply): Reply {
    const key = header(req.headers, IDEMPOTENCY_KEY_HEADER);
    if (!key) return apiError(400, 'MISSING_IDEMPOTENCY_KEY', 'The Idempotency-Key header is required');
    const slot = `${scope(req, this.perApiKey)}\u0000${key}`;
    const e = this.entries.get(slot);
    if (e && e.fingerprint !== fingerprint(route, req.body))
      return apiError(409, 'IDEMPOTENCY_KEY_CONFLICT', 'This Idempotency-Key was already used with a different request body');
    if (e?.refusal) return new ApiError(e.refusal.status, e.refusal.body);
    if (e?.recordId) return { status: 201, body: view(e.recordId), headers: { 'idempotent-replayed': 'true' } };
    const bind = (entry: Omit<KeyEntry, 'fingerprint'>) => this.entries.set(slot, { fingerprint: fingerprint(route, req.body), ...entry });
    let reply: Reply;
    try {
      reply = create();
    } catch (err) {
      if (!(err instanceof ApiError)) throw err;
      reply = err;
    }
    if (reply.created) bind({ recordId: reply.created });
    else if (this.storeRefusals && reply instanceof ApiError && reply.status >= 400 && reply.status < 500)
      bind({ refusal: { status: reply.status, body: reply.body } });
    return reply;
  }
}
