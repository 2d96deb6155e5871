// ValidateOptions.settled: rows an earlier run created skip validation, but only when nothing about
// them is unusual; the rules that span rows still see them.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { collectBatch, probableDuplicateKey, type SettledRow } from '../../src/validation/index.ts';
import { generateCsv } from '../engine/helpers.ts';

const dirs: string[] = [];
afterAll(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

/** A batch of `rows` generated rows, `edit` applied to its data lines (0 = first data row, file row 2). */
async function batch(rows: number, edit: (lines: string[]) => string[] = (l) => l): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'pb-settled-'));
  dirs.push(dir);
  const [header, ...data] = generateCsv({ rows }).trim().split('\n');
  const path = join(dir, 'batch.csv');
  await writeFile(path, [header, ...edit(data)].join('\n') + '\n');
  return path;
}

describe('validateBatch with rows settled by an earlier run', () => {
  it('a settled row is valid with no payout and no problems, even when its cells would fail now', async () => {
    const path = await batch(3, (l) => [l[0]!.replace(/,NGN,NGN,NGA,NIP,/, ',NGN,NGN,NGA,TELEPATHY,'), l[1]!, l[2]!]);
    const plain = await collectBatch(path);
    expect(plain.rows[0]!.valid).toBe(false); // the method is unknown
    const seen: [string, number][] = [];
    const settled = (ref: string, row: number): SettledRow | undefined => {
      seen.push([ref, row]);
      return ref === 'GEN-0001' && row === 2 ? { dup: 42 } : undefined;
    };
    const r = await collectBatch(path, { settled });
    expect(r.rows[0]).toMatchObject({ rowNumber: 2, valid: true, problems: [], settled: { reference: 'GEN-0001' } });
    expect(r.rows[0]!.payout).toBeUndefined();
    expect(r.rows.slice(1).map((x) => [x.valid, !!x.payout, x.settled])).toEqual([
      [true, true, undefined],
      [true, true, undefined],
    ]);
    expect(seen).toEqual([
      ['GEN-0001', 2],
      ['GEN-0002', 3],
      ['GEN-0003', 4],
    ]);
    expect(r.summary).toMatchObject({ rows: 3, valid: 3, invalid: 0 });
  });

  it("a later row with the settled row's probable-duplicate key is flagged, naming the settled row", async () => {
    const path = await batch(3, (l) => [...l, l[1]!.replace('GEN-0002', 'GEN-0009')]);
    const plain = await collectBatch(path);
    const key = probableDuplicateKey(plain.rows[1]!.payout!);
    const r = await collectBatch(path, { settled: (ref, row) => (ref === 'GEN-0002' && row === 3 ? { dup: key } : undefined) });
    expect(r.rows[1]!.settled).toEqual({ reference: 'GEN-0002' });
    const last = r.rows[3]!;
    expect(last.valid).toBe(false);
    expect(last.problems.map((p) => p.code)).toEqual(['PROBABLE_DUPLICATE']);
    expect(last.problems[0]!.message).toMatch(/as row 3\b/);
    // the same verdicts as validating every row
    expect(r.rows.map((x) => x.valid)).toEqual(plain.rows.map((x) => x.valid));
  });

  it('validated as before when the row is not where it was sent from, its reference repeats, or its key was seen first', async () => {
    // GEN-0002 appears twice: the second one is a duplicate reference whatever the journal says
    const path = await batch(3, (l) => [l[0]!, l[1]!, l[2]!, l[1]!.replace(/,\d+\.\d\d,/, ',77.77,')]);
    const plain = await collectBatch(path);
    const dupOfFirst = probableDuplicateKey(plain.rows[0]!.payout!);
    const r = await collectBatch(path, {
      settled: (ref, row) =>
        ref === 'GEN-0001' && row === 9
          ? { dup: 1 } // another row number: validated
          : ref === 'GEN-0002'
            ? { dup: 2 } // rows 3 and 5: the second is a repeated reference
            : ref === 'GEN-0003' && row === 4
              ? { dup: dupOfFirst } // a key row 2 had first: validated (with its own key)
              : undefined,
    });
    expect(r.rows.map((x) => !!x.settled)).toEqual([false, true, false, false]);
    expect(r.rows[0]!.payout?.reference).toBe('GEN-0001');
    expect(r.rows[2]!.payout?.reference).toBe('GEN-0003');
    expect(r.rows[3]!.problems.map((p) => p.code)).toEqual(['DUPLICATE_REFERENCE']);
    expect(r.rows[3]!.problems[0]!.message).toMatch(/row 3\b/);
  });
});
