// ISO 20022 pain.001 (.001.03 and .001.09), streamed with saxes: one row per CdtTrfTxInf as it
// closes. The control totals are checked as the file is read: a mismatch throws before the last
// row is given, so nothing of the file is ever sent.
import { createReadStream } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { dirname, extname, join, relative, resolve } from 'node:path';
import { SaxesParser } from 'saxes';
import { Dec, xsDecimal } from '../money.ts';
import { pain001VersionOf } from '../spec/iso20022.ts';
import { CANONICAL_FIELDS, type CanonicalField } from './batch-columns.ts';
import { InputError, type InputErrorCode } from './input-errors.ts';
import { first, mapTransaction, PAIN001_CARRIED, type Elements } from './pain001-map.ts';
import type { RawRow } from './records.ts';
import type { BatchReader } from './reader.ts';

const ROOT = '/Document/CstmrCdtTrfInitn';

export const pain001Reader: BatchReader = {
  /** Any XML document: one that is not a pain.001 of a version read is refused by name (open). */
  formatOf: (head) => (/^(\uFEFF)?\s*<[?!a-zA-Z]/.test(new TextDecoder().decode(head.subarray(0, 512))) ? 'pain.001' : undefined),
  ownExtensions: {
    extensions: ['.xml'],
    misnamed: (file) => `${file}: named .xml but not an XML document in UTF-8 (as ISO 20022 messages are).`,
  },
  async open({ file, path, options }) {
    const documents = options.documents === undefined ? undefined : await documentFiles(options.documents, dirname(path), file);
    const source = streamTransactions(file, path, documents);
    const head = await source.next(); // up to the first transaction: the message id and version, or the refusal
    const fields = Object.fromEntries(CANONICAL_FIELDS.map((f) => [f, f])) as Record<CanonicalField, CanonicalField>;
    const message = head.done ? undefined : (head.value as { id: string; version: string });
    return {
      file,
      format: 'pain.001',
      ...(message && { message }),
      headerRow: 0,
      columns: [...CANONICAL_FIELDS, ...PAIN001_CARRIED],
      mapping: fields,
      fields,
      warnings: [],
      rows: source as AsyncGenerator<RawRow>, // (the header taken: the rest are rows)
      close: async () => void (await source.return(undefined)),
    };
  },
};

/** The files of a --documents folder by name without extension (lower case), as paths relative to the batch's folder. */
async function documentFiles(dir: string, batchDir: string, file: string): Promise<Map<string, string[]>> {
  const names = await readdir(dir).catch((e: NodeJS.ErrnoException) => {
    throw new InputError('UNREADABLE', file, `--documents ${dir}: cannot read the folder (${e.code}).`);
  });
  const byName = new Map<string, string[]>();
  for (const name of names.sort()) {
    const key = name.slice(0, name.length - extname(name).length).toLowerCase();
    byName.set(key, [...(byName.get(key) ?? []), relative(batchDir, join(resolve(dir), name))]);
  }
  return byName;
}

/** A control total: the count and sum declared, against those counted (and the amounts that are no xs:decimal: the first, how many). */
const totals = (path: string) => ({ path, NbOfTxs: '', CtrlSum: '', count: 0, sum: new Dec(0), uncounted: '', uncountable: 0 });
type Totals = ReturnType<typeof totals>;

