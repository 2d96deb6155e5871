// Identifiers: random UUIDs at run time; seed records without an id get one derived from their name, the same on every start.
import { createHash, randomBytes, randomUUID } from 'node:crypto';

export const newId = (): string => randomUUID();

/** A name-based UUID (version 5 layout over SHA-256). */
export function stableId(name: string): string {
  const h = createHash('sha256').update(`payout-batch-sandbox:${name}`).digest();
  h[6] = (h[6]! & 0x0f) | 0x50;
  h[8] = (h[8]! & 0x3f) | 0x80;
  const x = h.subarray(0, 16).toString('hex');
  return `${x.slice(0, 8)}-${x.slice(8, 12)}-${x.slice(12, 16)}-${x.slice(16, 20)}-${x.slice(20, 32)}`;
}

/** Spec §2 payoutRef: "human-readable", format not shown: PO-YYYYMMDD-XXXXXXXX. */
export function newRef(prefix: 'PO' | 'SW', nowIso: string): string {
  return `${prefix}-${nowIso.slice(0, 10).replace(/-/g, '')}-${randomBytes(4).toString('hex').toUpperCase()}`;
}

export const newToken = (): string => randomBytes(24).toString('base64url');
