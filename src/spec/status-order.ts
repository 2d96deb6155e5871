// Statuses only move forward (spec §3). A GET answer that arrives late, a webhook delivered out of
// order or replayed, must never move a row back. Pure: no I/O.
//
// The order used, low to high:
//   PENDING  <  ADDITIONAL_INFO_REQUIRED  <  PENDING (statusDetail ADDITIONAL_INFO_UNDER_REVIEW)  <  PROCESSING  <  SUCCESSFUL | FAILED | REJECTED
//
// ADDITIONAL_INFO_REQUIRED -> PENDING (under review) is a forward move of the spec's table even
// though both read "PENDING" in the status column: statusDetail tells them apart.
//
// The spec's table also allows PENDING (under review) -> ADDITIONAL_INFO_REQUIRED again (compliance
// asks a second time): the only move that goes down the order. It is taken only when the incoming
// change is known to be newer than what the row holds (its changedAt / updatedAt is later);
// without that proof it is treated as a late copy of the first request and ignored.
import { PAYOUT_STATUSES, isFinalStatus, type PayoutStatus } from './codes.ts';

export interface StatusPoint {
  status: string;
  statusDetail?: string;
  /** When the service says this status was reached (webhook changedAt, payout updatedAt). ISO 8601. */
  at?: string;
}

export interface StatusDecision {
  apply: boolean;
  /** Why, in a few words (logged). */
  why: 'forward' | 'same' | 'newer-details' | 'older' | 'final' | 'not-a-payout-status' | 're-request';
}

export const UNDER_REVIEW = 'ADDITIONAL_INFO_UNDER_REVIEW';

const isPayoutStatus = (s: string): s is PayoutStatus => (PAYOUT_STATUSES as readonly string[]).includes(s);

const RANKS = new Map<string, number>([
  ['PENDING', 0],
  ['ADDITIONAL_INFO_REQUIRED', 1],
  ['PROCESSING', 3],
  ['SUCCESSFUL', 4],
  ['FAILED', 4],
  ['REJECTED', 4],
]);

/** The position of a status in the forward order (higher is later; -1 for a word that is no payout status). */
export function statusRank(p: StatusPoint): number {
  return p.status === 'PENDING' && p.statusDetail === UNDER_REVIEW ? 2 : (RANKS.get(p.status) ?? -1);
}

/** An ISO 8601 time in epoch ms; undefined when absent or unreadable. */
export const isoTime = (iso: string | undefined): number | undefined => {
  if (!iso) return undefined;
  const t = Date.parse(iso);
  return Number.isNaN(t) ? undefined : t;
};

/**
 * May `incoming` replace `current`? `current.status` may be one of the engine's own words (a row
 * whose payout does not exist): such a row is never touched here.
 */
export function nextStatus(current: StatusPoint, incoming: StatusPoint): StatusDecision {
  if (!isPayoutStatus(current.status) || !isPayoutStatus(incoming.status)) return { apply: false, why: 'not-a-payout-status' };
  const a = statusRank(current);
  const b = statusRank(incoming);
  const tc = isoTime(current.at);
  const ti = isoTime(incoming.at);
  const provablyNewer = tc !== undefined && ti !== undefined && ti > tc;
  if (a === b && current.status === incoming.status) {
    // Same place: only a newer copy may refresh the details (new informationRequests, updatedAt).
    return provablyNewer ? { apply: true, why: 'newer-details' } : { apply: false, why: 'same' };
  }
  if (isFinalStatus(current.status)) return { apply: false, why: 'final' };
  if (b > a) return { apply: true, why: 'forward' };
  // Down the order: only the table's one cycle, and only when provably newer.
  const underReview = current.status === 'PENDING' && current.statusDetail === UNDER_REVIEW;
  const reRequest = underReview && incoming.status === 'ADDITIONAL_INFO_REQUIRED';
  return reRequest && provablyNewer ? { apply: true, why: 're-request' } : { apply: false, why: 'older' };
}
