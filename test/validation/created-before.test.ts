// ValidateOptions.createdBefore: rows an earlier run created are validated like any other row, and
// keep their place in the probable-duplicate rule even when the file now fails validation.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { collectBatch } from './collect.ts';
import { generateCsv } from '../engine/helpers.ts';

const dirs: string[] = [];
afterAll(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

/** A batch of `rows` generated rows, `edit` applied to its data lines (0 = first data row, file row 2). */
async function batch(rows: number, edit: (lines: string[], set: (line: string, column: string, value: string) => string) => string[]) {
  const dir = await mkdtemp(join(tmpdir(), 'pb-created-before-'));
  dirs.push(dir);
  const [header, ...data] = generateCsv({ rows }).trim().split('\n');
  const columns = header!.split(',');
  const set = (line: string, column: string, value: string) => {
    const cells = line.split(',');
    cells[columns.indexOf(column)] = value;
    return cells.join(',');
  };
  const path = join(dir, 'batch.csv');
  await writeFile(path, [header, ...edit(data, set)].join('\n') + '\n');
  return path;
}

describe('validateBatch with rows created by an earlier run', () => {
  it('validates a created row like any other: its problems are reported', async () => {
    const path = await batch(3, (l) => [l[0]!.replace(/,NGN,NGN,NGA,NIP,/, ',NGN,NGN,NGA,TELEPATHY,'), l[1]!, l[2]!]);
    const asked: string[] = [];
    const r = await collectBatch(path, { createdBefore: (ref) => (asked.push(ref), ref === 'GEN-0001') });
    expect(r.rows[0]!.valid).toBe(false);
    expect(r.rows[0]!.problems.map((p) => p.code)).toContain('INVALID_METHOD');
    expect(r.rows.slice(1).map((x) => x.valid)).toEqual([true, true]);
    expect(r.summary).toMatchObject({ rows: 3, valid: 2, invalid: 1 });
  });

  it('a later row that repeats a created row now invalid (its document moved away) is a probable duplicate, naming it', async () => {
    const path = await batch(3, (l, set) => [
      set(set(l[0]!, 'documents', 'moved-away.pdf'), 'withdrawal', 'false'),
      l[1]!,
      l[2]!,
      l[0]!.replace('GEN-0001', 'GEN-0009'),
    ]);
    const plain = await collectBatch(path);
    expect(plain.rows[0]!.problems.map((p) => p.code)).toEqual(['DOCUMENT_NOT_FOUND']);
    // not created before: an invalid row is never sent, and a later row like it is not its duplicate
    expect(plain.rows[3]!.valid).toBe(true);

    const r = await collectBatch(path, { createdBefore: (ref) => ref === 'GEN-0001' });
    expect(r.rows[0]!.valid).toBe(false);
    const last = r.rows[3]!;
    expect(last.valid).toBe(false);
    expect(last.problems.map((p) => p.code)).toEqual(['PROBABLE_DUPLICATE']);
    expect(last.problems[0]!.message).toMatch(/as row 2\b/);
  });

  it('a row that repeats a created row’s reference is a duplicate reference, and not that row in the probable-duplicate rule', async () => {
    const moved = (line: string, set: (line: string, column: string, value: string) => string) =>
      set(set(line, 'documents', 'moved-away.pdf'), 'withdrawal', 'false');
    const path = await batch(3, (l, set) => [
      l[0]!,
      l[1]!,
      l[2]!,
      moved(set(l[1]!, 'sourceAmount', '77.77'), set),
      set(l[1]!.replace('GEN-0002', 'GEN-0009'), 'sourceAmount', '77.77'),
    ]);
    const r = await collectBatch(path, { createdBefore: (ref) => ref === 'GEN-0002' });
    expect(r.rows[3]!.problems.map((p) => p.code)).toEqual(['DOCUMENT_NOT_FOUND', 'DUPLICATE_REFERENCE']);
    expect(r.rows[4]!.problems.map((p) => p.code)).toEqual([]);
    expect(r.rows[4]!.valid).toBe(true);
  });
});
