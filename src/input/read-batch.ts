// Reading a batch file (README.md): each reader in turn says whether the first bytes are its format.
import { extname, resolve } from 'node:path';
import { InputError, type Refuse } from './input-errors.ts';
import { csvReader } from './csv-reader.ts';
import { excelReader } from './excel-reader.ts';
import { pain001Reader } from './pain001-reader.ts';
import { encodingOption, fileHead, fileSize, type BatchReader, type BatchSource, type ReadOptions } from './reader.ts';

export { InputError } from './input-errors.ts';
export type { RawRow } from './records.ts';
export type { BatchSource, ReadOptions } from './reader.ts';

/** The readers, asked in this order: a workbook's magic bytes, then XML, before any text. */
const READERS: readonly BatchReader[] = [excelReader, pain001Reader, csvReader];

const HEAD_BYTES = 1024 * 1024;

/** Opens a batch file. Throws InputError for a file that cannot be used (exit code 2). */
export async function readBatch(file: string, options: ReadOptions = {}): Promise<BatchSource> {
  const refuse: Refuse = (code, message) => new InputError(code, file, message);
  const path = resolve(options.dir ?? '', file);
  const size = await fileSize(file, 'a batch file', refuse, path);
  const head = await fileHead(path, Math.min(size, HEAD_BYTES)).catch((e: NodeJS.ErrnoException) => {
    throw refuse('UNREADABLE', `${file}: cannot read the file (${e.code ?? e.message}).`);
  });

  const found = READERS.map((reader) => ({ reader, format: reader.formatOf(head) })).find((r) => r.format !== undefined);
  if (!found?.format) {
    throw refuse(
      'UNSUPPORTED_FORMAT',
      `${file}: not a CSV, Excel or pain.001 file (it holds binary data). Save the batch as CSV (UTF-8) or .xlsx.`,
    );
  }
  const ext = extname(file).toLowerCase();
  // (a batch named .json, a CSV, is read; JSON is none: most often a plan, given where its batch goes; \s: a BOM too)
  if (ext === '.json' && /^\s*[[{]/.test(head.toString('utf8', 0, 64)))
    throw refuse(
      'UNSUPPORTED_FORMAT',
      `${file}: a JSON file, not a CSV, Excel or pain.001 batch; a plan runs with \`run --plan ${file}\`.`,
    );
  const owner = READERS.find((r) => r !== found.reader && r.ownExtensions?.extensions.includes(ext));
  if (owner) throw refuse('UNSUPPORTED_FORMAT', owner.ownExtensions!.misnamed(file, ext));
  const encoding = encodingOption(file, found.format, options, refuse);
  return found.reader.open({ file, path, head, size, format: found.format, options, encoding });
}

/** The latest ReqdExctnDt of a batch, a pain.001's or a column's (undefined for a file that cannot be read: its run says why). */
export async function latestExecutionDate(file: string): Promise<string | undefined> {
  let latest: string | undefined;
  try {
    // (a date not written YYYY-MM-DD is the run's to refuse, never a reason to wait; `rows` read to its end releases the file)
    for await (const { cells } of (await readBatch(file)).rows) {
      const d = cells.ReqdExctnDt ?? '';
      if (/^\d{4}-\d\d-\d\d$/.test(d) && !(latest && latest >= d)) latest = d;
    }
  } catch {
    return undefined;
  }
  return latest;
}
