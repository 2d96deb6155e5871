// A row's supporting documents before its initiate: each file uploaded (spec §4.6: upload-url,
// then a PUT to the storage) unless the journal already holds its documentUrl, which every later
// attempt reuses instead of uploading again. `--merge-documents` merges a row's files into one
// PDF first (spec §4.5: "several files for one request should be merged into one PDF").
import { basename } from 'node:path';
import { PDFDocument } from 'pdf-lib';
import type { PayoutClient } from '../client/client.ts';
import { rowState } from '../journal/rows.ts';
import type { DocumentContentType } from '../interface/codes.ts';
import { readDocumentForUpload, type DocumentFingerprint } from '../validation/documents.ts';
import type { PayoutRow } from '../validation/schemas.ts';
import { record, type BatchSession } from './session.ts';

interface UploadFile {
  bytes: Uint8Array;
  contentType: DocumentContentType;
  filename: string;
}

export interface DocumentOptions {
  client: PayoutClient;
  session: BatchSession;
  mergeDocuments: boolean;
  /** What validation saw of each document (absolute path); the upload reads the same file or none. */
  fingerprints?: Map<string, DocumentFingerprint>;
}

/** The documentUrls of a row's files, in order (one, merged, with --merge-documents). */
export async function uploadDocuments(p: PayoutRow, o: DocumentOptions): Promise<string[]> {
  const ref = p.reference;
  if (!p.documents.length) return [];
  const known = rowState(o.session.folded, ref).docs;
  const load = async (path: string): Promise<UploadFile> => {
    // The file validated, not whatever is at its path now (a FIFO there would never end a read).
    const f = await readDocumentForUpload(path, o.fingerprints?.get(path));
    if (!f.ok) throw new RowStepError(f.code, f.message);
    return { bytes: f.bytes, contentType: f.contentType, filename: basename(path) };
  };
  const upload = async (name: string, file: () => Promise<UploadFile>) => {
    const have = known[name];
    if (have) return have;
    const r = await o.client.uploadDocument(await file());
    record(o.session, { t: 'doc', ref, doc: name, url: r.documentUrl });
    return r.documentUrl;
  };
  if (o.mergeDocuments && p.documents.length > 1) {
    const url = await upload(`merged:${p.documents.join('|')}`, async () => ({
      bytes: await mergeToPdf(await Promise.all(p.documents.map(load))),
      contentType: 'application/pdf',
      filename: `${ref.replace(/[^A-Za-z0-9._-]/g, '_')}-documents.pdf`,
    }));
    return [url];
  }
  const urls: string[] = [];
  for (const path of p.documents) urls.push(await upload(path, () => load(path)));
  return urls;
}

/** Merges PDFs and images (one page each) into one PDF, for --merge-documents. */
export async function mergeToPdf(files: { bytes: Uint8Array; contentType: DocumentContentType }[]): Promise<Uint8Array> {
  const out = await PDFDocument.create();
  for (const f of files) {
    if (f.contentType === 'application/pdf') {
      const src = await PDFDocument.load(f.bytes, { ignoreEncryption: true });
      for (const page of await out.copyPages(src, src.getPageIndices())) out.addPage(page);
    } else {
      const img = f.contentType === 'image/png' ? await out.embedPng(f.bytes) : await out.embedJpg(f.bytes);
      const page = out.addPage([img.width, img.height]);
      page.drawImage(img, { x: 0, y: 0, width: img.width, height: img.height });
    }
  }
  // Fixed dates: the same files merge into the same bytes.
  out.setCreationDate(new Date(0));
  out.setModificationDate(new Date(0));
  return out.save();
}

/** A step of a row that failed here, before any request: recorded on the row with its code. */
export class RowStepError extends Error {
  override readonly name = 'RowStepError';
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}
