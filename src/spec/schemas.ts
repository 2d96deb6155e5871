// One zod schema per request body of the spec (§4) and the error body (§7), checked by the client
// before sending and by the sandbox on receipt. Answers are read elsewhere (client/answers.ts).
import * as z from 'zod';
import { DocumentContentType, PAYOUT_STATUS_EVENT, PAYOUT_STATUS_EVENT_LEGACY } from './codes.ts';

const currency = z.string().regex(/^[A-Z]{3}$/, 'an ISO 4217 code of 3 capital letters');

const optionalTexts = <K extends string>(...names: K[]) =>
  Object.fromEntries(names.map((n) => [n, z.string().optional()])) as Record<K, z.ZodOptional<z.ZodString>>;

/** Spec §2 Beneficiary. "Complete closed list of beneficiary fields: not shown": unknown fields are accepted (loose). */
export const Beneficiary = z.looseObject({
  accountName: z.string().min(1),
  accountCurrency: currency,
  ...optionalTexts('alipayId', 'openId', 'wechatUserId', 'iban', 'accountNumber', 'swiftCode', 'bankName'),
  ...optionalTexts('beneficiaryCountry', 'intermediarySwift', 'address', 'city', 'postCode', 'routingNumber'),
  accountType: z.enum(['checking', 'savings']).optional(),
  ...optionalTexts('bankCode', 'sortCode', 'fpsId', 'phoneNumber', 'email', 'countryCode'),
});
export type Beneficiary = z.infer<typeof Beneficiary>;

const country = z.string().regex(/^[A-Z]{3}$/, 'an ISO 3166-1 alpha-3 code of 3 capital letters');
const positiveAmount = z.number().positive().finite();
const uuid = z.string().min(1);
const httpsUrl = z
  .string()
  .url()
  .refine((u) => /^https?:\/\//.test(u), 'an http(s) URL');

/**
 * Spec §7: {statusCode, message, error}. "Field errors when the body carries them": an optional `errors`
 * of {field, message}; NestJS-style services may send message as a string array, admitted too.
 */
export const ErrorBody = z.object({
  statusCode: z.number().int(),
  message: z.union([z.string(), z.array(z.string())]),
  error: z.string().optional(),
  errors: z.array(z.object({ field: z.string(), message: z.string() })).optional(),
});
export type ErrorBody = z.infer<typeof ErrorBody>;
export type FieldError = NonNullable<ErrorBody['errors']>[number];

/** Spec §2 informationRequests item (§3 ADDITIONAL_INFO_REQUIRED). */
export const InformationRequest = z.object({
  title: z.string(),
  description: z.string().optional(),
  type: z.enum(['TEXT', 'SELECT', 'FILE']),
  section: z.string().optional(),
  options: z.array(z.string()).optional(),
  rejectionReason: z.string().optional(),
});
export type InformationRequest = z.infer<typeof InformationRequest>;

export const QuoteRequest = z.object({
  sourceAmount: positiveAmount,
  sourceCurrency: currency,
  destinationCurrency: currency,
  destinationCountryCode: country,
  method: z.string().min(1),
});
export type QuoteRequest = z.infer<typeof QuoteRequest>;

/** Spec §4.2: narration is not marked optional, so required; its bounds are "not shown": 1..140, the common bank-transfer limit. */
export const InitiateRequest = QuoteRequest.extend({
  beneficiary: Beneficiary,
  narration: z.string().min(1).max(140),
  supportingDocument: httpsUrl.optional(),
  remitterAddress: z.string().optional(),
});
export type InitiateRequest = z.infer<typeof InitiateRequest>;

export const DocumentsPatchRequest = z.object({ documents: z.array(httpsUrl).min(1) });
export type DocumentsPatchRequest = z.infer<typeof DocumentsPatchRequest>;

export const UploadUrlRequest = z.object({
  filename: z
    .string()
    .min(1)
    .max(255)
    .refine((f) => !/[\\/]/.test(f) && !f.includes('\0'), 'a file name without path separators'),
  contentType: DocumentContentType,
});
export type UploadUrlRequest = z.infer<typeof UploadUrlRequest>;

export const SwapRequest = z.strictObject({
  sourceWalletId: uuid,
  destinationWalletId: uuid,
  swapAmount: positiveAmount,
  swapCurrency: currency,
  amountToBeSent: positiveAmount,
  currencyToBeSent: currency,
  reference: z.string().min(1).optional(),
});
export type SwapRequest = z.infer<typeof SwapRequest>;

/** "Request body and response of this route: not shown": {enabled} sets, an empty body flips. */
export const ToggleRequest = z.object({ enabled: z.boolean().optional() });
export type ToggleRequest = z.infer<typeof ToggleRequest>;

export const MethodsQuery = QuoteRequest.pick({ sourceCurrency: true, destinationCurrency: true, destinationCountryCode: true });
export type MethodsQuery = z.infer<typeof MethodsQuery>;

/** This machine, as URL.hostname writes it (IPv4 dotted decimal, IPv6 in brackets): localhost, 127.0.0.0/8, ::1. */
export function isLoopbackHost(hostname: string): boolean {
  const h = hostname.toLowerCase().replace(/\.$/, '');
  return h === 'localhost' || h === '[::1]' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(h);
}

/** Spec §4.13: HTTPS; a listener on this machine has no TLS, so plain http only on a loopback host. */
export const WebhookRegisterRequest = z.object({
  // (zod runs the refinement even when z.url() failed: a text that is no URL is no HTTPS URL either)
  url: z.url().refine((u) => {
    const url = URL.canParse(u) ? new URL(u) : undefined;
    return url?.protocol === 'https:' || (url?.protocol === 'http:' && isLoopbackHost(url.hostname));
  }, 'an HTTPS URL (plain http only on this machine: localhost, 127.0.0.0/8, ::1)'),
  secret: z.string().min(1).optional(),
  eventTypes: z.array(z.enum([PAYOUT_STATUS_EVENT, PAYOUT_STATUS_EVENT_LEGACY])).optional(),
});
export type WebhookRegisterRequest = z.infer<typeof WebhookRegisterRequest>;
/** "The PATCH body: not shown": url and/or secret (and eventTypes), each optional. */
export const WebhookUpdateRequest = WebhookRegisterRequest.partial();
export type WebhookUpdateRequest = z.infer<typeof WebhookUpdateRequest>;
