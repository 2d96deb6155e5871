// A batch's identity and its rows' idempotency keys. Deterministic, never random: the same file
// (same bytes) under any name, on any machine, gives the same batch id and the same keys, so the
// service recognises a payout it already created however the file came back.
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';

/**
 * What a --batch-id is hashed after, to make its batch id: sha256(BATCH_LABEL_TAG + label). Its
 * `pb1` is a name, not a key version: changing it would change every --batch-id's batch id (and
 * so its keys), pinned by test/engine/keys.test.ts.
 */
export const BATCH_LABEL_TAG = 'pb1-batch-id|';
/** The version prefix of the idempotency keys: the only keys of this tool. */
export const KEY_VERSION = 'pb2';

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

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
    throw new RangeError('--batch-id must be 1 to 100 letters, digits, dot, colon, dash or underscore, starting with a letter or digit');
  }
  return { batchId: sha256(BATCH_LABEL_TAG + batchIdFlag), source: 'flag', label: batchIdFlag, fileSha256: contentSha256 };
}

/**
 * pb2-<first 16 hex of batchId>-<first 24 hex of sha256("pb2|" batchId "|" reference "|" attempt)>-<attempt>.
 * A function of the batch identity, the row identity (its reference) and the attempt only: never of
 * an environment label, a path or a flag, so the same rows sent to the same service get the same
 * keys however the command was spelled. Self-describing: the batch
 * (for `retry` to find its journal) and the attempt can be read back. Pinned by literal vectors in
 * test/engine/keys.test.ts: changing it would make a resume after an upgrade pay twice.
 */
export function idempotencyKey(batchId: string, reference: string, attempt: number): string {
  if (!Number.isInteger(attempt) || attempt < 1) throw new RangeError(`attempt must be a positive integer, not ${attempt}`);
  if (!/^[0-9a-f]{64}$/.test(batchId)) throw new RangeError('batchId must be 64 lowercase hex');
  const h = sha256(`${KEY_VERSION}|${batchId}|${reference}|${attempt}`).slice(0, 24);
  return `${KEY_VERSION}-${batchId.slice(0, 16)}-${h}-${attempt}`;
}

const KEY_PATTERN = new RegExp(`^${KEY_VERSION}-([0-9a-f]{16})-[0-9a-f]{24}-(\\d+)$`);

export interface ParsedKey {
  batchPrefix: string;
  attempt: number;
}

/** The batch and attempt of a key of this tool (`pb2-`); undefined for any other text. */
export function parseIdempotencyKey(key: string): ParsedKey | undefined {
  const m = KEY_PATTERN.exec(key.trim());
  return m ? { batchPrefix: m[1]!, attempt: Number(m[2]) } : undefined;
}
