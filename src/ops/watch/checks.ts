// The checks of a claimed file before anything is sent, beyond the engine's own: where its
// documents come from, and which currencies it pays from.
import { lstatSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { checkDocumentFile, validateBatch, type DocumentCheck } from '../../validation/index.ts';
import { CONFIG_FILE } from './config.ts';

/**
 * Why a document path named in a file is refused, or undefined. `abs` is the path as the
 * validation resolves it against the claim folder (lexically: ".." cannot step out unseen). It must
 * lie in DIR/documents (named as documents/… through the claim folder's link, or absolute), with
 * no symbolic link below that folder; with allowOutside anywhere, but the file itself not a link.
 * A path that does not exist is left to the validation (DOCUMENT_NOT_FOUND).
 */
export function documentRefusal(abs: string, o: { claimDir: string; documents: string; allowOutside: boolean }): string | undefined {
  const viaClaim = join(o.claimDir, 'documents');
  const inside = (p: string, root: string) => p.startsWith(root + sep);
  let real: string | undefined;
  if (inside(abs, viaClaim)) real = join(o.documents, abs.slice(viaClaim.length));
  else if (inside(abs, o.documents)) real = abs;
  if (real === undefined) {
    if (!o.allowOutside) return `outside ${o.documents} (set "allowDocumentsOutside": true in ${CONFIG_FILE} to allow it)`;
    try {
      if (lstatSync(abs).isSymbolicLink()) return 'a symbolic link: links are never followed';
    } catch {
      /* missing: the validation says so */
    }
    return undefined;
  }
  let p = o.documents;
  for (const part of relative(o.documents, real).split(sep)) {
    p = join(p, part);
    try {
      if (lstatSync(p).isSymbolicLink()) return `a symbolic link (${relative(o.documents, p)}): links are never followed`;
    } catch {
      return undefined;
    }
  }
  return undefined;
}

/**
 * One pass over the rows before the engine's, before anything is sent: the documents they name
 * (checked without following a link, and without reading one that is refused) and the currencies
 * they pay from. Why the file is refused, or undefined; a file that is not a batch throws the
 * validation's InputError or ResultsError.
 */
export async function vetRows(
  file: string,
  o: { claimDir: string; documents: string; allowOutside: boolean; allowedCurrencies: string[] | undefined },
): Promise<string | undefined> {
  const refusedDocs = new Map<string, string>(); // as written in the file -> why
  const checkDocument = (abs: string, shownAs = abs): DocumentCheck => {
    const why = documentRefusal(abs, o);
    if (!why) return checkDocumentFile(abs, shownAs);
    refusedDocs.set(shownAs, why);
    return {
      ok: false,
      path: abs,
      code: 'DOCUMENT_NOT_FOUND',
      message: `"${shownAs}" is ${why}`,
      expected: 'a file in the documents folder',
    };
  };
  const badCurrencies = new Map<string, number>();
  const v = await validateBatch(file, { checkDocument });
  try {
    for await (const r of v.rows) {
      const c = r.payout?.sourceCurrency;
      if (c && o.allowedCurrencies && !o.allowedCurrencies.includes(c)) badCurrencies.set(c, (badCurrencies.get(c) ?? 0) + 1);
    }
  } finally {
    await v.close();
  }
  if (refusedDocs.size) {
    const list = [...refusedDocs].slice(0, 5).map(([d, why]) => `"${d}" is ${why}`);
    if (refusedDocs.size > 5) list.push(`and ${refusedDocs.size - 5} more`);
    return `refused: documents may only come from ${o.documents}, never through a symbolic link: ${list.join('; ')}`;
  }
  if (badCurrencies.size && o.allowedCurrencies) {
    const list = [...badCurrencies].map(([c, n]) => `${c} (${n} row${n === 1 ? '' : 's'})`).join(', ');
    return `refused: source currencies not allowed by ${CONFIG_FILE}: ${list} (allowed: ${o.allowedCurrencies.join(', ')})`;
  }
  return undefined;
}
