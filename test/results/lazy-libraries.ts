// Run by under-tsx.test.ts under `node --import tsx`, as the chaos campaigns run the source: the
// libraries loaded on first use (xmlbuilder2, pdf-lib) work there too. Prints what each wrote.
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeIsoXml } from '../../src/results/iso-xml.ts';
import { mergeToPdf } from '../../src/engine/upload-documents.ts';

const dir = mkdtempSync(join(tmpdir(), 'pb-tsx-'));
const xml = join(dir, 'status.xml');
await writeIsoXml(xml, 'pain.002.001.10', 'CstmrPmtStsRpt', function* (x) {
  x.ele('GrpHdr').ele('MsgId').txt('M1').up().up();
  yield;
});
const pdf = await mergeToPdf([{ bytes: readFileSync(process.argv[2]!), filename: 'a.pdf', contentType: 'application/pdf' }]);
console.log(JSON.stringify({ xml: readFileSync(xml, 'utf8').includes('<MsgId>M1</MsgId>'), pdf: Buffer.from(pdf.slice(0, 5)).toString() }));
