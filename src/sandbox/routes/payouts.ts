// Spec §4.1-4.6: quote, initiate, get payout, list payouts, PATCH documents, and the uploads: upload-url, the PUT
// to object storage, the owner's GET (readings in ../storage.ts).
import * as z from 'zod';
import { isFinalStatus, MAX_DOCUMENTS_PER_PAYOUT } from '../../spec/codes.ts';
import { Beneficiary, DocumentsPatchRequest, InitiateRequest, QuoteRequest, UploadUrlRequest } from '../../spec/schemas.ts';
import { API_KEY_HEADER, PAYOUTS_PREFIX as P } from '../../spec/endpoints.ts';
import { newId, newRef } from '../ids.ts';
import { price, quoteView, refuseProhibited } from '../corridors.ts';
import { formatProblem, missingFields } from '../rules.ts';
import { creating, define, route, type Sandbox } from '../context.ts';
import { apiError, checkFields, fieldError, found, header, ok, parseWith, type Reply, type Request } from '../http.ts';
import { DOCUMENT_PATH, UPLOAD_PATH, filenameProblem } from '../storage.ts';
import type { PayoutRec } from '../store.ts';
import { pageOf, payoutListItem, payoutView } from '../views.ts';

/** The beneficiary taken as any object first: completeness (MISSING_REQUIRED_FIELDS) is checked before field types. */
const InitiateShape = InitiateRequest.extend({ beneficiary: z.record(z.string(), z.unknown()) });

/** Spec §4.2. Reading: 201 with the full payout; a replay 201 with the payout now and Idempotent-Replayed. */
function initiate(sb: Sandbox, req: Request, body: z.infer<typeof InitiateShape>): Reply {
  const business = req.business;
  const { total, ...pricing } = price(sb.store, business.id, body);

  const missing = missingFields(pricing.method, body.beneficiary);
  if (missing.length) {
    return apiError(
      400,
      'MISSING_REQUIRED_FIELDS',
      `The beneficiary lacks fields required by ${pricing.method}: ${missing.join(', ')}`,
      missing.map((f) => ({ field: `beneficiary.${f}`, message: `required by ${pricing.method}` })),
    );
  }
  const beneficiary = parseWith(Beneficiary, body.beneficiary, 'beneficiary');
  // Reading: the beneficiary's account is in the currency it receives.
  const currency = body.destinationCurrency;
  checkFields({
    // the formats the methods route advertises (iban, bic, ..., alpha-3 countries, else "irn" would pass the check below)
    ...Object.fromEntries(Object.entries(beneficiary).map(([f, v]) => [`beneficiary.${f}`, formatProblem(f, v)])),
    'beneficiary.accountCurrency': beneficiary.accountCurrency === currency ? undefined : `must be the destinationCurrency ${currency}`,
  });
  // Spec §2 Beneficiary: its country (countryCode, SWIFT's beneficiaryCountry), when given, may not be prohibited either.
  for (const c of [beneficiary.countryCode, beneficiary.beneficiaryCountry]) if (c) refuseProhibited(sb.store, c);

  const document = body.supportingDocument ? sb.storage.resolve(body.supportingDocument, business.id) : undefined;
  if (typeof document === 'string') return fieldError('supportingDocument', `${body.supportingDocument} ${document}`);

  // Spec §4.2 rule 4. Reading: a business without a wallet in the source currency has a balance of 0.
  const wallet = sb.store.walletIn(business.id, body.sourceCurrency);
  if (!wallet || wallet.balance.lessThan(total)) {
    return apiError(
      400,
      'INSUFFICIENT_FUNDS',
      `The ${body.sourceCurrency} wallet holds ${wallet ? wallet.balance.toFixed() : '0'}; this payout needs ${total.toFixed()} (amount plus fee)`,
    );
  }

  const now = sb.clock.iso();
  const p: PayoutRec = {
    id: newId(),
    payoutRef: newRef('PO', now),
    businessId: business.id,
    sourceCurrency: body.sourceCurrency,
    destinationCurrency: body.destinationCurrency,
    ...pricing,
    status: 'PENDING',
    documents: document ? [document] : [],
    createdAt: now,
    updatedAt: now,
  };
  // Written before anything changes: a payout it cannot answer (toApi) must not exist behind an unbound key.
  const answer = payoutView(p);
  sb.store.payouts.set(p.id, p);
  // Spec §3: one DEBIT of amount plus fee, referencing the payoutRef.
  sb.store.move(wallet, total.negated(), p.payoutRef, body.narration, {
    kind: 'payout',
    payoutId: p.id,
    sourceAmount: pricing.sourceAmount.toFixed(),
    fee: pricing.fee.toFixed(),
  });
  sb.lifecycle.scheduleNext(p);
  return { status: 201, body: answer, created: p.id };
}

