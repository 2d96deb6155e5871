// validateBatch read to the end, every row and problem kept: for the tests, of templates and small files.
import { validateBatch, type ValidatedRow, type ValidateOptions } from '../../src/validation/validation.ts';

export async function collectBatch(path: string, options: ValidateOptions = {}) {
  const v = await validateBatch(path, options);
  const rows: ValidatedRow[] = [];
  for await (const r of v.rows) rows.push(r);
  const problems = [...v.fileProblems, ...rows.flatMap((r) => r.problems)].sort((a, b) => (a.row ?? 0) - (b.row ?? 0));
  return { source: v.source, rows, problems, summary: v.summary };
}
