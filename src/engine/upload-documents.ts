// A row's documents before its initiate (spec §4.6), each distinct one uploaded once per batch, keyed by the sha256 of the bytes
// sent: its documentUrl journalled, reused by every row and run. `--merge-documents` makes one PDF first (§4.5), keyed so too.
import type { PayoutClient } from '../client/client.ts';
import { readDocumentForUpload, type DocumentFingerprint } from '../validation/document-files.ts';
import type { PayoutRow } from '../validation/row-schemas.ts';
import { record, type BatchSession } from './session.ts';
import { sha256Hex } from './identity.ts';

type UploadFile = Parameters<PayoutClient['uploadDocument']>[0];

interface DocumentOptions {
  client: PayoutClient;
  session: BatchSession;
  mergeDocuments: boolean;
  /** What validation saw of each document: the upload reads the same file or none. */
  fingerprints?: Map<string, DocumentFingerprint>;
}

export type DocumentUrls = (p: PayoutRow) => Promise<string[]>;

/** One per run: its rows share the uploads in flight. */
export function documentUploader(o: DocumentOptions): DocumentUrls {
  const inFlight = new Map<string, Promise<string>>();
  const upload = async (sha256: string, file: UploadFile): Promise<string> => {
    try {
      const { documentUrl } = await o.client.uploadDocument(file);
      record(o.session, { t: 'doc', sha256, url: documentUrl });
      return documentUrl;
    } finally {
      inFlight.delete(sha256); // journalled now, or failed: a later row tries again
    }
  };
  const urlOf = (file: UploadFile): Promise<string> => {
    const sha256 = sha256Hex(file.bytes);
    const journalled = o.session.folded.uploads.get(sha256);
    if (journalled) return Promise.resolve(journalled);
    let pending = inFlight.get(sha256);
    if (!pending) inFlight.set(sha256, (pending = upload(sha256, file)));
    return pending;
  };
  const load = async (path: string): Promise<UploadFile> => {
    // the file validated, not whatever is at its path now (a FIFO would never end a read)
    const f = await readDocumentForUpload(path, o.fingerprints?.get(path));
    if (!f.ok) throw new RowStepError(f.code, f.message);
    return { bytes: f.bytes, contentType: f.contentType, filename: f.filename };
  };
  return async (p) => {
    if (!p.documents.length) return [];
    if (o.mergeDocuments && p.documents.length > 1) {
      // (a document named twice, by any path, merged once, as attach --merge does; alone, it is sent as it is)
      const files = (await Promise.all(p.documents.map(load))).filter(
        (f, i, all) => all.findIndex((x) => sha256Hex(x.bytes) === sha256Hex(f.bytes)) === i,
      );
      if (files.length === 1) return [await urlOf(files[0]!)];
      const filename = `${p.reference.replace(/[^A-Za-z0-9._-]/g, '_')}-documents.pdf`;
      return [await urlOf({ bytes: await mergeToPdf(files), contentType: 'application/pdf', filename })];
    }
    const urls: string[] = [];
    for (const path of p.documents) urls.push(await urlOf(await load(path)));
    return [...new Set(urls)]; // (the same bytes named twice: one documentUrl, nothing to PATCH for it)
  };
}

/** Merges PDFs and images (one page each) into one PDF, for --merge-documents. */
export async function mergeToPdf(files: UploadFile[]): Promise<Uint8Array> {
  // (lazy: pdf-lib is a third of every command's start-up; `default`: esbuild's CommonJS chunk; tsx gives none)
  const lib = await import('pdf-lib');
  const { PDFDocument } = lib.default ?? lib;
  const out = await PDFDocument.create();
  for (const f of files) {
    const pages = async () => {
      if (f.contentType !== 'application/pdf') {
        const img = f.contentType === 'image/png' ? await out.embedPng(f.bytes) : await out.embedJpg(f.bytes);
        return out.addPage([img.width, img.height]).drawImage(img, { x: 0, y: 0, width: img.width, height: img.height });
      }
      const src = await PDFDocument.load(f.bytes, { ignoreEncryption: true });
      // (pdf-lib cannot decrypt: the pages of an encrypted PDF, even one that opens without a password, would be copied blank)
      if (src.isEncrypted)
        throw new RowStepError(
          'DOCUMENT_ENCRYPTED',
          `"${f.filename}" is an encrypted PDF: merged, its pages would come out blank; send it without merging, or a copy without protection`,
        );
      for (const page of await out.copyPages(src, src.getPageIndices())) out.addPage(page);
    };
    await pages().catch((e: unknown) => {
      if (e instanceof RowStepError) throw e;
      const kind = f.contentType.split('/')[1]!.toUpperCase();
      throw new RowStepError('DOCUMENT_UNREADABLE', `"${f.filename}" could not be read as a ${kind} to merge; send one that opens`);
    });
  }
  // Fixed dates: the same files merge into the same bytes.
  out.setCreationDate(new Date(0));
  out.setModificationDate(new Date(0));
  return out.save();
}

/** A row's step failed before any request: recorded on the row with its code. */
export class RowStepError extends Error {
  override readonly name = 'RowStepError';
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}