const payoutOf = (sb: Sandbox, req: Request): PayoutRec =>
  found(sb.store.payouts, req.params.id, 'PAYOUT_NOT_FOUND', 'Payout', req.business.id);

/**
 * Spec §4.5. Checks in order: body, payout (404), status, each URL (issued to this business, uploaded),
 * the total without duplicates. Reading: documents answering all-FILE information requests move the
 * payout to PENDING under review (spec §3).
 */
function patchDocuments(sb: Sandbox, req: Request, body: DocumentsPatchRequest): Reply {
  const p = payoutOf(sb, req);
  if (isFinalStatus(p.status)) {
    return apiError(
      400,
      'INVALID_PAYOUT_STATUS',
      `Documents cannot be added to a ${p.status} payout; only while PENDING, ADDITIONAL_INFO_REQUIRED or PROCESSING`,
    );
  }
  const problems: Record<string, string | undefined> = {};
  const fresh: PayoutRec['documents'] = [];
  body.documents.forEach((url, i) => {
    const file = sb.storage.resolve(url, req.business.id);
    if (typeof file === 'string') problems[`documents.${i}`] = `${url} ${file}`;
    else if (![...p.documents, ...fresh].some((d) => d.url === url)) fresh.push(file);
  });
  checkFields(problems);
  if (p.documents.length + fresh.length > MAX_DOCUMENTS_PER_PAYOUT) {
    return apiError(
      400,
      'MAX_DOCUMENTS_EXCEEDED',
      `A payout holds at most ${MAX_DOCUMENTS_PER_PAYOUT} documents; it has ${p.documents.length} and ${fresh.length} new would make ${p.documents.length + fresh.length}`,
    );
  }
  p.documents.push(...fresh);
  if (fresh.length) p.updatedAt = sb.clock.iso();
  if (fresh.length && p.status === 'ADDITIONAL_INFO_REQUIRED' && (p.informationRequests ?? []).every((r) => r.type === 'FILE')) {
    sb.lifecycle.changePayout(p, 'PENDING', { reason: 'Additional information submitted', changedBy: 'business' });
  }
  return ok({ payoutId: p.id, totalDocuments: p.documents.length, documents: p.documents.map((d) => ({ ...d })) });
}

export const PAYOUT_ROUTES = [
  route('quote', 'POST', `${P}/quote`, QuoteRequest, (sb, req, body) => ok(quoteView(price(sb.store, req.business.id, body), body))),
  creating('initiate', `${P}/initiate`, InitiateShape, (sb, id) => payoutView(sb.store.payouts.get(id)!), initiate),
  route('getPayout', 'GET', `${P}/:id`, null, (sb, req) => ok(payoutView(payoutOf(sb, req)))),
  route('listPayouts', 'GET', P, null, (sb, req) => ok(pageOf(sb.store.payouts.values(), req, payoutListItem))),
  route('patchDocuments', 'PATCH', `${P}/:id/documents`, DocumentsPatchRequest, patchDocuments),
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
