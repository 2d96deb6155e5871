// Uploads (spec §4.6): upload-url, the PUT to object storage, the owner's GET; readings in ../storage.ts.
import { API_KEY_HEADER } from '../../spec/endpoints.ts';
import { UploadUrlRequest } from '../../spec/schemas.ts';
import type { Handler } from '../context.ts';
import { ok, parseWith, validationError } from '../error-answers.ts';
import { header } from '../request.ts';
import { filenameProblem } from '../storage.ts';

/** Reading: 200 (nothing is created at the service yet). */
export const uploadUrl: Handler = (sb, req) => {
  const body = parseWith(UploadUrlRequest, req.body);
  const problem = filenameProblem(body.filename, body.contentType);
  if (problem) return validationError([{ field: 'filename', message: problem }]);
  return ok(sb.storage.issue(req.business.id, body.filename, body.contentType));
};

export const storagePut: Handler = (sb, req) =>
  sb.storage.put(req.params.token ?? '', header(req.headers, 'content-type'), req.rawBody, req.bodySize);

export const storageGet: Handler = (sb, req) => {
  const key = header(req.headers, API_KEY_HEADER);
  const business = key ? sb.store.businessByKey.get(key) : undefined;
  return sb.storage.get(req.params.token ?? '', business?.id);
};
