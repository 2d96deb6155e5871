// The sanctions lists as published, the format found by content, streamed. A list that cannot be
// read, is of no known format or holds no entry throws: an empty list would pass everyone.
import { createHash, type Hash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { readdir, stat } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { StringDecoder } from 'node:string_decoder';
import { parse, type Info } from 'csv-parse';
import { SaxesParser } from 'saxes';
import { fileHead } from '../input/reader.ts';
import { detectDelimiter, sepLine } from '../input/detect.ts';
import { utcTime } from '../text.ts';
export interface Payee {
  reference: string;
  row: number;
  name: string;
  country?: string;
  bic?: string;
  /** A SWIFT transfer's intermediary bank. */
  intermediaryBic?: string;
  iban?: string;
  accountNumber?: string;
  /** The other fields that say where the money goes (alipayId, fpsId, phoneNumber, …), by field name. */
  otherAccounts?: [field: string, value: string][];
  /** Whose identifiers a hit's why names (default the payee's): the payer's, the ultimate creditor's. */
  party?: string;
}
export type ListFormat = 'ofac-sdn' | 'un-xml' | 'opensanctions' | 'plain';
export type ListInfo = ReadList['info'];
export interface Hit {
  list: ListFormat;
  listPath: string;
  entryId: string;
  entryName: string;
  /** sha256 hex of the entry as read (names, identifiers, countries): a clearance is void once it changes. */
  entryDigest: string;
  matched: string;
  on: 'name' | 'alias' | 'bic' | 'iban' | 'account';
  programme?: string;
  score: string;
  band: 'hit' | 'review';
  why: string;
}
/** A name scoring at least `hit` is a hit; at least `review` (and below `hit`) holds the row for review. */
export interface Thresholds {
  hit: number;
  review: number;
}
export class ScreeningError extends Error {
  constructor(
    readonly code: 'LIST_UNREADABLE' | 'LIST_FORMAT' | 'LIST_EMPTY' | 'THRESHOLDS',
    message: string,
  ) {
    super(message);
    this.name = 'ScreeningError';
  }
}

export interface Entry {
  id: string;
  name: string;
  aliases: string[];
  programme?: string;
  bics: string[];
  ibans: string[];
  accounts: string[];
  /** ISO codes (OpenSanctions, plain) or English names (OFAC, UN), as the list writes them. */
  countries: string[];
}

export type ReadList = Awaited<ReturnType<typeof readList>>;

/** OFAC's files name an absent value "-0-". */
const ofacCell = (v: string | undefined) => (v === undefined || v.trim() === '-0-' ? '' : v.trim());
function entryOf(id: string, name: string, programme: string | undefined, more: Partial<Entry> = {}): Entry {
  return { id, name, aliases: [], bics: [], ibans: [], accounts: [], countries: [], ...more, ...(programme && { programme }) };
}
const split = (v: string | undefined, sep = ';') => (v ?? '').split(sep).flatMap((s) => (s.trim() ? [s.trim()] : []));

export async function readList(path: string) {
  const s = await stat(path).catch((e: NodeJS.ErrnoException) => unreadable(path, e));
  const file = s.isDirectory() ? await fileNamed(path, 'sdn.csv') : path;
  if (!file)
    throw new ScreeningError('LIST_UNREADABLE', `${path}: a folder without sdn.csv: name a list file, or OFAC's folder (sdn.csv, alt.csv)`);
  const { format, layout } = formatOf(
    (await fileHead(file, 4096).catch((e: NodeJS.ErrnoException) => unreadable(file, e))).toString('utf8'),
  );
  if (!format)
    throw new ScreeningError(
      'LIST_FORMAT',
      `${path}: not a sanctions list this tool reads (OFAC SDN CSV, UN consolidated XML, OpenSanctions simple CSV, or a CSV with a "name" column)`,
    );
  const hash = createHash('sha256');
  const read = await READERS[format](file, hash, layout);
  if (!read.entries.length) throw new ScreeningError('LIST_EMPTY', `${path}: the list holds no entry`);
  // (to the second: a list written yesterday afternoon is not a day old just after midnight)
  const times = await Promise.all([file, ...(read.files ?? [])].map(async (f) => (await stat(f)).mtime.getTime()));
  const mtime = new Date(times.reduce((a, b) => Math.min(a, b))).toISOString().slice(0, 19) + 'Z';
  const info = {
    path,
    format,
    /** sha256 hex of the file's bytes (an OFAC list: of sdn.csv, alt.csv, add.csv and sdn_comments.csv in that order). */
    digest: hash.digest('hex'),
    entries: read.entries.length,
    /** ISO date: the list's own publish date where it has one, else the file's modification time (to the second). */
    date: read.date ?? mtime,
    dateFrom: read.date ? ('file' as const) : ('mtime' as const),
  };
  return { info, entries: read.entries };
}

/** The folder's file of that name in any case (OFAC's Sanctions List Service writes SDN.CSV, ALT.CSV...); two are refused. */
async function fileNamed(dir: string, name: string): Promise<string | undefined> {
  const found = (await readdir(dir).catch((e: NodeJS.ErrnoException) => unreadable(dir, e))).filter((f) => f.toLowerCase() === name).sort();
  if (found.length > 1) throw new ScreeningError('LIST_UNREADABLE', `${dir}: ${found.join(' and ')} are both there: keep the one to use`);
  return found[0] && join(dir, found[0]);
}

function unreadable(path: string, e: NodeJS.ErrnoException): never {
  throw new ScreeningError('LIST_UNREADABLE', `${path}: cannot read the list (${e.code ?? e.message})`);
}

/** From the first bytes (trimStart drops a BOM too); a list with a header: its delimiter and Excel's "sep=;" line as a batch's (detect.ts). */
function formatOf(head: string): { format?: ListFormat; layout?: CsvLayout } {
  const text = head.trimStart();
  if (text.startsWith('<')) return /<CONSOLIDATED_LIST[\s>]/.test(text) ? { format: 'un-xml' } : {};
  const sep = sepLine(text);
  const table = sep ? text.slice(text.indexOf('\n') + 1) : text;
  const layout = { delimiter: sep ?? detectDelimiter(table), fromLine: sep ? 2 : 1 };
  const cellsOf = (line: string, d: string) => line.split(d).map((c) => c.replace(/^"|"$/g, '').trim().toLowerCase());
  const cells = cellsOf(table.split(/\r\n?|\n/, 1)[0] ?? '', layout.delimiter);
  if (['id', 'schema', 'name', 'aliases'].every((c, i) => cells[i] === c)) return { format: 'opensanctions', layout };
  if (cells.includes('name')) return { format: 'plain', layout };
  // sdn.csv has no header: ent_num, SDN_Name, SDN_Type, Program, ... Remarks (12 columns), by commas.
  const ofac = cellsOf(text.split(/\r\n?|\n/, 1)[0] ?? '', ',');
  return /^\d+$/.test(ofac[0] ?? '') && ofac.length >= 12 ? { format: 'ofac-sdn' } : {};
}

/** `files`: the companion files read beside `file`; the list is as old as the oldest of them. */
type Reader = (file: string, hash: Hash, layout?: CsvLayout) => Promise<{ entries: Entry[]; date?: string; files?: string[] }>;
/** A list with a header: its delimiter, and the line of its header (2 under a "sep=" line). */
type CsvLayout = { delimiter: string; fromLine: number };
const READERS: Record<ListFormat, Reader> = { 'ofac-sdn': readOfac, 'un-xml': readUn, opensanctions: readOpenSanctions, plain: readPlain };

/**
 * A CSV's records keyed by the lower-cased header, each with its row as a spreadsheet shows it (blank rows counted, a
 * quoted cell of several lines one row), hashing its bytes; OFAC's: arrays of at most `ofacWidth` cells, a field
 * with a quote it does not double ("a.k.a. "X"; ...") read whole (one cut at a comma refused), and the end `mark` 0x1A required.
 */
async function* csvRecords(file: string, hash: Hash, ofacWidth?: number, mark = !!ofacWidth, layout?: CsvLayout) {
  const parser = parse({
    bom: true,
    ...(layout && { delimiter: layout.delimiter, from_line: layout.fromLine }),
    info: true,
    columns: ofacWidth ? false : (header: string[]) => header.map((h) => h.trim().toLowerCase()),
    relax_column_count: true,
    relax_quotes: true,
    skip_empty_lines: true,
    trim: !ofacWidth,
    ...(ofacWidth && { cast: (v: string) => v.replace(/^\s*"([\s\S]*)"\s*$/, '$1') }),
  });
  const input = createReadStream(file);
  let last: string | undefined;
  input.on('data', (chunk) => {
    hash.update(chunk);
    last = (chunk as Buffer).toString('latin1').trimEnd().at(-1) ?? last;
  });
  input.on('error', (e) => parser.destroy(e));
  input.pipe(parser);
  try {
    for await (const { record, info } of parser as AsyncIterable<{ record: string[] & Record<string, string>; info: Info }>) {
      const row = info.records + info.empty_lines + (ofacWidth ? 0 : 1); // (1: the header)
      // (an invalid byte reads as U+FFFD: an accented name of Excel's Windows-1252 would match nobody)
      if (Object.values(record).some((v) => v.includes('\uFFFD')))
        throw new ScreeningError('LIST_FORMAT', `${file}: row ${row} is not UTF-8 text: save the list as UTF-8`);
      if (ofacWidth && record.length > ofacWidth)
        throw new ScreeningError(
          'LIST_FORMAT',
          `${file}: row ${row} has ${record.length} fields, OFAC writes ${ofacWidth}: a quote inside a field is followed by a comma`,
        );
      if (ofacWidth && record.length === 1 && ['', '\x1a'].includes(record[0]!.trim())) continue;
      if (ofacWidth && !/^\d+$/.test(record[0]!.trim()))
        throw new ScreeningError('LIST_FORMAT', `${file}: row ${row} does not start with an entry number: the file is damaged`);
      yield [record, row] as const;
    }
    if (mark && last !== '\x1a')
      throw new ScreeningError(
        'LIST_UNREADABLE',
        `${file}: OFAC's end-of-file mark (0x1A after the last line) is missing: the file was cut short; download it again`,
      );
  } catch (e) {
    if (e instanceof ScreeningError) throw e;
    const err = e as NodeJS.ErrnoException;
    throw new ScreeningError(err.code?.startsWith('CSV_') ? 'LIST_FORMAT' : 'LIST_UNREADABLE', `${file}: ${err.message}`);
  }
}

/** BICs and IBANs written in an OFAC remark: "SWIFT/BIC BKMTIRTH; IBAN IR...; Website ...". */
function remarkIdentifiers(remarks: string, e: Entry) {
  for (const m of remarks.matchAll(/SWIFT\/BIC\s+([A-Z0-9]{8}(?:[A-Z0-9]{3})?)\b/gi)) e.bics.push(m[1]!.toUpperCase());
  // (up to 30 characters after the check digits, each after a space or none: an IBAN printed in groups of four is up to 42)
  for (const m of remarks.matchAll(/IBAN\s+([A-Z]{2}\d{2}(?: ?[A-Z0-9]){10,30}?)(?=\s*[;(.]|\s*$)/gi))
    e.ibans.push(m[1]!.replace(/ /g, '').toUpperCase());
}

/** OFAC SDN: sdn.csv with alt.csv (aliases, required), add.csv (countries) and sdn_comments.csv (remarks' rest) beside it; no header, a trailing 0x1A. */
async function readOfac(sdn: string, hash: Hash) {
  const byId = new Map<string, Entry>();
  const remarks = new Map<string, string>();
  for await (const [r] of csvRecords(sdn, hash, 12)) {
    const [id, name] = [ofacCell(r[0]), ofacCell(r[1])];
    if (!name) continue;
    byId.set(id, entryOf(id, name, ofacCell(r[3]).replace(/\]\s*\[/g, ', ')));
    remarks.set(id, r[11] ?? '');
  }
  const named = (name: string) => basename(sdn).toLowerCase().replace('sdn', name);
  const beside = (name: string) => fileNamed(dirname(sdn), named(name));
  if (named('alt') === basename(sdn).toLowerCase())
    throw new ScreeningError(
      'LIST_UNREADABLE',
      `${sdn}: name it sdn.csv beside its alt.csv (the aliases are read from its name with "alt" for "sdn")`,
    );
  const alt = await beside('alt');
  if (!alt)
    throw new ScreeningError('LIST_UNREADABLE', `${sdn}: no ${named('alt')} (in any case) beside it, with its aliases: download it too`);
  const attach = async (file: string, width: number, column: number, to: 'aliases' | 'countries') => {
    for await (const [r] of csvRecords(file, hash, width)) {
      const value = ofacCell(r[column]);
      if (value) byId.get(ofacCell(r[0]))?.[to].push(value);
    }
  };
  await attach(alt, 5, 3, 'aliases');
  const add = await beside('add');
  if (add) await attach(add, 6, 4, 'countries');
  // A remark is cut at 1,000 characters, the rest in sdn_comments.csv (a BIC may be there, or cut in two); a cut
  // remark without its rest shows that file cut short (its 0x1A is not confirmed, so not required)
  const comments = await beside('sdn_comments');
  const cut = new Set([...remarks].flatMap(([id, text]) => (text.length >= 1000 ? [id] : [])));
  if (comments)
    for await (const [r] of csvRecords(comments, hash, 2, false)) {
      const id = ofacCell(r[0]);
      if (remarks.has(id)) remarks.set(id, remarks.get(id)! + (r[1] ?? ''));
      cut.delete(id);
    }
  const [lost] = cut;
  if (lost)
    throw new ScreeningError(
      'LIST_UNREADABLE',
      `${sdn}: the remark of entry ${lost} is cut at 1,000 characters and its rest is not in ${named('sdn_comments')}: download it ${comments ? 'again' : 'too'}`,
    );
  for (const [id, text] of remarks) remarkIdentifiers(ofacCell(text), byId.get(id)!);
  return { entries: [...byId.values()], files: [alt, add, comments].filter((f) => f !== undefined) };
}

async function readOpenSanctions(file: string, hash: Hash, layout?: CsvLayout) {
  const entries: Entry[] = [];
  let date = '';
  for await (const [r] of csvRecords(file, hash, undefined, false, layout)) {
    if (!r.id || !r.name) continue;
    const entry = entryOf(r.id, r.name, r.dataset, { aliases: split(r.aliases), countries: split(r.countries) });
    for (const id of split(r.identifiers).map((s) => s.replace(/\s/g, '').toUpperCase()))
      if (/^[A-Z]{2}\d{2}[A-Z0-9]{10,30}$/.test(id)) entry.ibans.push(id);
      else if (/^[A-Z]{6}[A-Z0-9]{2}([A-Z0-9]{3})?$/.test(id)) entry.bics.push(id);
    entries.push(entry);
    const changed = (r.last_change ?? '').slice(0, 10);
    if (/^\d{4}-\d{2}-\d{2}$/.test(changed) && changed > date) date = changed;
  }
  return date ? { entries, date } : { entries };
}

async function readPlain(file: string, hash: Hash, layout?: CsvLayout) {
  const entries: Entry[] = [];
  for await (const [r, row] of csvRecords(file, hash, undefined, false, layout)) {
    const ids = { bics: split(r.bic), ibans: split(r.iban), accounts: split(r.account), countries: split(r.country) };
    if (!r.name && !ids.bics.length && !ids.ibans.length && !ids.accounts.length) continue; // (an account listed without a name is listed)
    entries.push(entryOf(r.id || `row ${row}`, r.name ?? '', r.programme, ids));
  }
  return { entries };
}

/** The UN consolidated list; a DTD is refused (no entity is ever expanded). */
async function readUn(file: string, hash: Hash) {
  const entries: Entry[] = [];
  let date: string | undefined;
  let entry: Entry | undefined;
  let parts: string[] = [];
  let text = '';
  const open: string[] = [];
  const parser = new SaxesParser({ fileName: file });
  parser.on('doctype', () => parser.fail('a DTD is refused'));
  parser.on('opentag', (tag) => {
    text = '';
    open.push(tag.name);
    if (tag.name === 'CONSOLIDATED_LIST') {
      const generated = tag.attributes.dateGenerated;
      // (its UTC day: a later day an offset such as +14:00 writes would make the list younger than it is)
      const at = typeof generated === 'string' ? utcTime(generated) : undefined;
      if (typeof generated === 'string' && /^\d{4}-\d{2}-\d{2}/.test(generated))
        date = at === undefined ? generated.slice(0, 10) : new Date(at).toISOString().slice(0, 10);
    } else if (tag.name === 'INDIVIDUAL' || tag.name === 'ENTITY') {
      entry = entryOf('', '', undefined);
      parts = [];
    }
  });
  parser.on('text', (t) => (text += t));
  parser.on('cdata', (t) => (text += t));
  parser.on('closetag', (tag) => {
    const value = text.trim();
    text = '';
    open.pop();
    if (!entry) return;
    if (tag.name === 'INDIVIDUAL' || tag.name === 'ENTITY') {
      entry.name = parts.join(' ');
      if (entry.name) entries.push(entry);
      entry = undefined;
    } else if (!value) return;
    else if (/^(FIRST|SECOND|THIRD|FOURTH)_NAME$/.test(tag.name)) parts.push(value);
    else if (tag.name === 'REFERENCE_NUMBER') entry.id = value;
    else if (tag.name === 'DATAID') entry.id ||= value;
    else if (tag.name === 'UN_LIST_TYPE') entry.programme = value;
    else if (tag.name === 'ALIAS_NAME' || tag.name === 'NAME_ORIGINAL_SCRIPT') entry.aliases.push(value);
    else if (tag.name === 'COUNTRY' || (tag.name === 'VALUE' && open.at(-1) === 'NATIONALITY')) entry.countries.push(value);
  });
  const decoder = new StringDecoder('utf8');
  try {
    for await (const chunk of createReadStream(file)) {
      hash.update(chunk as Buffer);
      parser.write(decoder.write(chunk as Buffer));
    }
    parser.write(decoder.end()).close();
  } catch (e) {
    const err = e as NodeJS.ErrnoException;
    throw new ScreeningError(err.code ? 'LIST_UNREADABLE' : 'LIST_FORMAT', `${file}: ${err.message}`);
  }
  return date ? { entries, date } : { entries };
}
