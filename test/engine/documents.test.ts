// Documents of a row: uploaded once each, the first on initiate and the rest PATCHed; or merged
// into one PDF (--merge-documents, images as pages) and uploaded once.
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { PDFDocument } from 'pdf-lib';
import { afterEach, describe, expect, it } from 'vitest';
import { PayoutClient } from '../../src/client/client.ts';
import type { Connection } from '../../src/client/connect.ts';
import { mergeToPdf } from '../../src/engine/upload-documents.ts';
import { attachDocuments } from '../../src/follow-up/attach-documents.ts';
import { runBatch } from '../../src/engine/pipeline.ts';
import { startSandbox, type LocalSandbox } from '../../src/sandbox/start-sandbox.ts';
import { cleanEnv, HEADER, KEY, ROOT, runMain, workDir } from './helpers.ts';
import { unattended } from '../ops/helpers.ts';

// A 1x1 PNG.
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==', 'base64');

let sb: LocalSandbox | undefined;
afterEach(async () => {
  await sb?.close();
  sb = undefined;
});

async function twoDocumentBatch(dir: string): Promise<string> {
  const sample = (await readFile(join(ROOT, 'samples/payroll-2025-01.csv'), 'utf8'))
    .replace(/^\uFEFF/, '')
    .trim()
    .split(/\r?\n/);
  const row = sample.find((l) => l.includes(';documents/'))!.split(',');
  const docs = HEADER.indexOf('documents');
  await writeFile(join(dir, 'scan.png'), PNG);
  row[docs] = `${row[docs]!.split(';')
    .map((d) => join(ROOT, 'samples', d))
    .join(';')};scan.png`;
  const file = join(dir, 'two-docs.csv');
  await writeFile(file, `${HEADER.join(',')}\n${row.join(',')}\n`);
  return file;
}

const conn = (s: LocalSandbox): Connection => ({
  client: new PayoutClient({ baseUrl: s.url, apiKey: KEY, requestsPerSecond: 200 }),
  environment: { name: 'custom', keyClass: 'sandbox', baseUrl: s.url },
  usage: undefined,
  sandbox: undefined,
  close: async () => {},
});

