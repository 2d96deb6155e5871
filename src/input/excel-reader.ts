// The Excel formats (.xlsx, and BIFF .xls); SheetJS (excel.ts) is loaded only when one comes.
import { readFile } from 'node:fs/promises';
import { InputError } from './input-errors.ts';
import { sniffKind } from './detect.ts';
import { shapeRows } from './records.ts';
import { checkWorkbookFileSize } from './zip-guard.ts';
import type { BatchReader } from './reader.ts';

export const excelReader: BatchReader = {
  formatOf(head) {
    const kind = sniffKind(head);
    return kind === 'xlsx' || kind === 'xls' ? kind : undefined;
  },
  ownExtensions: {
    extensions: ['.xlsx', '.xls'],
    misnamed: (file, ext) =>
      `${file}: named ${ext} but not an Excel workbook; is it a CSV renamed? Rename it .csv or save it again from Excel.`,
  },
  async open({ file, path, size, format, options }) {
    checkWorkbookFileSize(file, size); // before reading it whole
    const buf = await readFile(path).catch((e: Error) => {
      throw new InputError('UNREADABLE', file, `${file}: cannot read the file (${e.message}).`);
    });
    const { openExcel } = await import('./excel.ts');
    const { records, ...x } = await openExcel(buf, file, options.sheet); // (x: the sheet read, ownSheet, all sheets)
    try {
      return { file, format, ...x, ...(await shapeRows(file, records)), close: async () => {} };
    } catch (e) {
      // the payroll on another sheet: say which sheet was read, the others, and --sheet
      const others = x.sheets.filter((s) => s !== x.sheet).map((s) => `"${s}"`);
      if (!(e instanceof InputError) || !['NO_HEADER', 'MISSING_COLUMNS', 'EMPTY_FILE'].includes(e.code) || !others.length) throw e;
      const hint = `(sheet "${x.sheet}" read; the workbook also has ${others.join(', ')}: name the payroll's with --sheet)`;
      throw new InputError(e.code, file, `${e.message.replace(/\.$/, '')} ${hint}.`, e.row);
    }
  },
};
