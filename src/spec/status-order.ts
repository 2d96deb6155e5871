// Statuses only move forward (spec §3): a late GET or a replayed webhook never moves a row back.
// Order: PENDING < ADDITIONAL_INFO_REQUIRED < PENDING (under review) < PROCESSING < final. The one move
// down, under review -> ADDITIONAL_INFO_REQUIRED (asked again), is taken only when provably newer.
import { isFinalStatus } from './codes.ts';
import { utcTime } from '../text.ts';

export interface StatusPoint {
  status: string;
  statusDetail?: string;
  /** When the service says this status was reached (changedAt, updatedAt), ISO 8601. */
  at?: string;
}

export interface StatusDecision {
  apply: boolean;
  why: 'forward' | 'same' | 'newer-details' | 'older' | 'final' | 'not-a-payout-status' | 're-request';
}

export const UNDER_REVIEW = 'ADDITIONAL_INFO_UNDER_REVIEW';

const RANKS = new Map<string, number>([
  ['PENDING', 0],
  ['ADDITIONAL_INFO_REQUIRED', 1],
  ['PROCESSING', 3],
  ['SUCCESSFUL', 4],
  ['FAILED', 4],
  ['REJECTED', 4],
]);

export function statusRank(p: StatusPoint): number {
  return p.status === 'PENDING' && p.statusDetail === UNDER_REVIEW ? 2 : (RANKS.get(p.status) ?? -1);
}

/** May `incoming` replace `current`? A `current.status` of the engine's own words (no payout) is never touched. */
export function nextStatus(current: StatusPoint, incoming: StatusPoint): StatusDecision {
  if (!RANKS.has(current.status) || !RANKS.has(incoming.status)) return { apply: false, why: 'not-a-payout-status' };
  const a = statusRank(current);
  const b = statusRank(incoming);
  // (an unknown time on either side is never provably newer)
  const provablyNewer = (utcTime(incoming.at) ?? -Infinity) > (utcTime(current.at) ?? Infinity);
  if (a === b && current.status === incoming.status) {
    // Same place: only a newer copy may refresh the details (new informationRequests, updatedAt).
    return provablyNewer ? { apply: true, why: 'newer-details' } : { apply: false, why: 'same' };
  }
  if (isFinalStatus(current.status)) return { apply: false, why: 'final' };
  // (the one cycle, asked again: an "under review" from before the request the row holds is the earlier round's, late)
  // (elsewhere forward is forward, whatever the times say: a createdAt and a changedAt may be written at other precisions)
  const earlierRound = current.status === 'ADDITIONAL_INFO_REQUIRED' && incoming.statusDetail === UNDER_REVIEW;
  const provablyOlder = (utcTime(incoming.at) ?? Infinity) < (utcTime(current.at) ?? -Infinity);
  if (b > a && !(earlierRound && provablyOlder)) return { apply: true, why: 'forward' };
  // Down the order: only the table's one cycle, and only when provably newer.
  const reRequest = current.status === 'PENDING' && current.statusDetail === UNDER_REVIEW && incoming.status === 'ADDITIONAL_INFO_REQUIRED';
  return reRequest && provablyNewer ? { apply: true, why: 're-request' } : { apply: false, why: 'older' };
}

/** `nextStatus`, a `current` of unknown time taken as older than any: a time a person cleared, judged by the record that kept one. */
export const nextStatusUndated = (current: StatusPoint, incoming: StatusPoint): StatusDecision =>
  nextStatus(utcTime(current.at) === undefined ? { ...current, at: new Date(0).toISOString() } : current, incoming);
