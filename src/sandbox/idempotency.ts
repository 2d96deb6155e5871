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
import type { RouteName } from './contract.ts';

export type IdempotencyOutcome = { kind: 'new' } | { kind: 'replay'; recordId: string } | { kind: 'conflict' };

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

interface Entry {
  fingerprint: string;
  recordId: string;
}

export class IdempotencyStore {
  private readonly entries = new Map<string, Entry>();

  private static slot(businessId: string, key: string): string {
    return `${businessId}\u0000${key}`;
  }

  private static fingerprint(route: RouteName, body: unknown): string {
    return `${route}\u0000${canonicalJson(body)}`;
  }

  check(businessId: string, key: string, route: RouteName, body: unknown): IdempotencyOutcome {
    const e = this.entries.get(IdempotencyStore.slot(businessId, key));
    if (!e) return { kind: 'new' };
    return e.fingerprint === IdempotencyStore.fingerprint(route, body) ? { kind: 'replay', recordId: e.recordId } : { kind: 'conflict' };
  }

  remember(businessId: string, key: string, route: RouteName, body: unknown, recordId: string): void {
    this.entries.set(IdempotencyStore.slot(businessId, key), { fingerprint: IdempotencyStore.fingerprint(route, body), recordId });
  }
}
