// The checks of a claimed file before anything is sent, beyond the engine's own: where its
// documents come from, its currencies, and (all or nothing) invalid or risky rows.
import { existsSync, lstatSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import type { BatchPlan } from '../engine/batch-plan.ts';
import { checkDocumentFile, validateBatch, type DocumentCheck, type Problem } from '../validation/validation.ts';
import { attempt } from '../files/attempt.ts';
import { CONFIG_FILE, type WatchConfig } from './config.ts';
import { plural } from '../text.ts';

type VetOptions = { claimDir: string; documents: string } & Pick<WatchConfig, 'allowDocumentsOutside' | 'allowedCurrencies'>;

/**
 * Why a document path is refused. `abs` is resolved lexically against the claim folder (".." cannot
 * step out unseen); it must lie in DIR/documents with no link below it, or with allowDocumentsOutside be no link.
 */
function documentRefusal(abs: string, o: VetOptions): string | undefined {
  const viaClaim = join(o.claimDir, 'documents');
  const inside = (p: string, root: string) => p.startsWith(root + sep);
  const real = inside(abs, viaClaim) ? join(o.documents, abs.slice(viaClaim.length)) : inside(abs, o.documents) ? abs : undefined;
  if (real === undefined) {
    if (!o.allowDocumentsOutside) return `outside ${o.documents}`;
    // (missing: the validation says so)
    return attempt(() => lstatSync(abs))?.isSymbolicLink() ? 'a symbolic link: links are never followed' : undefined;
  }
  let p = o.documents;
  for (const part of relative(o.documents, real).split(sep)) {
    p = join(p, part);
    const st = attempt(() => lstatSync(p));
    if (!st) return undefined;
    if (st.isSymbolicLink()) return `a symbolic link (${relative(o.documents, p)}): links are never followed`;
  }
  return undefined;
}

/** The validation's problem, or a row the preflight found invalid (the engine's code). */
export type FileProblem = Omit<Problem, 'code'> & { code: string };

interface Vetted {
  /** Documents named outside DIR/documents or through a link: never read. */
  documents?: string;
  currencies?: string;
  /** Every error and risky warning: each refuses the file whole unless "allowPartial". */
  problems: FileProblem[];
}

/** One pass over the rows before the engine's; a file that is not a batch throws InputError or ResultsError. */
export async function vetRows(file: string, o: VetOptions & { name: string }): Promise<Vetted> {
  const refusedDocs = new Map<string, string>(); // as written in the file -> why
  const checkDocument = (abs: string, shownAs = abs): DocumentCheck => {
    const why = documentRefusal(abs, o);
    if (!why) return checkDocumentFile(abs, shownAs);
    refusedDocs.set(shownAs, why);
    return { ok: false, path: abs, code: 'DOCUMENT_NOT_FOUND', message: `"${shownAs}" is ${why}`, expected: `a file in ${o.documents}` };
  };
  const badCurrencies = new Map<string, number>();
  const problems: FileProblem[] = [];
  // (a pain.001's documents are matched by end-to-end id in the claim's documents/)
  const claimed = join(o.claimDir, 'documents');
  const v = await validateBatch(file, { checkDocument, ...(existsSync(claimed) ? { documents: claimed, documentsIfPain001: true } : {}) });
  try {
    for await (const r of v.rows) {
      for (const p of r.problems) if (p.severity === 'error' || p.risky) problems.push({ ...p, file: o.name });
      const c = r.payout?.sourceCurrency;
      if (c && o.allowedCurrencies && !o.allowedCurrencies.includes(c)) badCurrencies.set(c, (badCurrencies.get(c) ?? 0) + 1);
    }
  } finally {
    await v.close();
  }
  const out: Vetted = { problems };
  if (refusedDocs.size) {
    const list = [...refusedDocs].slice(0, 5).map(([d, why]) => `"${d}" is ${why}`);
    if (refusedDocs.size > 5) list.push(`and ${refusedDocs.size - 5} more`);
    out.documents =
      `documents may only come from ${o.documents}, never through a symbolic link: ${list.join('; ')}. ` +
      `Copy each into ${o.documents} and name it documents/NAME in the file`;
  }
  if (badCurrencies.size && o.allowedCurrencies) {
    const list = [...badCurrencies].map(([c, n]) => `${c} (${plural(n, 'row')})`).join(', ');
    out.currencies = `source currencies not allowed by ${CONFIG_FILE}: ${list} (allowed: ${o.allowedCurrencies.join(', ')})`;
  }
  return out;
}

/** The problems that refuse a file whole: those found before the engine, and the rows the preflight found invalid besides. */
export function wholeFileProblems(found: FileProblem[], plan: Pick<BatchPlan, 'invalidRows'>, name: string): FileProblem[] {
  const invalid = new Set(found.filter((p) => p.severity === 'error').map((p) => p.row));
  const more = [...plan.invalidRows]
    .filter(([row]) => !invalid.has(row))
    .map(([row, i]): FileProblem => ({ severity: 'error', code: i.code, file: name, row, message: i.message }));
  return [...found, ...more].sort((a, b) => (a.row ?? 0) - (b.row ?? 0));
}

/** Why a watch refuses a file: rows first, then currencies, then documents. `summary`: its path once in failed/. */
export function refusalText(v: Vetted, summary: string, nothingSent: string): string {
  const rowsOf = (ps: FileProblem[]) => [...new Set(ps.flatMap((p) => (p.row === undefined ? [] : [p.row])))];
  const invalid = rowsOf(v.problems.filter((p) => p.severity === 'error'));
  const risky = rowsOf(v.problems.filter((p) => p.risky)).filter((r) => !invalid.includes(r));
  const list = (rs: number[]) => `${rs.length === 1 ? 'row' : 'rows'} ${rs.join(', ')}`;
  const rows = [
    invalid.length ? `${plural(invalid.length, 'invalid row')} (${list(invalid)})` : '',
    risky.length ? `${plural(risky.length, 'row')} with a warning that may pay the wrong person (${list(risky)})` : '',
  ].filter(Boolean);
  const whole = rows.length
    ? `${rows.join(' and ')}: a watch pays a file whole or not at all. Every problem (row, column, what would be valid) ` +
      `is in ${summary} and the log: fix the rows, then drop the file again`
    : '';
  const reasons = [whole, v.currencies, v.documents]
    .filter((r): r is string => !!r)
    .map((r, i) => (i ? r[0]!.toUpperCase() + r.slice(1) : r));
  return `refused: ${reasons.join('. ')}. ${nothingSent}`;
}
