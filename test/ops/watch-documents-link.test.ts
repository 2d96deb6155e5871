import { copyFileSync, mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { vetRows } from '../../src/watch/checks.ts';
import { generateCsv } from '../engine/helpers.ts';
import { ROOT } from './helpers.ts';

/** One row naming `doc` as its document. */
const csvNaming = (doc: string) => {
  const [head, row] = generateCsv({ rows: 1, currencies: ['GBP'], prefix: 'DOCL', documentsEvery: 1 })
    .trimEnd()
    .split('\n');
  const cells = row!.split(',');
  cells[head!.split(',').indexOf('documents')] = doc;
  return `${head}\n${cells.join(',')}\n`;
};

describe('watch: DIR/documents itself', () => {
  it('is never followed when it is a symbolic link: whoever set it would choose which files of the watch user are uploaded', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'pb-watch-doclink-'));
    const elsewhere = join(dir, 'elsewhere');
    mkdirSync(elsewhere);
    copyFileSync(join(ROOT, 'samples/documents/invoice-de-c1.pdf'), join(elsewhere, 'invoice.pdf'));
    symlinkSync(elsewhere, join(dir, 'documents'));
    const claimDir = join(dir, 'processing', 'claim');
    mkdirSync(claimDir, { recursive: true });
    symlinkSync(join(dir, 'documents'), join(claimDir, 'documents'));
    const file = join(claimDir, 'p.csv');
    writeFileSync(file, csvNaming('documents/invoice.pdf'));
    const v = await vetRows(file, { name: 'p.csv', claimDir, documents: join(dir, 'documents'), allowDocumentsOutside: false });
    expect(v.documents).toContain('"documents/invoice.pdf" is a symbolic link (documents itself): links are never followed');
  });
});
