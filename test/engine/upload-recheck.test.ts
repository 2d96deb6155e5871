// Issue 17 item 8: a document is uploaded only if it is still the file that was validated. Swapped
// for a FIFO, a device, a symbolic link or other bytes between validation and upload, the row's
// document step fails with DOCUMENT_CHANGED on the row, and the run goes on (a FIFO used to hang it).
import { execFileSync } from 'node:child_process';
import { copyFileSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { copyFile, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { execute, prepareRun } from '../../src/engine/pipeline.ts';
import { startSandbox, type LocalSandbox } from '../../src/sandbox/start-sandbox.ts';
import { checkDocumentFile, readDocumentForUpload } from '../../src/validation/document-files.ts';
import { HEADER, ROOT, generateCsv, tempDirs } from './helpers.ts';
import { UNATTENDED, connectionTo } from '../ops/helpers.ts';

const PDF = join(ROOT, 'samples/documents/invoice-de-c1.pdf');
const OTHER_PDF = join(ROOT, 'samples/documents/invoice-eu-c1.pdf'); // one byte longer
const dirs = tempDirs('pb-upload-');
let sb: LocalSandbox | undefined;
afterEach(async () => {
  await sb?.close();
  sb = undefined;
  await dirs.remove();
});

/** A batch of two rows: the first with doc.pdf beside the batch, the second without a document. */
async function batchWithDocument(dir: string): Promise<string> {
  const lines = generateCsv({ rows: 2, documentsEvery: 2 }).trim().split('\n');
  const docs = HEADER.indexOf('documents');
  const first = lines[1]!.split(',');
  first[docs] = 'doc.pdf';
  lines[1] = first.join(',');
  await copyFile(PDF, join(dir, 'doc.pdf'));
  const file = join(dir, 'payroll.csv');
  await writeFile(file, lines.join('\n') + '\n');
  return file;
}

/** Runs the batch with `swap` applied to doc.pdf after validation (the plan prepared), before any upload. */
async function runWithSwap(swap: (doc: string) => void) {
  sb = await startSandbox({ rateLimitPerSecond: null });
  const dir = await dirs.make();
  const file = await batchWithDocument(dir);
  const prepared = await prepareRun({ ...UNATTENDED, file, conn: connectionTo(sb) });
  swap(join(dir, 'doc.pdf'));
  const r = await execute(prepared);
  const [withDoc, without] = [...r.outcomes.values()];
  const routes = sb.requestLog().map((x) => x.route);
  return { r, withDoc: withDoc!, without: without!, routes };
}

describe('a document swapped between validation and upload', () => {
  it('for a FIFO: the row fails with DOCUMENT_CHANGED, nothing of it is sent, the run ends and goes on', async () => {
    const { r, withDoc, without, routes } = await runWithSwap((doc) => {
      rmSync(doc);
      execFileSync('mkfifo', [doc]);
    });
    expect(withDoc.status).toBe('FAILED_TO_SEND');
    expect(withDoc.error?.code).toBe('DOCUMENT_CHANGED');
    expect(withDoc.error?.message).toMatch(/doc\.pdf changed after validation \(now a FIFO\): not uploaded/);
    expect(without.status).toBe('PENDING');
    expect(routes.filter((x) => x === 'uploadUrl')).toHaveLength(0);
    expect(routes.filter((x) => x === 'initiate')).toHaveLength(1);
    expect(r.kind).toBe('rows-failed');
    const results = await readFile(r.resultsPath, 'utf8');
    expect(results).toMatch(/FAILED_TO_SEND,.*DOCUMENT_CHANGED/);
  });

  it('for other bytes of the same size, another size, or a symbolic link to another file', async () => {
    const sameSize = (doc: string) => {
      const b = readFileSync(doc);
      b[b.length - 2] = b[b.length - 2]! ^ 1;
      writeFileSync(doc, b);
    };
    const otherSize = (doc: string) => copyFileSync(OTHER_PDF, doc);
    const link = (doc: string) => {
      rmSync(doc);
      symlinkSync(OTHER_PDF, doc);
    };
    for (const [swap, why] of [
      [sameSize, /other content/],
      [otherSize, /now 917 bytes, 916 when validated/],
      [link, /now a symbolic link/],
    ] as const) {
      const { withDoc, without, routes } = await runWithSwap(swap);
      expect(withDoc.error?.code).toBe('DOCUMENT_CHANGED');
      expect(withDoc.error?.message).toMatch(why);
      expect(without.status).toBe('PENDING');
      expect(routes.filter((x) => x === 'uploadUrl')).toHaveLength(0);
      await sb!.close();
      sb = undefined;
    }
  });

  it('left alone, it is uploaded as validated', async () => {
    const { withDoc, routes } = await runWithSwap(() => {});
    expect(withDoc.status).toBe('PENDING');
    expect(routes.filter((x) => x === 'uploadUrl')).toHaveLength(1);
  });
});

describe('readDocumentForUpload', () => {
  const fingerprintDocument = (path: string) => {
    const c = checkDocumentFile(path);
    return c.ok ? c.fingerprint : undefined;
  };
  it('never reads a FIFO or a device; compares with the fingerprint', async () => {
    const dir = await dirs.make();
    const doc = join(dir, 'a.pdf');
    await copyFile(PDF, doc);
    const fp = fingerprintDocument(doc)!;
    expect(fp).toMatchObject({ bytes: 916, symlink: false });
    const ok = await readDocumentForUpload(doc, fp);
    expect(ok.ok && ok.contentType).toBe('application/pdf');
    const fifo = join(dir, 'f.pdf');
    execFileSync('mkfifo', [fifo]);
    expect(await readDocumentForUpload(fifo, fp)).toMatchObject({ ok: false, code: 'DOCUMENT_CHANGED' });
    expect(await readDocumentForUpload(fifo)).toMatchObject({ ok: false, code: 'DOCUMENT_CHANGED' });
    expect(fingerprintDocument(fifo)).toBeUndefined();
    expect(await readDocumentForUpload('/dev/zero')).toMatchObject({ ok: false, message: expect.stringMatching(/now a device/) });
    await rm(doc);
    expect(await readDocumentForUpload(doc, fp)).toMatchObject({ ok: false, message: expect.stringMatching(/cannot be read \(ENOENT\)/) });
    await symlink(PDF, doc);
    expect(await readDocumentForUpload(doc, fp)).toMatchObject({ ok: false, message: expect.stringMatching(/now a symbolic link/) });
    // A document that was a link when validated may stay one: its bytes are what counts.
    expect((await readDocumentForUpload(doc, fingerprintDocument(doc))).ok).toBe(true);
  });
});
