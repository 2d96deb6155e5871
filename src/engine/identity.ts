// A batch's identity (which journal holds it) and its rows' idempotency keys (which payment a
// request is). Deterministic, never random. The batch id names a journal: the same file (same
// bytes) under any name gives the same one. The key names a payment: the reference and the
// attempt only, so the service recognises a payout it already created however the row came back.
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { BatchUnusable } from './engine-errors.ts';

/**
 * What a --batch-id is hashed after, to make its batch id: sha256Hex(BATCH_LABEL_TAG + label). Its
 * `pb1` is a name, not a key version: changing it would change every --batch-id's batch id (and
 * so the journal a resume finds), pinned by test/engine/keys.test.ts. A --batch-id only labels a
 * batch: its keys are those of its references, as in any other batch.
 */
export const BATCH_LABEL_TAG = 'pb1-batch-id|';
/**
 * The version tag of each kind of key: a payout's and a swap's. Changing one would make a resume
 * after an upgrade send other keys than those the service has (paid twice): pinned by
 * test/engine/keys.test.ts.
 */
export const KEY_VERSIONS = { payout: 'pb3', swap: 'pbs1' } as const;

/** The sha256 of bytes or text, in hex: the one digest of this tool (keys, batches, plans, ledgers). */
export const sha256Hex = (b: Buffer | string): string => createHash('sha256').update(b).digest('hex');

/** sha256 of a file's bytes, streamed. */
export async function fileSha256(path: string): Promise<string> {
  const h = createHash('sha256');
  for await (const chunk of createReadStream(path)) h.update(chunk as Buffer);
  return h.digest('hex');
}

export interface BatchIdentity {
  /** 64 hex. */
  batchId: string;
  source: 'content' | 'flag';
  /** The --batch-id as given. */
  label?: string;
  fileSha256: string;
}

/** A --batch-id must be short plain text: it appears in file names and messages. */
export const BATCH_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,99}$/;

/** The batch id: the content hash, or a hash of the --batch-id given (so it is 64 hex either way). */
export function batchIdentity(contentSha256: string, batchIdFlag?: string): BatchIdentity {
  if (batchIdFlag === undefined) return { batchId: contentSha256, source: 'content', fileSha256: contentSha256 };
  if (!BATCH_ID_PATTERN.test(batchIdFlag)) {
    throw new BatchUnusable(
      'BATCH_ID',
      '--batch-id must be 1 to 100 letters, digits, dot, colon, dash or underscore, starting with a letter or digit',
    );
  }
  return { batchId: sha256Hex(BATCH_LABEL_TAG + batchIdFlag), source: 'flag', label: batchIdFlag, fileSha256: contentSha256 };
}

/**
 * <tag>-<first 32 hex of sha256("<tag>|" reference "|" attempt)>-<attempt>, the tag being the
 * kind's (`pb3` for a payout, `pbs1` for a swap). A function of the payment alone: the reference
 * and the attempt. Never of the file (its bytes, name, format, sheet or folder), the batch, a state
 * folder, an environment label or a URL spelling: the service scopes keys per business (spec
 * §4.2), so the same reference at the same account always carries the same key, and a re-saved,
 * renamed or converted file sent by anyone from anywhere gets the original payout back (rule 1) or
 * 409 (rule 2), never a second one. A key is journalled and read back from the journal, never
 * derived again for a resend.
 */
export function idempotencyKey(reference: string, attempt: number, kind: keyof typeof KEY_VERSIONS = 'payout'): string {
  if (!Number.isInteger(attempt) || attempt < 1) throw new RangeError(`attempt must be a positive integer, not ${attempt}`);
  if (reference === '') throw new RangeError('a key needs a reference');
  const tag = KEY_VERSIONS[kind];
  return `${tag}-${sha256Hex(`${tag}|${reference}|${attempt}`).slice(0, 32)}-${attempt}`;
}

/** The attempt of a payout key of this tool; undefined for any other text. A key names no batch: a results file's journal is found by its rows (retry.ts). */
export function parseIdempotencyKey(key: string): { attempt: number } | undefined {
  const m = /^pb3-[0-9a-f]{32}-(\d+)$/.exec(key.trim());
  return m ? { attempt: Number(m[1]) } : undefined;
}
