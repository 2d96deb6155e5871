// Supporting documents named in a row: they must exist, be PDF, JPEG or PNG by their bytes (the
// magic numbers, not the extension), weigh at most 10 MB (spec §8), at most 5 per row.
import { closeSync, openSync, readSync, statSync } from 'node:fs';
import { isAbsolute, resolve, sep } from 'node:path';
import { MAX_DOCUMENT_BYTES, type DocumentContentType } from '../spec/codes.ts';
import type { ProblemCode } from './problems.ts';

export type DocumentCheck =
  | { ok: true; path: string; contentType: DocumentContentType; bytes: number }
  | {
      ok: false;
      path: string;
      code: Extract<ProblemCode, 'DOCUMENT_NOT_FOUND' | 'DOCUMENT_TYPE' | 'DOCUMENT_TOO_LARGE'>;
      message: string;
      expected: string;
    };

/** The content type of a file from its first bytes, or undefined when it is none of ours. */
export function sniffDocumentType(head: Uint8Array): DocumentContentType | undefined {
  if (head.length >= 5 && head[0] === 0x25 && head[1] === 0x50 && head[2] === 0x44 && head[3] === 0x46 && head[4] === 0x2d)
    return 'application/pdf'; // %PDF-
  if (head.length >= 3 && head[0] === 0xff && head[1] === 0xd8 && head[2] === 0xff) return 'image/jpeg';
  const png = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];
  if (head.length >= 8 && png.every((b, i) => head[i] === b)) return 'image/png';
  return undefined;
}

const EXPECTED_TYPE = 'a PDF, JPEG or PNG file';

/** Checks one document on disk (synchronously: a few bytes per file). */
export function checkDocumentFile(absPath: string, shownAs = absPath): DocumentCheck {
  let size: number;
  try {
    const st = statSync(absPath);
    if (!st.isFile())
      return {
        ok: false,
        path: absPath,
        code: 'DOCUMENT_NOT_FOUND',
        message: `"${shownAs}" is not a file`,
        expected: 'the path of a file, relative to the batch file',
      };
    size = st.size;
  } catch {
    return {
      ok: false,
      path: absPath,
      code: 'DOCUMENT_NOT_FOUND',
      message: `"${shownAs}" does not exist`,
      expected: "the path of a file, relative to the batch file's folder",
    };
  }
  if (size > MAX_DOCUMENT_BYTES) {
    return {
      ok: false,
      path: absPath,
      code: 'DOCUMENT_TOO_LARGE',
      message: `"${shownAs}" is ${(size / 1024 / 1024).toFixed(1)} MB; the service takes at most 10 MB per file`,
      expected: 'a file of at most 10 MB',
    };
  }
  const head = Buffer.alloc(8);
  let n = 0;
  try {
    const fd = openSync(absPath, 'r');
    try {
      n = readSync(fd, head, 0, 8, 0);
    } finally {
      closeSync(fd);
    }
  } catch (e) {
    return {
      ok: false,
      path: absPath,
      code: 'DOCUMENT_NOT_FOUND',
      message: `"${shownAs}" cannot be read (${(e as NodeJS.ErrnoException).code})`,
      expected: 'a readable file',
    };
  }
  const type = sniffDocumentType(head.subarray(0, n));
  if (!type)
    return {
      ok: false,
      path: absPath,
      code: 'DOCUMENT_TYPE',
      message: `"${shownAs}" is not a PDF, JPEG or PNG (by its content, whatever its name)`,
      expected: EXPECTED_TYPE,
    };
  return { ok: true, path: absPath, contentType: type, bytes: size };
}

/** A checker that remembers the last `max` answers: payrolls often attach the same file to many rows. */
export function cachedDocumentChecker(max = 1000): (absPath: string, shownAs?: string) => DocumentCheck {
  const cache = new Map<string, DocumentCheck>();
  return (absPath, shownAs) => {
    const hit = cache.get(absPath);
    if (hit) {
      if (hit.ok || shownAs === undefined) return hit;
      return { ...hit, message: hit.message.replace(/^"[^"]*"/, `"${shownAs}"`) };
    }
    const r = checkDocumentFile(absPath, shownAs);
    if (cache.size >= max) cache.delete(cache.keys().next().value!);
    cache.set(absPath, r);
    return r;
  };
}

/** The document paths of a cell: split on ";", each trimmed, empty ones dropped. */
export function documentPaths(cell: string): string[] {
  if (cell.indexOf(';') === -1) {
    const d = cell.trim();
    return d === '' ? [] : [d];
  }
  return cell
    .split(';')
    .map((d) => d.trim())
    .filter(Boolean);
}

// A relative path of plain names (no ".", "..", empty segment or backslash) under a folder that
// is already absolute and normalized resolves to folder + "/" + path: no need to run resolve().
const PLAIN_RELATIVE = /^[^/\\.][^/\\]*(?:\/[^/\\.][^/\\]*)*$/;
let normalBase: string | undefined;

/** The absolute path of a document named in a row: path.resolve(baseDir, d), cheaper for plain names. */
export function documentPath(baseDir: string, d: string): string {
  if (sep === '/' && PLAIN_RELATIVE.test(d)) {
    if (baseDir !== normalBase && baseDir !== '/' && resolve(baseDir) === baseDir) normalBase = baseDir;
    if (baseDir === normalBase) return `${baseDir}/${d}`;
  }
  return isAbsolute(d) ? d : resolve(baseDir, d);
}
