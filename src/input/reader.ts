// What a reader of batch files is: one per format, registered in READERS (read-batch.ts).
import { open, stat } from 'node:fs/promises';
import type { Refuse } from './input-errors.ts';
import { parseEncodingName, TEXT_ENCODINGS, type Delimiter, type TextEncoding } from './detect.ts';
import type { ShapedRows } from './records.ts';

/** The formats read (a new reader adds its own). */
export type BatchFormat = 'csv' | 'xlsx' | 'xls' | 'pain.001';

export interface ReadOptions {
  /** CSV only: one of TEXT_ENCODINGS (aliases such as cp1252 and latin1 accepted). */
  encoding?: string;
  /** Excel only: the sheet to read (default: the first). */
  sheet?: string;
  /** pain.001 only: the folder of supporting documents, matched by end-to-end id or referred document number. */
  documents?: string;
  /** `documents` is a watch claim's folder, used if the file is a pain.001 (a CSV or workbook names documents/NAME): never refused. */
  documentsIfPain001?: boolean;
  /** The folder a relative file name is read from (a command's CliIO.cwd; default the process's): messages name it as given. */
  dir?: string;
}

export interface BatchSource extends ShapedRows {
  file: string;
  format: BatchFormat;
  /** CSV: the encoding read and how it was chosen. */
  encoding?: TextEncoding;
  encodingDetectedBy?: string;
  delimiter?: Delimiter;
  /** Excel: the sheet read, all sheets of the workbook, and `ownSheet`: the sheet read when not the first shown (read without --sheet). */
  sheet?: string;
  sheets?: string[];
  ownSheet?: string;
  /** pain.001: the message's GrpHdr/MsgId and version. */
  message?: { id: string; version: string };
  /** Releases the file when `rows` is not read to the end (a property: callers take it out and call it later). */
  close: () => Promise<void>;
}

/** What a reader is handed: the file, its first bytes (up to 1 MiB), its size and the options. */
export interface ReaderInput {
  /** As named in messages; read at `path`. */
  file: string;
  path: string;
  head: Buffer;
  size: number;
  format: BatchFormat;
  options: ReadOptions;
  /** A CSV's --encoding (encodingOption, checked for every format before a reader opens the file). */
  encoding?: TextEncoding;
}

export interface BatchReader {
  /** The format of a file from its first bytes, when it is one this reader reads; else undefined. */
  formatOf(head: Uint8Array): BatchFormat | undefined;
  /** Extensions only a file of this reader's formats may bear, and the refusal of another named so. */
  ownExtensions?: { extensions: readonly string[]; misnamed: (file: string, ext: string) => string };
  open(input: ReaderInput): Promise<BatchSource>;
}

/** The size of a file to read; refused when it is missing, a folder (not `what`), unreadable or empty. */
export async function fileSize(file: string, what: string, refuse: Refuse, path = file): Promise<number> {
  const st = await stat(path).catch((e: NodeJS.ErrnoException) => {
    if (e.code === 'ENOENT') throw refuse('FILE_NOT_FOUND', `${file}: no such file.`);
    throw refuse('UNREADABLE', `${file}: cannot read the file (${e.code ?? e.message}).`);
  });
  if (st.isDirectory()) throw refuse('UNREADABLE', `${file}: is a folder, not ${what}.`);
  if (st.size === 0) throw refuse('EMPTY_FILE', `${file}: the file is empty (0 bytes).`);
  return st.size;
}

/** The first `bytes` bytes of a file (all of a shorter one). */
export async function fileHead(file: string, bytes: number): Promise<Buffer> {
  const fh = await open(file, 'r');
  try {
    const buf = Buffer.alloc(bytes);
    return buf.subarray(0, (await fh.read(buf, 0, bytes, 0)).bytesRead);
  } finally {
    await fh.close();
  }
}

/** The --encoding of a CSV (undefined: detect it); refused when --encoding, --sheet or --documents does not apply to a file of this kind. */
export function encodingOption(file: string, kind: BatchFormat, o: ReadOptions, refuse: Refuse): TextEncoding | undefined {
  const text = kind === 'csv' ? 'CSV' : kind === 'pain.001' ? 'pain.001' : undefined;
  if (o.sheet !== undefined && text)
    throw refuse('UNSUPPORTED_FORMAT', `${file}: --sheet applies to Excel workbooks only; this is a ${text} file.`);
  if (o.documents !== undefined && kind !== 'pain.001' && !o.documentsIfPain001) {
    const a = text ? 'a CSV file' : 'an Excel workbook';
    throw refuse(
      'UNSUPPORTED_FORMAT',
      `${file}: --documents applies to pain.001 files only; this is ${a}: each row names its own in its documents column.`,
    );
  }
  if (!o.encoding) return undefined;
  const own = text ? 'a pain.001 says its own (UTF-8)' : 'this is an Excel workbook';
  if (kind !== 'csv') throw refuse('ENCODING', `${file}: --encoding applies to CSV files only; ${own}.`);
  const encoding = parseEncodingName(o.encoding);
  if (!encoding) throw refuse('ENCODING', `unknown --encoding "${o.encoding}": use ${TEXT_ENCODINGS.join(', ')}.`);
  return encoding;
}