describe('documents of a row', () => {
  it('three files: the first on initiate, the other two PATCHed once; a second run uploads and patches nothing', async () => {
    sb = await startSandbox({ rateLimitPerSecond: null });
    const dir = await workDir();
    const file = await twoDocumentBatch(dir);
    const c = conn(sb);
    const r = await runBatch({ ...unattended({ mergeDocuments: false }), file, conn: c });
    expect(r.kind).toBe('ok');
    const out = [...r.outcomes.values()][0]!;
    expect(out.documents).toHaveLength(3);
    const payout = await c.client.getPayout(out.payout!.id);
    expect(payout.supportingDocuments).toHaveLength(3);
    const log = () => sb!.requestLog().map((x) => x.route);
    expect(log().filter((x) => x === 'uploadUrl')).toHaveLength(3);
    expect(log().filter((x) => x === 'patchDocuments')).toHaveLength(1);
    await runBatch({ ...unattended({ mergeDocuments: false }), file, conn: c });
    expect(log().filter((x) => x === 'uploadUrl')).toHaveLength(3);
    expect(log().filter((x) => x === 'patchDocuments')).toHaveLength(1);
  });

  it('a PNG saved as .jpg or with no extension, a PDF saved as .docx: sent under a name that fits their bytes, as validation took them (found by docs-fuzz.ts)', async () => {
    sb = await startSandbox({ rateLimitPerSecond: null });
    const dir = await workDir();
    const pdf = await readFile(join(ROOT, 'samples/documents/invoice-de-c1.pdf'));
    await writeFile(join(dir, 'scan.jpg'), PNG);
    await writeFile(join(dir, 'invoice.docx'), pdf);
    const png2 = Buffer.concat([PNG, Buffer.from('2')]); // (other bytes: each content is uploaded once)
    await writeFile(join(dir, 'receipt'), png2);
    const row = (await readFile(await twoDocumentBatch(dir), 'utf8')).trim().split('\n')[1]!.split(',');
    const docs = HEADER.indexOf('documents');
    const [reference, amount] = [HEADER.indexOf('reference'), HEADER.indexOf('sourceAmount')];
    const lines = ['scan.jpg', 'invoice.docx', 'receipt'].map((d, i) =>
      Object.assign([...row], { [docs]: d, [reference]: `NAMED-${i}`, [amount]: `1${i}.00` }).join(','),
    );
    const file = join(dir, 'named.csv');
    await writeFile(file, `${HEADER.join(',')}\n${lines.join('\n')}\n`);
    const c = conn(sb);
    const r = await runBatch({ ...unattended({ mergeDocuments: false }), file, conn: c });
    expect([...r.outcomes.values()].map((o) => [o.status, o.error?.message])).toEqual([
      ['PENDING', undefined],
      ['PENDING', undefined],
      ['PENDING', undefined],
    ]);
    const held = async (id: string) => {
      const urls = ((await c.client.getPayout(id)).supportingDocuments ?? []).map((d) => d.url!);
      return Promise.all(
        urls.map(async (u) => [
          new URL(u).pathname.split('/').pop(),
          Buffer.from(await (await fetch(u, { headers: { 'x-api-key': KEY } })).arrayBuffer()),
        ]),
      );
    };
    const [scan, invoice, receipt] = [...r.outcomes.values()].map((o) => o.payout!.id);
    expect(await held(scan!)).toEqual([['scan.png', PNG]]);
    expect(await held(invoice!)).toEqual([['invoice.pdf', pdf]]);
    expect(await held(receipt!)).toEqual([['receipt.png', png2]]);
    // attach too
    const a = await attachDocuments({ client: c.client, payoutId: invoice!, files: [join(dir, 'scan.jpg')] });
    expect(a.totalDocuments).toBe(2);
  });

  it('--merge-documents of a row naming one document twice (by two paths): merged once, as attach --merge does (found by docs-fuzz.ts)', async () => {
    sb = await startSandbox({ rateLimitPerSecond: null });
    const dir = await workDir();
    const row = (await readFile(await twoDocumentBatch(dir), 'utf8')).trim().split('\n')[1]!.split(',');
    const invoice = join(ROOT, 'samples/documents/invoice-eu-c2.pdf');
    await writeFile(join(dir, 'invoice copy.pdf'), await readFile(invoice));
    const docs = HEADER.indexOf('documents');
    const lines = [`${invoice};invoice copy.pdf;scan.png`, `${invoice};invoice copy.pdf`].map((d, i) =>
      Object.assign([...row], {
        [docs]: d,
        [HEADER.indexOf('reference')]: `TWICE-${i}`,
        [HEADER.indexOf('sourceAmount')]: `2${i}.00`,
      }).join(','),
    );
    const file = join(dir, 'twice.csv');
    await writeFile(file, `${HEADER.join(',')}\n${lines.join('\n')}\n`);
    const c = conn(sb);
    const r = await runBatch({ ...unattended({ mergeDocuments: true }), file, conn: c });
    const held = await Promise.all(
      [...r.outcomes.values()].map(async (o) => {
        const [d] = (await c.client.getPayout(o.payout!.id)).supportingDocuments ?? [];
        return Buffer.from(await (await fetch(d!.url!, { headers: { 'x-api-key': KEY } })).arrayBuffer());
      }),
    );
    const pages = (await PDFDocument.load(await readFile(invoice))).getPageCount();
    expect((await PDFDocument.load(held[0]!)).getPageCount()).toBe(pages + 1);
    expect(held[1]!.equals(await readFile(invoice))).toBe(true);
  });

  it('a row naming one document twice (by two paths), not merged: one upload, no PATCH for the copy (found by docs-fuzz.ts)', async () => {
    sb = await startSandbox({ rateLimitPerSecond: null });
    const dir = await workDir();
    const row = (await readFile(await twoDocumentBatch(dir), 'utf8')).trim().split('\n')[1]!.split(',');
    const invoice = join(ROOT, 'samples/documents/invoice-eu-c2.pdf');
    await writeFile(join(dir, 'invoice copy.pdf'), await readFile(invoice));
    row[HEADER.indexOf('documents')] = `${invoice};invoice copy.pdf`;
    const file = join(dir, 'twice.csv');
    await writeFile(file, `${HEADER.join(',')}\n${row.join(',')}\n`);
    const c = conn(sb);
    const r = await runBatch({ ...unattended({ mergeDocuments: false }), file, conn: c });
    expect((await c.client.getPayout([...r.outcomes.values()][0]!.payout!.id)).supportingDocuments).toHaveLength(1);
    const log = sb.requestLog().map((x) => x.route);
    expect([log.filter((x) => x === 'uploadUrl').length, log.filter((x) => x === 'patchDocuments').length]).toEqual([1, 0]);
  });

  it("--merge-documents: one PDF (the PDFs' pages, then the image as a page), one upload, no PATCH", async () => {
    sb = await startSandbox({ rateLimitPerSecond: null });
    const dir = await workDir();
    const file = await twoDocumentBatch(dir);
    const c = conn(sb);
    const r = await runBatch({ ...unattended({ mergeDocuments: true }), file, conn: c });
    expect(r.kind).toBe('ok');
    const payout = await c.client.getPayout([...r.outcomes.values()][0]!.payout!.id);
    expect(payout.supportingDocuments).toHaveLength(1);
    expect(sb.requestLog().filter((x) => x.route === 'uploadUrl')).toHaveLength(1);
    expect(sb.requestLog().filter((x) => x.route === 'patchDocuments')).toHaveLength(0);
  });

  it('--merge-documents with a plan: refused, nothing sent (approvers signed each file, no merged PDF: found by test/chaos/plan-fuzz.ts)', async () => {
    sb = await startSandbox({ rateLimitPerSecond: null });
    const dir = await workDir();
    const file = await twoDocumentBatch(dir);
    const plan = join(dir, 'two-docs.plan.json');
    const made = await runMain(['plan', file, '--out', plan, '--no-quote', '--base-url', sb.url], { cwd: dir, env: cleanEnv() });
    expect(made.code, made.stderr).toBe(0);
    const before = sb.requestLog().length;
    await expect(runBatch({ ...unattended({ mergeDocuments: true }), planFile: plan, conn: conn(sb) })).rejects.toThrow(
      'the plan sends each document as its approvers signed it: --merge-documents would send a PDF of 3 files of PAYROLL-2025-01-039 instead',
    );
    expect(
      sb
        .requestLog()
        .slice(before)
        .map((x) => x.route),
    ).toEqual([]);
  });

  it('mergeToPdf keeps every page and embeds images, and gives the same bytes for the same files', async () => {
    const a = await PDFDocument.create();
    a.addPage();
    a.addPage();
    const pdf = await a.save();
    const files = [
      { bytes: pdf, contentType: 'application/pdf' as const, filename: 'a.pdf' },
      { bytes: new Uint8Array(PNG), contentType: 'image/png' as const, filename: 'scan.png' },
    ];
    const merged = await mergeToPdf(files);
    expect((await PDFDocument.load(merged)).getPageCount()).toBe(3);
    expect(Buffer.from(await mergeToPdf(files)).equals(Buffer.from(merged))).toBe(true);
  });

  it('mergeToPdf refuses an encrypted PDF, naming it: pdf-lib cannot decrypt, its pages would be copied blank', async () => {
    const a = await PDFDocument.create();
    a.addPage();
    const plain = Buffer.from(await a.save({ useObjectStreams: false })).toString('latin1');
    // (an owner-password PDF, that opens without a password, names its /Encrypt dictionary in the trailer)
    const encrypted = plain.replace('trailer\n<<', 'trailer\n<<\n/Encrypt << /Filter /Standard /V 1 /R 2 /P -4 /O <00> /U <00> >>');
    const files = [
      { bytes: new Uint8Array(PNG), contentType: 'image/png' as const, filename: 'scan.png' },
      { bytes: Buffer.from(encrypted, 'latin1'), contentType: 'application/pdf' as const, filename: 'statement.pdf' },
    ];
    await expect(mergeToPdf(files)).rejects.toMatchObject({
      code: 'DOCUMENT_ENCRYPTED',
      message: expect.stringContaining('"statement.pdf" is an encrypted PDF'),
    });
  });

  it("mergeToPdf refuses a PDF or image it cannot read, naming it, never with the library's own error", async () => {
    for (const [contentType, filename, bytes] of [
      ['application/pdf', 'broken.pdf', '%PDF-1.7\ngarbage that is no PDF at all\n%%EOF'],
      ['image/png', 'broken.png', '\x89PNG\r\n\x1a\nnot really a png'],
    ] as const) {
      const files = [{ bytes: Buffer.from(bytes, 'latin1'), contentType, filename }];
      await expect(mergeToPdf(files)).rejects.toMatchObject({
        code: 'DOCUMENT_UNREADABLE',
        message: expect.stringMatching(new RegExp(`^"${filename.replace('.', '\\.')}" could not be read as`)),
      });
    }
  });
});
