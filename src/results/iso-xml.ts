// Writing an ISO 20022 message (pain.002, camt.053) atomically, a chunk at a time (xmlbuilder2's
// callback builder): a report of 100,000 transactions never holds its whole text.
import { randomBytes } from 'node:crypto';
import type { createCB } from 'xmlbuilder2';
import type { XMLBuilderCB } from 'xmlbuilder2/lib/interfaces.js';
import { writeFileAtomic } from '../files/atomic.ts';
import { Dec } from '../money.ts';
import { isoNamespace, type IsoMessage } from '../spec/iso20022.ts';
import { readHead } from './read.ts';
import { missingOnly, ResultsError } from './results-errors.ts';

/** `build` writes the Document's content and yields after each part it is fine to flush after (a transaction). */
type IsoBuild = (xml: XMLBuilderCB) => Iterable<void>;

const FLUSH_AT = 64 * 1024;

function* chunks(builder: typeof createCB, message: IsoMessage, root: string, build: IsoBuild): Generator<string> {
  let text = '';
  // a character XML cannot carry (ESC, a lone surrogate) is written U+FFFD: one character for one, so Max35Text stays 35
  const xml = builder({ data: (s: string) => void (text += s), prettyPrint: true, invalidCharReplacement: '\uFFFD' });
  xml.dec({ encoding: 'UTF-8' }).ele(isoNamespace(message), 'Document').ele(root);
  for (const _ of build(xml))
    if (text.length >= FLUSH_AT) {
      yield text;
      text = '';
    }
  xml.up().up().end();
  yield text + '\n';
}

/** Writes the message `<Document><root>…</root></Document>` to `path` atomically. Throws ResultsError WRITE_FAILED. */
export async function writeIsoXml(path: string, message: IsoMessage, root: string, build: IsoBuild): Promise<void> {
  // only a message of its kind is replaced, never the batch or its results named by mistake (`run erp.xml --status-report erp.xml`)
  const kind = message.slice(0, 8);
  const head = await readHead(path).catch(
    missingOnly(path, 'read', `not replaced: it may not be a ${kind} file (the batch or its results?); name another file`),
  );
  if (head && !head.includes(`:xsd:${kind}.`))
    throw new ResultsError(
      'WRITE_FAILED',
      path,
      `${path}: not replaced: it is not a ${kind} file (the batch or its results?); name another file.`,
    );
  try {
    // (loaded only by a command that writes ISO XML; `default`: esbuild's CommonJS chunk; tsx gives none)
    const lib = await import('xmlbuilder2');
    const { createCB: builder } = lib.default ?? lib;
    await writeFileAtomic(path, chunks(builder, message, root, build));
  } catch (e) {
    if (e instanceof ResultsError) throw e; // (the builder's own refusal names the file already)
    throw new ResultsError('WRITE_FAILED', path, `${path}: cannot write the ${message} file: ${(e as Error).message}`, { cause: e });
  }
}

/** A message or statement id (Max35Text): the time to the second and 8 random hex digits, e.g. PB20250131T120000-1a2b3c4d. */
export const isoMessageId = (now = new Date()): string =>
  `PB${now.toISOString().slice(0, 19).replace(/[-:]/g, '')}-${randomBytes(4).toString('hex')}`;

/** An amount element's content ({@Ccy, #}): not negative, at most 5 decimals; undefined for text that is not one. */
export function isoAmount(amount: Dec | string | undefined, currency: string | undefined): { '@Ccy': string; '#': string } | undefined {
  if (amount === undefined || !currency || !/^[A-Z]{3}$/.test(currency)) return undefined;
  let d: Dec;
  try {
    d = new Dec(typeof amount === 'string' ? amount.trim() : amount).abs();
  } catch {
    return undefined;
  }
  return d.isFinite() && d.decimalPlaces() <= 5 && d.precision(true) <= 18 ? { '@Ccy': currency, '#': d.toFixed() } : undefined;
}

// xmlbuilder2's object reader decodes "&amp;" to "&", and its writer leaves an `&` starting an entity as it is
// (a cell "R&amp;D" was read back "R&D"): each `&` given as `&amp;amp;` is written `&amp;`, the text as it is.
export const isoEscaped = (s: string): string => s.replaceAll('&', '&amp;amp;');

/** Max35Text and its kin: the text, cut to `max` characters (as XSD counts them: "😀" is one), escaped; undefined when empty. */
export const isoText = (s: string | undefined, max = 35): string | undefined =>
  s?.trim() ? isoEscaped([...s.trim()].slice(0, max).join('')) : undefined;

/** An id (Max35Text) whole, or none: cut, two could read as one. `longIdRmtInf`: one that does not fit, whole in RmtInf/Ustrd (Max140Text). */
export const isoId = (s: string | undefined): string | undefined => ([...(s?.trim() ?? '')].length <= 35 ? isoText(s) : undefined);
export const longIdRmtInf = (id: string | undefined) => (isoId(id) || !id?.trim() ? undefined : { Ustrd: isoText(id, 140) });
