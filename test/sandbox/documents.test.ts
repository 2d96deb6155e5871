import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalSandbox } from '../../src/sandbox/start-sandbox.ts';
import { DocumentsPatchResponse, UploadUrl } from './strict.ts';
import { call, GLOBEX, initiate, nipBody, P, setStatus, start, uploadDocument } from './helpers.ts';

let sb: LocalSandbox;
beforeAll(async () => {
  sb = await start();
});
afterAll(() => sb.close());

const uploadUrl = (body: unknown, key?: string) => call(sb, 'POST', `${P}/documents/upload-url`, { body, ...(key ? { key } : {}) });

describe('upload-url and the storage PUT (spec §4.6, §8)', () => {
  it('hands out a PUT address on the sandbox storage, the headers to send, and a documentUrl', async () => {
    const r = await uploadUrl({ filename: 'invoice-77.pdf', contentType: 'application/pdf' });
    expect(r.status).toBe(200);
    const u = UploadUrl.parse(r.body);
    expect(u.uploadUrl.startsWith(`${sb.url}/_storage/uploads/`)).toBe(true);
    expect(u.documentUrl.startsWith(`${sb.url}/_storage/documents/`)).toBe(true);
    expect(u.headers).toEqual({ 'Content-Type': 'application/pdf' });
    const put = await fetch(u.uploadUrl, { method: 'PUT', headers: u.headers, body: Buffer.from('%PDF-1.7') });
    expect(put.status).toBe(200);
    // The PUT is object storage: no key, not counted against a key.
    expect(sb.requestLog().at(-1)).toMatchObject({ route: 'storagePut', apiKey: '', status: 200 });
    // The owner may read the file back; another business may not.
    const back = await fetch(u.documentUrl, { headers: { 'x-api-key': 'sk_sandbox_acme_primary' } });
    expect(back.status).toBe(200);
    expect(back.headers.get('content-type')).toBe('application/pdf');
    expect(Buffer.from(await back.arrayBuffer()).toString()).toBe('%PDF-1.7');
    expect((await fetch(u.documentUrl, { headers: { 'x-api-key': GLOBEX } })).status).toBe(404);
  });

  it('refuses an unsupported content type or a filename that does not fit it', async () => {
    const gif = await uploadUrl({ filename: 'a.gif', contentType: 'image/gif' });
    expect(gif.status).toBe(400);
    expect(gif.body.errors[0].field).toBe('contentType');
    const mismatch = await uploadUrl({ filename: 'photo.png', contentType: 'application/pdf' });
    expect(mismatch.status).toBe(400);
    expect(mismatch.body).toMatchObject({ error: 'VALIDATION_ERROR', errors: [{ field: 'filename' }] });
    expect((await uploadUrl({ filename: '../etc/passwd', contentType: 'application/pdf' })).status).toBe(400);
    expect((await uploadUrl({ filename: 'scan.JPEG', contentType: 'image/jpeg' })).status).toBe(200);
  });

  it('refuses a PUT with another content type (403), over 10 MB (413), or after 15 minutes (403)', async () => {
    const u = (await uploadUrl({ filename: 'i.pdf', contentType: 'application/pdf' })).body;
    const wrongType = await fetch(u.uploadUrl, { method: 'PUT', headers: { 'Content-Type': 'image/png' }, body: Buffer.from('x') });
    expect(wrongType.status).toBe(403);
    expect((await wrongType.json()).error).toBe('SignatureDoesNotMatch');
    const big = await fetch(u.uploadUrl, { method: 'PUT', headers: u.headers, body: Buffer.alloc(10 * 1024 * 1024 + 1, 1) });
    expect(big.status).toBe(413);
    expect((await big.json()).error).toBe('EntityTooLarge');
    const exactly10MB = await fetch(u.uploadUrl, { method: 'PUT', headers: u.headers, body: Buffer.alloc(10 * 1024 * 1024, 1) });
    expect(exactly10MB.status).toBe(200);

    const later = (await uploadUrl({ filename: 'late.pdf', contentType: 'application/pdf' })).body;
    sb.advanceClock(15 * 60 * 1000 + 1000);
    const expired = await fetch(later.uploadUrl, { method: 'PUT', headers: later.headers, body: Buffer.from('%PDF') });
    expect(expired.status).toBe(403);
    expect((await expired.json()).error).toBe('RequestExpired');
    // Never uploaded, so its documentUrl is refused on initiate.
    const r = await initiate(sb, nipBody({ supportingDocument: later.documentUrl }));
    expect(r.status).toBe(400);
    expect(r.body.errors[0].field).toBe('supportingDocument');
  });
});

