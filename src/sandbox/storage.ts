// Spec §4.6 and §8: presigned uploads to the sandbox's own object storage; the PUT carries no API key
// and is not rate limited. Readings:
// - addresses are http://127.0.0.1:PORT (no TLS on loopback); only the URLs issued are accepted;
// - /_storage/uploads/{token} lasts 15 minutes (then 403 RequestExpired) and may be PUT again;
// - the PUT carries the requested Content-Type (else 403 SignatureDoesNotMatch), at most 10 MB
//   (413 EntityTooLarge), not empty (400 EmptyBody); 200;
// - /_storage/documents/{token}/{filename} serves initiate and PATCH once uploaded, for the asking business;
// - a filename's extension fits the content type (.pdf; .jpg/.jpeg; .png).
import { extname } from 'node:path';
import { MAX_DOCUMENT_BYTES, UPLOAD_URL_TTL_MS, type DocumentContentType } from '../spec/codes.ts';
import type { Clock } from './clock.ts';
import type { SandboxState } from './contract.ts';
import { apiError, type Reply } from './http.ts';
import { newId, newToken } from './ids.ts';

export const UPLOAD_PATH = '/_storage/uploads/';
export const DOCUMENT_PATH = '/_storage/documents/';

/** A document as the state file keeps it, with its bytes once uploaded. */
export type StoredFile = Omit<SandboxState['documents'][number], 'uploaded'> & { uploaded?: { bytes: Buffer; at: string } };

const EXTENSIONS: Record<DocumentContentType, string[]> = {
  'application/pdf': ['pdf'],
  'image/jpeg': ['jpg', 'jpeg'],
  'image/png': ['png'],
};

export function filenameProblem(filename: string, contentType: DocumentContentType): string | undefined {
  const ext = extname(filename).slice(1).toLowerCase();
  if (!ext || EXTENSIONS[contentType].includes(ext)) return undefined;
  return `a ${contentType} file must be named .${EXTENSIONS[contentType].join(' or .')}, not .${ext}`;
}

export class Storage {
  readonly byUpload = new Map<string, StoredFile>();
  readonly byDocument = new Map<string, StoredFile>();
  /** Hosts an earlier life of this sandbox listened on: its documentUrls name them. */
  readonly formerHosts = new Set<string>();

  constructor(
    private readonly baseUrl: () => string,
    private readonly clock: Clock,
  ) {}

  add(f: StoredFile): void {
    this.byUpload.set(f.uploadToken, f);
    this.byDocument.set(f.documentToken, f);
  }

  issue(businessId: string, filename: string, contentType: DocumentContentType) {
    const [uploadToken, documentToken] = [newToken(), newToken()];
    const f: StoredFile = { uploadToken, documentToken, businessId, contentType, expiresAt: this.clock.now() + UPLOAD_URL_TTL_MS };
    this.add(f);
    return {
      uploadUrl: `${this.baseUrl()}${UPLOAD_PATH}${uploadToken}?X-Expires=${encodeURIComponent(new Date(f.expiresAt).toISOString())}`,
      documentUrl: `${this.baseUrl()}${DOCUMENT_PATH}${documentToken}/${encodeURIComponent(filename)}`,
      headers: { 'Content-Type': contentType },
    };
  }

  /** `size` counts every byte sent, even past the limit. */
  put(uploadToken: string, contentTypeHeader: string | undefined, body: Buffer, size: number): Reply {
    const f = this.byUpload.get(uploadToken);
    if (!f) return apiError(404, 'NoSuchUpload', 'The upload URL is not known');
    if (this.clock.now() > f.expiresAt) return apiError(403, 'RequestExpired', 'The upload URL has expired (valid 15 minutes)');
    const mediaType = (contentTypeHeader ?? '').split(';')[0]!.trim().toLowerCase();
    if (mediaType !== f.contentType) {
      return apiError(
        403,
        'SignatureDoesNotMatch',
        `Content-Type must be ${f.contentType}, as requested for this upload URL (got ${mediaType || 'none'})`,
      );
    }
    if (size > MAX_DOCUMENT_BYTES)
      return apiError(413, 'EntityTooLarge', `A document is at most ${MAX_DOCUMENT_BYTES} bytes (10 MB); got ${size}`);
    if (size === 0) return apiError(400, 'EmptyBody', 'The upload has no content');
    f.uploaded = { bytes: body, at: this.clock.iso() };
    return { status: 200, body: { ok: true, size } };
  }

  get(documentToken: string, businessId: string | undefined): Reply {
    const f = this.byDocument.get(documentToken);
    if (!f || !f.uploaded || f.businessId !== businessId) return apiError(404, 'NoSuchKey', 'No such document');
    return { status: 200, body: f.uploaded.bytes, headers: { 'content-type': f.contentType } };
  }

  /** The uploaded file behind a documentUrl issued to this business, as a payout's new document; otherwise why not. */
  resolve(documentUrl: string, businessId: string): { id: string; url: string; uploadedAt: string } | string {
    if (!URL.canParse(documentUrl)) return 'is not a URL';
    const u = new URL(documentUrl);
    const token = u.pathname.startsWith(DOCUMENT_PATH) ? u.pathname.slice(DOCUMENT_PATH.length).split('/')[0] : undefined;
    const f = (u.host === new URL(this.baseUrl()).host || this.formerHosts.has(u.host)) && token ? this.byDocument.get(token) : undefined;
    if (!f || f.businessId !== businessId) return 'is not a documentUrl issued by the upload-url route to this business';
    if (!f.uploaded) return 'has no uploaded file yet: PUT the file to its uploadUrl first';
    return { id: newId(), url: documentUrl, uploadedAt: f.uploaded.at };
  }
}
