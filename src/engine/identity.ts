// A batch's identity (which journal holds it: the same bytes under any name give the same) and its
// rows' idempotency keys (which payment a request is: reference and attempt only). Never random.
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { BatchUnusable } from './engine-errors.ts';

/** A --batch-id's batch id is sha256Hex(BATCH_LABEL_TAG + label); changing it loses every resume (pinned in keys.test.ts). */
export const BATCH_LABEL_TAG = 'pb1-batch-id|';
/** Changing a tag makes a resume after an upgrade send other keys: paid twice (pinned in keys.test.ts). */
export const KEY_VERSIONS = { payout: 'pb3', swap: 'pbs1' } as const;

/** The one digest of this tool (keys, batches, plans, ledgers). */
export const sha256Hex = (b: Uint8Array | string): string => createHash('sha256').update(b).digest('hex');

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
  /** A workbook's sheet other than the one read by default: a batch of its own, with its own results file. */
  ownSheet?: string;
}

/** A --batch-id appears in file names and messages. */
const BATCH_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,99}$/;

/** The batch id: the content hash, or a hash of the --batch-id given; with a sheet of its own, a hash of it and the sheet (64 hex). */
export function batchIdentity(contentSha256: string, batchIdFlag?: string, ownSheet?: string): BatchIdentity {
  // (each sheet its own journal, whose header says which sheet `retry` reads again, under a --batch-id too)
  const of = (id: string) => (ownSheet === undefined ? id : sha256Hex(`pb1-sheet|${id}|${ownSheet}`));
  if (batchIdFlag === undefined) return { batchId: of(contentSha256), source: 'content', fileSha256: contentSha256, ownSheet };
  if (!BATCH_ID_PATTERN.test(batchIdFlag)) {
    throw new BatchUnusable(
      'BATCH_ID',
      '--batch-id must be 1 to 100 letters, digits, dot, colon, dash or underscore, starting with a letter or digit',
    );
  }
  return { batchId: of(sha256Hex(BATCH_LABEL_TAG + batchIdFlag)), source: 'flag', label: batchIdFlag, fileSha256: contentSha256, ownSheet };
}

/**
 * <tag>-<first 32 hex of sha256("<tag>|" reference "|" attempt)>-<attempt>: the payment alone, never
 * the file, batch, folder or URL. Keys are scoped per business (spec §4.2), so any copy sent from
 * anywhere gets the original payout back or 409. A resend reads its key from the journal.
 */
export function idempotencyKey(reference: string, attempt: number, kind: keyof typeof KEY_VERSIONS = 'payout'): string {
  if (!Number.isInteger(attempt) || attempt < 1) throw new RangeError(`attempt must be a positive integer, not ${attempt}`);
  if (reference === '') throw new RangeError('a key needs a reference');
  const tag = KEY_VERSIONS[kind];
  return `${tag}-${sha256Hex(`${tag}|${reference}|${attempt}`).slice(0, 32)}-${attempt}`;
}
