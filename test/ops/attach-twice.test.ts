// `attach PAYOUT FILE...` with one document named twice (a glob and its own name, two paths to one
// file): the document is uploaded and attached once, never taking two of the payout's 5 places.
import { copyFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { attachDocuments } from '../../src/follow-up/attach-documents.ts';
import { ledgerOf } from '../../src/ledger/open.ts';
import { readResults } from '../../src/results/results.ts';
import { connectionTo, paidBatch, sampleDoc, setStatus, startSb } from './helpers.ts';

describe('attach with the same document named twice', () => {
  it('uploads and attaches it once', async () => {
    const sb = await startSb();
    try {
      const b = await paidBatch(sb, { rows: 1 });
      const copy = join(b.dir, 'invoice copy.pdf');
      await copyFile(sampleDoc(), copy);
      const r = await attachDocuments({ client: connectionTo(sb).client, payoutId: b.ids[0]!, files: [sampleDoc(), copy, sampleDoc()] });
      expect(r.uploaded).toHaveLength(1);
      expect(r.totalDocuments).toBe(1);
    } finally {
      await sb.close();
    }
  });

  it('killed after the PATCH, before anything else: run again, the document is found attached, never uploaded or attached twice', async () => {
    const sb = await startSb();
    try {
      const b = await paidBatch(sb, { rows: 1 });
      const o = { payoutId: b.ids[0]!, files: [sampleDoc()], ledgers: [ledgerOf(connectionTo(sb))] };
      const killed = connectionTo(sb).client;
      const patch = killed.patchDocuments.bind(killed);
      killed.patchDocuments = async (id, urls) => {
        await patch(id, urls);
        throw new Error('killed after the PATCH');
      };
      await expect(attachDocuments({ ...o, client: killed })).rejects.toThrow('killed after the PATCH');
      const sent = sb.requestLog().filter((r) => ['uploadUrl', 'storagePut', 'patchDocuments'].includes(r.route)).length;

      const r = await attachDocuments({ ...o, client: connectionTo(sb).client });
      expect(r.uploaded).toEqual([]);
      expect(r.already).toMatchObject([{ file: sampleDoc() }]);
      expect(sb.requestLog().filter((r) => ['uploadUrl', 'storagePut', 'patchDocuments'].includes(r.route)).length).toBe(sent);
      expect(r.totalDocuments).toBe(1);
    } finally {
      await sb.close();
    }
  });

  it('two attaches at once (a cron retry and a person): the second waits for the first, finds the document attached, sends nothing', async () => {
    const sb = await startSb();
    try {
      const b = await paidBatch(sb, { rows: 1 });
      const o = { payoutId: b.ids[0]!, files: [sampleDoc()] };
      // the first is held inside its upload until the second waits for the payout's lock, or uploads too
      let [go, uploading] = [() => {}, () => {}];
      const second = new Promise<void>((resolve) => (go = resolve));
      const firstUploads = new Promise<void>((resolve) => (uploading = resolve));
      const first = connectionTo(sb).client;
      const upload = first.uploadDocument.bind(first);
      first.uploadDocument = async (f) => (uploading(), await second, upload(f));
      const other = connectionTo(sb).client;
      const otherUpload = other.uploadDocument.bind(other);
      other.uploadDocument = async (f) => (go(), otherUpload(f));
      const otherLedger = ledgerOf(connectionTo(sb));
      const lock = otherLedger.lock.bind(otherLedger);
      otherLedger.lock = (name, job) => (go(), lock(name, job));

      const a = attachDocuments({ ...o, client: first, ledgers: [ledgerOf(connectionTo(sb))] });
      await firstUploads;
      const r = await attachDocuments({ ...o, client: other, ledgers: [otherLedger] });
      expect((await a).uploaded).toHaveLength(1);
      expect([r.uploaded, r.already.map((x) => x.file), r.totalDocuments]).toEqual([[], [sampleDoc()], 1]);
      expect(sb.requestLog().filter((r) => r.route === 'patchDocuments')).toHaveLength(1);
    } finally {
      await sb.close();
    }
  });

  it('the document two batches uploaded under two documentUrls, each payout holding its own: attached already, to both', async () => {
    const sb = await startSb();
    try {
      const batches = [
        await paidBatch(sb, { rows: 1, documentsEvery: 1, prefix: 'A' }),
        await paidBatch(sb, { rows: 1, documentsEvery: 1, prefix: 'B', amount: () => '12.34' }),
      ];
      const doc = (await readResults(batches[0]!.results)).rows[0]!.cells.documents!;
      const ledgers = [ledgerOf(connectionTo(sb))];
      for (const b of batches) {
        const r = await attachDocuments({ client: connectionTo(sb).client, payoutId: b.ids[0]!, files: [doc], ledgers });
        expect([r.uploaded, r.totalDocuments]).toEqual([[], 1]);
      }
    } finally {
      await sb.close();
    }
  });

  it('the document asked for is attached already: nothing sent, and the request is said to be still open', async () => {
    const sb = await startSb();
    try {
      const b = await paidBatch(sb, { rows: 1 });
      const o = { client: connectionTo(sb).client, payoutId: b.ids[0]!, files: [sampleDoc()], ledgers: [ledgerOf(connectionTo(sb))] };
      await attachDocuments(o);
      await setStatus(sb, b.ids[0]!, 'ADDITIONAL_INFO_REQUIRED', { informationRequests: [{ title: 'Invoice', type: 'FILE' }] });
      const r = await attachDocuments(o);
      expect([r.uploaded, r.answers, r.stillAsks]).toEqual([[], [], ['Invoice']]);
    } finally {
      await sb.close();
    }
  });
});
