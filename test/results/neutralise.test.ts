import { afterAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { readFileSync } from 'node:fs';
import { neutralise, unneutralise, writeResults, readResults } from '../../src/results/results.ts';
import { csvLines, tempDir } from './helpers.ts';

const tmp = tempDir('pb-results-neut-');
afterAll(tmp.cleanup);

describe('neutralise', () => {
  it.each([
    ['=SUM(A1)', "'=SUM(A1)"],
    ['+447700900123', "'+447700900123"],
    ["-2+3+cmd|' /C calc'!A0", "'-2+3+cmd|' /C calc'!A0"],
    ['@SUM(1)', "'@SUM(1)"],
    ['\tx', "'\tx"],
    ['\rx', "'\rx"],
  ])('prefixes %j with a quote', (text, written) => {
    expect(neutralise(text)).toBe(written);
    expect(unneutralise(written)).toBe(text);
  });

  it.each(['plain', '', 'Zoë', ' =not first', '12.50', "'t Hooft", "'", 'a=b', '\nx'])('leaves %j as it is', (text) => {
    expect(neutralise(text)).toBe(text);
    expect(unneutralise(text)).toBe(text);
  });

  it('escapes a text that already looks neutralised, so reading gives it back', () => {
    expect(neutralise("'=x")).toBe("''=x");
    expect(neutralise("''")).toBe("'''");
    expect(unneutralise("''=x")).toBe("'=x");
  });

  it('is a bijection: unneutralise undoes it for every string, and no output starts with a trigger', () => {
    const unit = fc.oneof(
      fc.constantFrom('=', '+', '-', '@', '\t', '\r', "'", '\n', ' ', 'a', '\\', 'u202E', 'u0041', '\u202e', '\u001b', '\u0085'),
      fc.string({ unit: 'binary', maxLength: 1 }),
    );
    fc.assert(
      fc.property(fc.string({ unit, maxLength: 8 }), (s) => {
        const n = neutralise(s);
        // a spreadsheet runs a text starting with = + - @ tab or CR as a formula
        return unneutralise(n) === s && !/^[=+\-@\t\r]/.test(n);
      }),
      { numRuns: 1000 },
    );
  });
});

describe('hidden characters in the written file (issue 43, item 16)', () => {
  it('writes ESC, BEL and U+202E of a cell as visible escapes, in CSV and XLSX, and reads the exact cell back', async () => {
    const cells = { accountName: 'Chinedu \u202eEze\u001b[31mRED', accountNumber: '06912\u001b]0;x\u0007', note: 'C:\\u0041 \\\u001b\tx' };
    for (const name of ['h.csv', 'h.xlsx']) {
      const p = tmp.path(name);
      await writeResults(p, {
        format: name.endsWith('.csv') ? 'csv' : 'xlsx',
        inputColumns: Object.keys(cells),
        rows: [{ rowNumber: 2, cells, result: { status: 'INVALID', errorMessage: 'echo \u009b2J' } }],
      });
      if (name.endsWith('.csv')) {
        const text = readFileSync(p, 'utf8');
        // control characters are exactly what must not appear (a tab and line breaks aside)
        expect(text).not.toMatch(/(?![\t\n\r])[\p{Cc}\u202e]/u);
        expect(text).toContain('Chinedu \\u202EEze\\u001B[31mRED,06912\\u001B]0;x\\u0007,C:\\\\u0041 \\\\\\u001B\tx');
      }
      const back = await readResults(p);
      expect(back.rows[0]!.cells).toEqual(cells);
      expect(back.rows[0]!.result.errorMessage).toBe('echo \u009b2J');
    }
  });
});

describe('neutralising in the written file', () => {
  it('prefixes text cells that start with = + - @ tab CR, in CSV and in XLSX', async () => {
    const texts = ['=1+1', '+44 20', '-x', '@x', '\tx', '\rx'];
    const inputColumns = texts.map((_, i) => `c${i}`);
    const cells = Object.fromEntries(texts.map((t, i) => [`c${i}`, t]));
    const p = tmp.path('n.csv');
    await writeResults(p, {
      format: 'csv',
      inputColumns,
      rows: [{ rowNumber: 2, cells, result: { status: 'REJECTED', errorMessage: '=HYPERLINK("http://x")' } }],
    });
    const line = csvLines(p).slice(1).join('\r\n');
    expect(line.startsWith(`'=1+1,'+44 20,'-x,'@x,'\tx,"'\rx",REJECTED,`)).toBe(true);
    expect(line).toContain(`"'=HYPERLINK(""http://x"")"`);
    const back = await readResults(p);
    expect(back.rows[0]!.cells).toEqual(cells);
    expect(back.rows[0]!.result.errorMessage).toBe('=HYPERLINK("http://x")');
  });

  it('does not neutralise numbers in numeric columns (negative included), but does text there', async () => {
    const p = tmp.path('num.csv');
    await writeResults(p, {
      format: 'csv',
      inputColumns: ['reference'],
      rows: [
        {
          rowNumber: 2,
          cells: { reference: 'R1' },
          result: {
            status: 'PENDING',
            fee: '-1.50',
            quotedRate: '0.000123',
            totalDeductible: '-0',
            destinationAmount: '=1+2',
            appliedRate: '-',
          },
        },
      ],
    });
    const cells = csvLines(p)[1]!.split(',');
    expect(cells.slice(5, 10)).toEqual(['0.000123', "'-", '-1.50', '-0', "'=1+2"]);
    const back = await readResults(p);
    expect(back.rows[0]!.result).toMatchObject({
      fee: '-1.50',
      quotedRate: '0.000123',
      totalDeductible: '-0',
      destinationAmount: '=1+2',
      appliedRate: '-',
    });
  });

  it('neutralises a negative amount in a batch column, which is text like any other input cell', async () => {
    const p = tmp.path('neg.csv');
    await writeResults(p, {
      format: 'csv',
      inputColumns: ['sourceAmount'],
      rows: [{ rowNumber: 2, cells: { sourceAmount: '-5.00' }, result: { status: 'INVALID' } }],
    });
    expect(csvLines(p)[1]!.startsWith("'-5.00,")).toBe(true);
    expect((await readResults(p)).rows[0]!.cells.sourceAmount).toBe('-5.00');
  });
});
