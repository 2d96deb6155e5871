// Validation of the XML the tool writes against the schemas in ./schemas (written for these tests
// from the ISO 20022 message definitions: the elements the tool writes, their order, cardinality
// and types), with libxml2's XSD validator (xmllint-wasm).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { SaxesParser } from 'saxes';
import { validateXML } from 'xmllint-wasm';

const SCHEMAS = join(import.meta.dirname, 'schemas');

/** The validator's errors for `xml` against the schema of `message` (e.g. pain.002.001.03); [] when valid. */
export async function schemaErrors(xml: string, message: string): Promise<string[]> {
  const schema = { fileName: `${message}.xsd`, contents: readFileSync(join(SCHEMAS, `${message}.xsd`), 'utf8') };
  const r = await validateXML({ xml: [{ fileName: 'written.xml', contents: xml }], schema: [schema] });
  return r.valid ? [] : r.errors.map((e) => e.message);
}

/** The text of each `<name>` element, in document order (the documents written here have no attributes on them but Ccy). */
export const texts = (xml: string, name: string): string[] =>
  [...xml.matchAll(new RegExp(`<${name}(?: [^>]*)?>([^<]*)</${name}>`, 'g'))].map((m) => m[1]!);

/** The text of each `<name>` element as an XML reader reads it back (saxes: entities and character references decoded). */
export function readTexts(xml: string, name: string): string[] {
  const out: string[] = [];
  let open = false;
  const parser = new SaxesParser();
  parser.on('opentag', (e) => {
    open = e.name === name;
    if (open) out.push('');
  });
  parser.on('text', (t) => void (open && (out[out.length - 1] += t)));
  parser.on('closetag', () => void (open = false));
  parser.write(xml).close();
  return out;
}
