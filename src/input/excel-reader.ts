// The Excel formats (.xlsx, and BIFF .xls): a workbook by its magic bytes, whatever its name; a file
// named .xlsx or .xls that is text is refused. SheetJS (excel.ts) is loaded only when one comes.
import { readFile } from 'node:fs/promises';
import { InputError } from './input-errors.ts';
import { sniffKind } from './detect.ts';
import { shapeRows } from './records.ts';
import { checkWorkbookFileSize } from './zip-guard.ts';
import { encodingOption, type BatchReader } from './reader.ts';

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
  async open({ file, size, format, options, refuse }) {
    encodingOption(file, format, options, refuse);
    checkWorkbookFileSize(file, size); // before reading it whole
    let buf: Buffer;
    try {
      buf = await readFile(file);
    } catch (e) {
      throw new InputError('UNREADABLE', file, `${file}: cannot read the file (${(e as Error).message}).`);
    }
    const { openExcel } = await import('./excel.ts');
    const x = await openExcel(buf, file, options.sheet);
    return { file, format, sheet: x.sheet, sheets: x.sheets, ...(await shapeRows(file, x.records)), close: async () => {} };
  },
};
