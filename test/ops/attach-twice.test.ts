// `attach PAYOUT FILE...` with one document named twice (a glob and its own name, two paths to one
// file): the document is uploaded and attached once, never taking two of the payout's 5 places.
import { copyFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { attachDocuments } from '../../src/follow-up/attach-documents.ts';
import { connectionTo, paidBatch, sampleDoc, startSb } from './helpers.ts';

describe('attach with the same document named twice', () => {
  it('uploads and attaches it once', async () => {
    const sb = await startSb();
    try {
      const b = await paidBatch(sb, { rows: 1 });
      const copy = join(b.dir, 'invoice copy.pdf');
      await copyFile(sampleDoc(), copy);
      const r = await attachDocuments({ client: connectionTo(sb).client, payoutId: b.ids[0]!, files: [sampleDoc(), copy, sampleDoc()] });
      expect(r.uploaded).toHaveLength(1);
      expect(r.response.totalDocuments).toBe(1);
    } finally {
      await sb.close();
    }
  });
});
