// Supporting documents named in a row: they must exist, be PDF, JPEG or PNG by their bytes (the
// magic numbers, not the extension), weigh at most 10 MB (spec §8), at most 5 per row.
import { createHash } from 'node:crypto';
import { constants, lstatSync, readFileSync, statSync, type Stats } from 'node:fs';
import { lstat, open } from 'node:fs/promises';
import { basename, extname } from 'node:path';
import { MAX_DOCUMENT_BYTES, type DocumentContentType } from '../spec/codes.ts';
import type { ProblemCode } from './problems.ts';

export type DocumentCheck =
  | { ok: true; path: string; contentType: DocumentContentType; fingerprint: DocumentFingerprint }
  | {
      ok: false;
      path: string;
      code: Extract<ProblemCode, 'DOCUMENT_NOT_FOUND' | 'DOCUMENT_TYPE' | 'DOCUMENT_TOO_LARGE'>;
      message: string;
      expected: string;
    };

const MAGIC_NUMBERS: [DocumentContentType, number[]][] = [
  ['application/pdf', [0x25, 0x50, 0x44, 0x46, 0x2d]], // %PDF-
  ['image/jpeg', [0xff, 0xd8, 0xff]],
  ['image/png', [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]],
];
export function sniffDocumentType(head: Uint8Array): DocumentContentType | undefined {
  return MAGIC_NUMBERS.find(([, magic]) => magic.every((b, i) => head[i] === b))?.[0];
}

// A document may change between validation and upload (edited, or become a link, a device or a
// FIFO): validation keeps its size and SHA-256, and the upload compares, reading without blocking.

/** What validation saw of a document. */
export interface DocumentFingerprint {
  bytes: number;
  sha256: string;
  /** The path itself was a symbolic link (then only size and content are compared). */
  symlink: boolean;
}

/** Checks one document on disk (synchronously: a file of at most 10 MB), and what it saw of a valid one. */
export function checkDocumentFile(absPath: string, shownAs = absPath): DocumentCheck {
  const refused = (code: Extract<DocumentCheck, { ok: false }>['code'], message: string, expected: string): DocumentCheck => ({
    ok: false,
    path: absPath,
    code,
    message: `"${shownAs}" ${message}`,
    expected,
  });
  let size: number;
  try {
    const st = statSync(absPath);
    if (!st.isFile()) return refused('DOCUMENT_NOT_FOUND', 'is not a file', 'the path of a file, relative to the batch file');
    size = st.size;
  } catch {
    return refused('DOCUMENT_NOT_FOUND', 'does not exist', "the path of a file, relative to the batch file's folder");
  }
  if (size > MAX_DOCUMENT_BYTES) {
    const mb = (size / 1024 / 1024).toFixed(1);
    return refused('DOCUMENT_TOO_LARGE', `is ${mb} MB; the service takes at most 10 MB per file`, 'a file of at most 10 MB');
  }
  let content: Buffer;
  let symlink: boolean;
  try {
    symlink = lstatSync(absPath).isSymbolicLink();
    content = readFileSync(absPath); // a regular file of at most 10 MB, as just checked
  } catch (e) {
    return refused('DOCUMENT_NOT_FOUND', `cannot be read (${(e as NodeJS.ErrnoException).code})`, 'a readable file');
  }
  const type = sniffDocumentType(content);
  if (!type) return refused('DOCUMENT_TYPE', 'is not a PDF, JPEG or PNG (by its content, whatever its name)', 'a PDF, JPEG or PNG file');
  const sha256 = createHash('sha256').update(content).digest('hex');
  return { ok: true, path: absPath, contentType: type, fingerprint: { bytes: content.length, sha256, symlink } };
}

type DocumentRead =
  | { ok: true; bytes: Uint8Array; contentType: DocumentContentType; filename: string }
  | { ok: false; code: 'DOCUMENT_CHANGED'; message: string };

/** The name a document is uploaded under: an extension not its type's replaced, none given (the service refuses a PNG named .jpg). */
function uploadName(path: string, type: DocumentContentType): string {
  const [name, ext] = [basename(path), { 'application/pdf': '.pdf', 'image/jpeg': '.jpg', 'image/png': '.png' }[type]];
  const own = extname(name);
  return own && own.toLowerCase().replace('.jpeg', '.jpg') === ext ? name : name.slice(0, name.length - own.length) + ext;
}

// O_NONBLOCK: opening a FIFO for reading waits for a writer without it; a regular file ignores it.
const OPEN_FLAGS = constants.O_RDONLY | (constants.O_NONBLOCK ?? 0);

function kindOf(st: Stats): string {
  if (st.isFIFO()) return 'a FIFO';
  if (st.isCharacterDevice() || st.isBlockDevice()) return 'a device';
  if (st.isSocket()) return 'a socket';
  if (st.isDirectory()) return 'a folder';
  return 'something other than a regular file';
}

/** A document checker that also keeps the fingerprint of each valid document (by absolute path), for readDocumentForUpload. */
export function fingerprintingChecker() {
  const fingerprints = new Map<string, DocumentFingerprint>();
  const check = (absPath: string, shownAs?: string): DocumentCheck => {
    const r = checkDocumentFile(absPath, shownAs);
    if (r.ok && !fingerprints.has(absPath)) fingerprints.set(absPath, r.fingerprint);
    return r;
  };
  return { check, fingerprints };
}

/** A document's bytes at upload, when still a regular file as validation saw it (size, SHA-256, no new link); never throws or waits. */
export async function readDocumentForUpload(absPath: string, expected?: DocumentFingerprint): Promise<DocumentRead> {
  const changed = (why: string): DocumentRead => ({
    ok: false,
    code: 'DOCUMENT_CHANGED',
    message: `${absPath} changed after validation (${why}): not uploaded; check the file and send the row again`,
  });
  let fh: Awaited<ReturnType<typeof open>> | undefined;
  try {
    if (expected && !expected.symlink && (await lstat(absPath)).isSymbolicLink()) return changed('now a symbolic link');
    fh = await open(absPath, OPEN_FLAGS);
    const st = await fh.stat();
    if (!st.isFile()) return changed(`now ${kindOf(st)}`);
    if (st.size > MAX_DOCUMENT_BYTES) return changed('now over 10 MB');
    if (expected && st.size !== expected.bytes) return changed(`now ${st.size} bytes, ${expected.bytes} when validated`);
    // One byte more than fstat said, to see a file that grows while it is read.
    const buf = Buffer.alloc(st.size + 1);
    let n = 0;
    for (let r; n < buf.length && (r = (await fh.read(buf, n, buf.length - n, n)).bytesRead) > 0;) n += r;
    if (n !== st.size) return changed('its size changed while it was read');
    const bytes = buf.subarray(0, n);
    if (expected && createHash('sha256').update(bytes).digest('hex') !== expected.sha256) return changed('other content');
    const contentType = sniffDocumentType(bytes.subarray(0, 16));
    if (!contentType) return changed('no longer a PDF, JPEG or PNG');
    const view = new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    return { ok: true, bytes: view, contentType, filename: uploadName(absPath, contentType) };
  } catch (e) {
    return changed(`cannot be read (${(e as NodeJS.ErrnoException).code ?? 'error'})`);
  } finally {
    await fh?.close().catch(() => undefined);
  }
}