/** The message header first ({ id, version }), then one RawRow per transaction. */
async function* streamTransactions(
  file: string,
  path: string,
  documents?: Map<string, string[]>,
): AsyncGenerator<RawRow | { id: string; version: string }> {
  const fail = (code: InputErrorCode, message: string) => new InputError(code, file, `${file}: ${message}`);
  const parser = new SaxesParser({ xmlns: true, position: true });
  const stack: string[] = [];
  let text = '';
  let version = '';
  let msgId = '';
  let headerSent = false;
  let pmtIndex = 0;
  const group = totals(`${ROOT}/GrpHdr`);
  let block: Elements = new Map();
  let blockTotals = totals(group.path);
  let tx: Elements | undefined;
  const ready: (RawRow | { id: string; version: string })[] = [];

  /** The element path below an ancestor at `depth` (GrpHdr: 2, PmtInf: 2, CdtTrfTxInf: 3). */
  const below = (depth: number) => stack.slice(depth + 1).join('/');
  const add = (e: Elements, path: string, value: string) => e.set(path, [...(e.get(path) ?? []), value]);
  const check = (t: Totals) => {
    const problems: string[] = [];
    // (a PmtInf may leave it out, the group header may not; 06 is 6)
    if ((t.NbOfTxs || t === group) && !(/^\d{1,15}$/.test(t.NbOfTxs) && Number(t.NbOfTxs) === t.count))
      problems.push(`NbOfTxs says ${t.NbOfTxs || '(nothing)'}, the transactions are ${t.count}`);
    const more = t.uncountable > 1 ? ` and ${t.uncountable - 1} more` : '';
    const without = t.uncountable ? ` without ${t.uncounted}${more}, not an xs:decimal` : '';
    if (t.CtrlSum && !xsDecimal(t.CtrlSum)?.equals(t.sum))
      problems.push(`CtrlSum says ${t.CtrlSum}, the amounts add up to ${t.sum.toFixed()}${without}`);
    if (problems.length)
      throw fail('CONTROL_TOTALS', `control totals of ${t.path} do not match: ${problems.join('; ')}. Nothing of the file is used.`);
  };

  parser.on('doctype', () => {
    throw fail(
      'XML_DTD',
      'the document has a DOCTYPE (a DTD or entity declarations): refused, a payment file needs none and it is never read.',
    );
  });
  parser.on('opentag', (tag) => {
    const name = tag.local ?? tag.name;
    if (stack.length === 0) {
      version = (name === 'Document' && pain001VersionOf(tag.uri ?? '')) || '';
      if (!version)
        throw fail(
          'UNSUPPORTED_FORMAT',
          `an XML document but not a pain.001.001.03 or pain.001.001.09 payment initiation (its root is ${name} in ${tag.uri ? `"${tag.uri}"` : 'no namespace'}). Send a pain.001, a CSV or an Excel file.`,
        );
    }
    if (stack.length === 1 && name !== 'CstmrCdtTrfInitn')
      throw fail('MALFORMED_XML', `${name} under Document: a pain.001 holds CstmrCdtTrfInitn.`);
    stack.push(name);
    text = '';
    if (stack.length === 3 && name === 'PmtInf') {
      // the header is handed out first (open takes it so): a block before it would lose its first transaction
      if (!headerSent) throw fail('MALFORMED_XML', `${ROOT}/PmtInf[1] comes before GrpHdr: a pain.001 opens with its group header.`);
      pmtIndex++;
      block = new Map();
      blockTotals = totals(`${ROOT}/PmtInf[${pmtIndex}]`);
    }
    if (stack.length === 4 && name === 'CdtTrfTxInf' && stack[2] === 'PmtInf') tx = new Map();
    const attrs = tag.attributes as Record<string, { value: string }>;
    if (attrs.Ccy && tx) add(tx, `${below(3)}@Ccy`, attrs.Ccy.value);
  });
  for (const event of ['text', 'cdata'] as const) parser.on(event, (t: string) => void (text += t));
  parser.on('closetag', () => {
    const value = text.trim();
    text = '';
    const depth = stack.length;
    const [, , top, fourth] = stack;
    if (top === 'GrpHdr' && depth === 4) {
      if (fourth === 'MsgId') msgId = value;
      if (fourth === 'NbOfTxs' || fourth === 'CtrlSum') group[fourth] = value;
    } else if (top === 'GrpHdr' && depth === 3 && !headerSent) {
      headerSent = true;
      ready.push({ id: msgId, version });
    } else if (top === 'PmtInf' && tx && depth === 4) {
      const path = `${blockTotals.path}/CdtTrfTxInf[${blockTotals.count + 1}]`; // (counted below)
      const { cells, elements, issues } = mapTransaction({ tx, block, txPath: path, blockPath: blockTotals.path, documents });
      const amount = xsDecimal(cells.sourceAmount ?? ''); // (validation names a bad amount; a bad CtrlSum never matches)
      for (const t of [group, blockTotals]) {
        t.count++;
        if (amount) t.sum = t.sum.plus(amount);
        else if (!t.uncountable++) t.uncounted = `${elements.sourceAmount} "${cells.sourceAmount ?? ''}"`;
      }
      const due = first(block, 'ReqdExctnDt') || first(block, 'ReqdExctnDt/Dt') || first(block, 'ReqdExctnDt/DtTm');
      Object.assign(cells, { MsgId: msgId, MsgNmId: version, PmtInfId: first(block, 'PmtInfId'), InstrId: first(tx, 'PmtId/InstrId') });
      // (the transaction as sent, for the status report: a reference edited for a retry is not the ERP's)
      Object.assign(cells, { EndToEndId: first(tx, 'PmtId/EndToEndId'), CcyOfTrf: first(tx, 'Amt/EqvtAmt/CcyOfTrf') });
      cells.ReqdExctnDt = dueDay(due);
      ready.push({ rowNumber: group.count, cells, xml: { path, elements, issues } });
      tx = undefined;
    } else if (top === 'PmtInf' && depth === 3) {
      check(blockTotals);
    } else if (top === 'PmtInf' && tx && depth > 4) {
      if (value) add(tx, below(3), value);
    } else if (top === 'PmtInf' && depth > 3 && fourth !== 'CdtTrfTxInf') {
      if (value) add(block, below(2), value);
      if (depth === 4 && (fourth === 'NbOfTxs' || fourth === 'CtrlSum')) blockTotals[fourth] = value;
    } else if (depth === 1) {
      check(group);
    }
    stack.pop();
  });

  const stream = createReadStream(path, { encoding: 'utf8', highWaterMark: 64 * 1024 });
  try {
    try {
      for await (const chunk of stream as AsyncIterable<string>) {
        parser.write(chunk);
        while (ready.length) yield ready.shift()!;
      }
      parser.close();
    } catch (e) {
      if (e instanceof InputError) throw e;
      throw fail('MALFORMED_XML', `not well-formed XML: ${(e as Error).message.replace(/^undefined:/, 'line ')}`);
    }
    while (ready.length) yield ready.shift()!;
    if (!group.count) throw fail('EMPTY_FILE', 'the pain.001 holds no transaction (CdtTrfTxInf).');
  } finally {
    stream.destroy();
  }
}

/**
 * The day a transaction is due (UTC): a time with an offset or Z (v09 DtTm) also not before its UTC day, which may be
 * the next; 24:00:00 (xs:dateTime's end of a day), with a zone or without, is the next day's first instant.
 */
function dueDay(due: string): string {
  const at = Date.parse(/([+-]\d\d:\d\d|Z)$/.test(due) || !due.includes('T') ? due : `${due}Z`);
  const utc = at ? new Date(at).toISOString().slice(0, 10) : '';
  return utc > due.slice(0, 10) ? utc : due.slice(0, 10);
}
