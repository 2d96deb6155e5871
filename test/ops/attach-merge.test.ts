// `attach PAYOUT FILE... --merge` with an encrypted PDF (one that opens without a password too): pdf-lib cannot decrypt,
// so merged its pages would come out blank; refused naming the file, before any upload.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { PDFDocument } from 'pdf-lib';
import { describe, expect, it } from 'vitest';
import { attachDocuments } from '../../src/follow-up/attach-documents.ts';
import { connectionTo, paidBatch, sampleDoc, startSb } from './helpers.ts';

describe('attach --merge with an encrypted PDF', () => {
  it('is refused naming the file (exit 2: BAD_FILE), nothing uploaded', async () => {
    const sb = await startSb();
    try {
      const b = await paidBatch(sb, { rows: 1 });
      const a = await PDFDocument.create();
      a.addPage();
      const plain = Buffer.from(await a.save({ useObjectStreams: false })).toString('latin1');
      const statement = join(b.dir, 'statement.pdf');
      await writeFile(
        statement,
        plain.replace('trailer\n<<', 'trailer\n<<\n/Encrypt << /Filter /Standard /V 1 /R 2 /P -4 /O <00> /U <00> >>'),
        'latin1',
      );
      const before = sb.requestLog().filter((r) => r.route === 'uploadUrl').length;
      const o = { client: connectionTo(sb).client, payoutId: b.ids[0]!, files: [sampleDoc(), statement], merge: true };
      await expect(attachDocuments(o)).rejects.toMatchObject({
        code: 'BAD_FILE',
        message: expect.stringContaining('"statement.pdf" is an encrypted PDF'),
      });
      expect(sb.requestLog().filter((r) => r.route === 'uploadUrl').length).toBe(before);
    } finally {
      await sb.close();
    }
  });
});
