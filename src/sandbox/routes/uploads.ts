// Uploads (spec §4.6): upload-url, the PUT to object storage, the owner's GET; readings in ../storage.ts.
import { API_KEY_HEADER, PAYOUTS_PREFIX as P } from '../../spec/endpoints.ts';
import { UploadUrlRequest } from '../../spec/schemas.ts';
import { define, route } from '../context.ts';
import { checkFields, header, ok } from '../http.ts';
import { DOCUMENT_PATH, UPLOAD_PATH, filenameProblem } from '../storage.ts';

export const UPLOAD_ROUTES = [
  /** Reading: 200 (nothing is created at the service yet). */
  route('uploadUrl', 'POST', `${P}/documents/upload-url`, UploadUrlRequest, (sb, req, body) => {
    checkFields({ filename: filenameProblem(body.filename, body.contentType) });
    return ok(sb.storage.issue(req.business.id, body.filename, body.contentType));
  }),
  define('storage', 'storagePut', 'PUT', `${UPLOAD_PATH}:token`, null, (sb, req) =>
    sb.storage.put(req.params.token ?? '', header(req.headers, 'content-type'), req.rawBody, req.bodySize),
  ),
  define('storage', 'storageGet', 'GET', `${DOCUMENT_PATH}:token/:filename`, null, (sb, req) => {
    const key = header(req.headers, API_KEY_HEADER);
    return sb.storage.get(req.params.token ?? '', key ? sb.store.businessByKey.get(key)?.id : undefined);
  }),
];
