// An .xlsx sheet is streamed from the zip (issue 44); a sheet with no <dimension> is read whole by
// SheetJS. Both must hand out the same records: each cell as the user sees it.
import { describe, expect, it } from 'vitest';
import * as XLSX from 'xlsx';
import { openExcel } from '../../src/input/excel.ts';

const CELLS: Record<string, XLSX.CellObject> = {
  B3: { t: 's', v: 'reference' },
  C3: { t: 's', v: 'amount' },
  D3: { t: 's', v: 'when' },
  E3: { t: 's', v: 'flag' },
  F3: { t: 's', v: 'other' },
  B4: { t: 's', v: 'R1 & <co>' },
  C4: { t: 'n', v: 1234.5, z: '#,##0.00' },
  D4: { t: 'n', v: 45688, z: 'yyyy-mm-dd' },
  E4: { t: 'b', v: true },
  F4: { t: 'e', v: 7 },
  B5: { t: 's', v: 'line1\r\nline2' },
  C5: { t: 'n', v: 0.1 + 0.2 },
  D5: { t: 'n', v: 45688.5, z: 'm/d/yy h:mm' },
  E5: { t: 'n', v: 3, f: 'A1+2' },
  F5: { t: 's', v: 'abc', f: 'CONCAT("a","bc")' },
  B7: { t: 's', v: '  spaced  ' },
  C7: { t: 'n', v: 123456789012, z: '0' },
  D7: { t: 'n', v: 12, z: '@' },
  E7: { t: 'n', v: 0.125, z: '0%' },
  F7: { t: 'd', v: new Date(Date.UTC(2025, 0, 31)) },
  B8: { t: 's', v: 'Zürich 北京' },
  C8: { t: 'n', v: -1.5, z: '"$"#,##0.00_);\\("$"#,##0.00\\)' },
  E8: { t: 'e', v: 0x2a },
  G8: { t: 's', v: 'beyond the header' },
};

function workbook(opts: XLSX.WritingOptions, dimension = true): Buffer {
  const wb = XLSX.utils.book_new();
  XLSX.utils.book_append_sheet(wb, { ...CELLS, '!ref': 'B3:G8' }, 'First');
  const buf = XLSX.write(wb, { type: 'buffer', bookType: 'xlsx', ...opts }) as Buffer;
  if (dimension) return buf;
  // uncompressed, so the tag can be blanked in place (same length: the zip stays valid)
  const xml = buf.toString('latin1');
  const tag = '<dimension ref="B3:G8"/>';
  expect(xml).toContain(tag);
  return Buffer.from(xml.replace(tag, ' '.repeat(tag.length)), 'latin1');
}

async function records(buf: Buffer) {
  const x = await openExcel(buf, 'w.xlsx');
  const out = [];
  for await (const r of x.records) out.push(r);
  return out;
}

describe('an .xlsx sheet streamed', () => {
  it('gives the records SheetJS gives reading it whole, with shared or inline strings, compressed or not', async () => {
    const whole = await records(workbook({ compression: false }, false));
    expect(whole.map((r) => r.rowNumber)).toEqual([3, 4, 5, 6, 7, 8]);
    expect(whole[1]).toEqual({
      rowNumber: 4,
      values: ['R1 & <co>', '1,234.50', '2025-01-31', 'TRUE', '#DIV/0!'],
      numbers: [undefined, 1234.5],
      dates: [undefined, undefined, '2025-01-31'],
    });
    expect(whole[2]!.values).toEqual(['line1\nline2', '0.3', '2025-01-31T12:00:00', '3', 'abc']);
    expect(whole[5]!.values).toEqual(['Zürich 北京', '($1.50)', '', '#N/A', '', 'beyond the header']);
    for (const opts of [{ compression: true }, { bookSST: true }, { bookSST: true, cellDates: true }, { compression: false }])
      expect(await records(workbook(opts))).toEqual(whole);
  });

  it('reads a date cell written with a zone west of UTC as that instant (it read as no date: NaN)', async () => {
    const xml = workbook({ compression: false, cellDates: true }).toString('latin1');
    const utc = '<v>2025-01-31T00:00:00.000Z</v>';
    expect(xml).toContain(utc);
    const west = await records(Buffer.from(xml.replace(utc, '<v>2025-01-30T19:00-05:00</v>  '), 'latin1'));
    expect(west[4]!.values[4]).toBe('2025-01-31');
  });
});