describe('documents on payouts (spec §4.2, §4.5)', () => {
  it('attaches the initiate supportingDocument, then PATCH adds more, filtering duplicates', async () => {
    const d1 = await uploadDocument(sb);
    const d2 = await uploadDocument(sb);
    const created = await initiate(sb, nipBody({ supportingDocument: d1 }));
    expect(created.status).toBe(201);
    expect(created.body.supportingDocuments).toHaveLength(1);
    expect(created.body.supportingDocuments[0].url).toBe(d1);
    const r = await call(sb, 'PATCH', `${P}/${created.body.id}/documents`, { body: { documents: [d1, d2, d2] } });
    expect(r.status).toBe(200);
    const patched = DocumentsPatchResponse.parse(r.body);
    expect(patched.payoutId).toBe(created.body.id);
    expect(patched.totalDocuments).toBe(2);
    expect(patched.documents.map((d) => d.url)).toEqual([d1, d2]);
    expect(new Set(patched.documents.map((d) => d.id)).size).toBe(2);
    const got = await call(sb, 'GET', `${P}/${created.body.id}`);
    expect(got.body.supportingDocuments).toEqual(patched.documents);
  });

  it('refuses a 6th document with MAX_DOCUMENTS_EXCEEDED and keeps the five', async () => {
    const created = await initiate(sb, nipBody({ supportingDocument: await uploadDocument(sb) }));
    const four = await Promise.all([1, 2, 3, 4].map(() => uploadDocument(sb)));
    expect((await call(sb, 'PATCH', `${P}/${created.body.id}/documents`, { body: { documents: four } })).body.totalDocuments).toBe(5);
    const sixth = await call(sb, 'PATCH', `${P}/${created.body.id}/documents`, { body: { documents: [await uploadDocument(sb)] } });
    expect(sixth.status).toBe(400);
    expect(sixth.body.error).toBe('MAX_DOCUMENTS_EXCEEDED');
    // A duplicate of one already attached is not a 6th.
    const dup = await call(sb, 'PATCH', `${P}/${created.body.id}/documents`, { body: { documents: [four[0]] } });
    expect(dup.status).toBe(200);
    expect(dup.body.totalDocuments).toBe(5);
  });

  it('accepts only documentUrls uploaded by the same business (VALIDATION_ERROR otherwise)', async () => {
    const created = await initiate(sb, nipBody());
    const notAUrl = await call(sb, 'PATCH', `${P}/${created.body.id}/documents`, { body: { documents: ['invoice.pdf'] } });
    expect(notAUrl.body).toMatchObject({ statusCode: 400, error: 'VALIDATION_ERROR' });
    expect(notAUrl.body.errors[0].field).toBe('documents.0');
    const foreign = await call(sb, 'PATCH', `${P}/${created.body.id}/documents`, {
      body: { documents: ['https://files.example.com/invoice.pdf'] },
    });
    expect(foreign.body.error).toBe('VALIDATION_ERROR');
    const globexDoc = await uploadDocument(sb, GLOBEX);
    const otherBusiness = await call(sb, 'PATCH', `${P}/${created.body.id}/documents`, { body: { documents: [globexDoc] } });
    expect(otherBusiness.body.error).toBe('VALIDATION_ERROR');
    const issuedNotUploaded = (await uploadUrl({ filename: 'x.pdf', contentType: 'application/pdf' })).body.documentUrl;
    const notUploaded = await call(sb, 'PATCH', `${P}/${created.body.id}/documents`, { body: { documents: [issuedNotUploaded] } });
    expect(notUploaded.body.errors[0].message).toContain('PUT the file');
    expect((await call(sb, 'GET', `${P}/${created.body.id}`)).body.supportingDocuments).toEqual([]);
  });

  it('answers 404 PAYOUT_NOT_FOUND for another business payout and INVALID_PAYOUT_STATUS after a final status', async () => {
    const created = await initiate(sb, nipBody());
    const doc = await uploadDocument(sb, GLOBEX);
    const foreign = await call(sb, 'PATCH', `${P}/${created.body.id}/documents`, { key: GLOBEX, body: { documents: [doc] } });
    expect(foreign.status).toBe(404);
    expect(foreign.body.error).toBe('PAYOUT_NOT_FOUND');
    for (const status of ['PROCESSING', 'SUCCESSFUL'])
      expect((await setStatus(sb, 'payouts', created.body.id, { status })).status).toBe(200);
    const late = await call(sb, 'PATCH', `${P}/${created.body.id}/documents`, { body: { documents: [await uploadDocument(sb)] } });
    expect(late.status).toBe(400);
    expect(late.body.error).toBe('INVALID_PAYOUT_STATUS');
  });

  it('moves ADDITIONAL_INFO_REQUIRED (FILE requests) to PENDING under review when documents are attached', async () => {
    const created = await initiate(sb, nipBody());
    const asked = await setStatus(sb, 'payouts', created.body.id, { status: 'ADDITIONAL_INFO_REQUIRED', reason: 'Invoice needed' });
    expect(asked.body.informationRequests[0].type).toBe('FILE');
    const r = await call(sb, 'PATCH', `${P}/${created.body.id}/documents`, { body: { documents: [await uploadDocument(sb)] } });
    expect(r.status).toBe(200);
    const got = await call(sb, 'GET', `${P}/${created.body.id}`);
    expect(got.body).toMatchObject({ status: 'PENDING', statusDetail: 'ADDITIONAL_INFO_UNDER_REVIEW' });
    expect(got.body.informationRequests).toBeUndefined();

    // A TEXT request is not answered by a document: the status stays.
    const other = await initiate(sb, nipBody());
    await setStatus(sb, 'payouts', other.body.id, {
      status: 'ADDITIONAL_INFO_REQUIRED',
      informationRequests: [{ title: 'Purpose', type: 'TEXT' }],
    });
    await call(sb, 'PATCH', `${P}/${other.body.id}/documents`, { body: { documents: [await uploadDocument(sb)] } });
    expect((await call(sb, 'GET', `${P}/${other.body.id}`)).body.status).toBe('ADDITIONAL_INFO_REQUIRED');
  });
});
