// One zod schema per shape of the spec (§2, §4, §6, §7). Types are inferred from these, so the
// schema is the single source of truth: the sandbox validates requests with them and the client
// validates responses with them. Where the spec says "not shown", the reading is written beside.
import { z } from 'zod';
import { DocumentContentType, PayoutStatus, StatusDetail, SwapStatus } from './codes.ts';
import { Beneficiary, currency } from './beneficiary.ts';

export { Beneficiary };

const country = z.string().regex(/^[A-Z]{3}$/, 'an ISO 3166-1 alpha-3 code of 3 capital letters');
const positiveAmount = z.number().positive().finite();
const isoDate = z.string().min(1);
const uuid = z.string().min(1);
const httpsUrl = z
  .string()
  .url()
  .refine((u) => /^https?:\/\//.test(u), 'an http(s) URL');

// ---------------------------------------------------------------- errors (§7)

/**
 * Spec §7: {statusCode, message, error}. "Field errors when the body carries them": our reading
 * is an optional `errors` array of {field, message} on VALIDATION_ERROR and
 * MISSING_REQUIRED_FIELDS bodies; real NestJS-style services may send message as a string array,
 * which the schema also admits.
 */
export const ErrorBody = z.object({
  statusCode: z.number().int(),
  message: z.union([z.string(), z.array(z.string())]),
  error: z.string().optional(),
  errors: z.array(z.object({ field: z.string(), message: z.string() })).optional(),
});
export type ErrorBody = z.infer<typeof ErrorBody>;

// ---------------------------------------------------------------- shared pieces

/** Spec §4.4 list envelope meta. */
export const PageMeta = z.object({
  total: z.number().int(),
  page: z.number().int(),
  limit: z.number().int(),
  size: z.number().int(),
});
export type PageMeta = z.infer<typeof PageMeta>;

export const SupportingDocument = z.object({ id: uuid, url: z.string(), uploadedAt: isoDate });
export type SupportingDocument = z.infer<typeof SupportingDocument>;

export const InformationRequest = z.object({
  title: z.string(),
  description: z.string().optional(),
  type: z.enum(['TEXT', 'SELECT', 'FILE']),
  section: z.string().optional(),
  options: z.array(z.string()).optional(),
  rejectionReason: z.string().optional(),
});
export type InformationRequest = z.infer<typeof InformationRequest>;

// ---------------------------------------------------------------- quote (§4.1)

export const QuoteRequest = z.object({
  sourceAmount: positiveAmount,
  sourceCurrency: currency,
  destinationCurrency: currency,
  destinationCountryCode: country,
  method: z.string().min(1),
});
export type QuoteRequest = z.infer<typeof QuoteRequest>;

export const Quote = z.object({
  sourceAmount: z.number(),
  sourceCurrency: z.string(),
  destinationAmount: z.number(),
  destinationCurrency: z.string(),
  totalDeductible: z.number(),
  exchangeRate: z.number(),
  method: z.string(),
  fee: z.object({ amount: z.number(), currency: z.string() }),
});
export type Quote = z.infer<typeof Quote>;

// ---------------------------------------------------------------- initiate (§4.2)

/**
 * Spec §4.2 body: the quote's fields (§4.1), then these. narration is listed without "optional" while supportingDocument and
 * remitterAddress are marked optional: our reading is that narration is required. Bounds are
 * "not shown"; we take 1..140 characters for narration, the common bank-transfer limit.
 */
export const InitiateRequest = QuoteRequest.extend({
  beneficiary: Beneficiary,
  narration: z.string().min(1).max(140),
  supportingDocument: httpsUrl.optional(),
  remitterAddress: z.string().optional(),
});
export type InitiateRequest = z.infer<typeof InitiateRequest>;

/** Spec §2 Payout, as returned by get-payout. Our reading: initiate returns the same shape. */
export const Payout = z.object({
  id: uuid,
  payoutRef: z.string(),
  sourceAmount: z.number(),
  sourceCurrency: z.string(),
  destinationAmount: z.number(),
  destinationCurrency: z.string(),
  status: PayoutStatus,
  statusDetail: StatusDetail.optional(),
  informationRequests: z.array(InformationRequest).optional(),
  method: z.string(),
  transactionFees: z.number(),
  exchangeRate: z.number(),
  createdAt: isoDate,
  updatedAt: isoDate,
  supportingDocuments: z.array(SupportingDocument),
});
export type Payout = z.infer<typeof Payout>;

/** Spec §2: list items carry a subset (no statusDetail, informationRequests, updatedAt or documents). */
export const PayoutListItem = Payout.omit({ statusDetail: true, informationRequests: true, updatedAt: true, supportingDocuments: true });
export type PayoutListItem = z.infer<typeof PayoutListItem>;

const pageOf = <T extends z.ZodTypeAny>(item: T) => z.object({ data: z.array(item), meta: PageMeta });
export const PayoutList = pageOf(PayoutListItem);
export type PayoutList = z.infer<typeof PayoutList>;

// ---------------------------------------------------------------- documents (§4.5, §4.6)

export const DocumentsPatchRequest = z.object({ documents: z.array(httpsUrl).min(1) });
export type DocumentsPatchRequest = z.infer<typeof DocumentsPatchRequest>;

export const DocumentsPatchResponse = z.object({
  payoutId: uuid,
  totalDocuments: z.number().int(),
  documents: z.array(SupportingDocument),
});
export type DocumentsPatchResponse = z.infer<typeof DocumentsPatchResponse>;

export const UploadUrlRequest = z.object({
  filename: z
    .string()
    .min(1)
    .max(255)
    // eslint-disable-next-line no-control-regex -- a NUL in a file name is exactly what is refused
    .refine((f) => !/[\\/\u0000]/.test(f), 'a file name without path separators'),
  contentType: DocumentContentType,
});
export type UploadUrlRequest = z.infer<typeof UploadUrlRequest>;

export const UploadUrl = z.object({
  uploadUrl: z.string(),
  documentUrl: z.string(),
  headers: z.record(z.string(), z.string()),
});
export type UploadUrl = z.infer<typeof UploadUrl>;

// ---------------------------------------------------------------- swaps (§4.7, §4.8)

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

/** Spec §2 swap: list items have a payout list item's fields, with the swap's statuses and method SWAP. */
export const SwapListItem = PayoutListItem.extend({ status: SwapStatus, method: z.literal('SWAP') });
export type SwapListItem = z.infer<typeof SwapListItem>;
/** Spec §2 swap, as created: its business and wallets besides. */
export const SwapCreated = SwapListItem.extend({ businessId: z.string(), sourceWalletId: uuid, destinationWalletId: uuid });
export type SwapCreated = z.infer<typeof SwapCreated>;
export const Swap = SwapListItem.extend({ updatedAt: isoDate, supportingDocuments: z.array(SupportingDocument) });
export type Swap = z.infer<typeof Swap>;
export const SwapList = pageOf(SwapListItem);
export type SwapList = z.infer<typeof SwapList>;

// ---------------------------------------------------------------- pairs, methods, wallets (§4.9-4.12)

/**
 * Spec §2 Currency pair: baseCurrency, quoteCurrency, rate, currencyPairId. "Other pair fields:
 * not shown": we add `enabled`. A rate converts one unit of baseCurrency into quoteCurrency.
 */
export const CurrencyPair = z.object({
  currencyPairId: uuid,
  baseCurrency: z.string(),
  quoteCurrency: z.string(),
  rate: z.number(),
  enabled: z.boolean(),
});
export type CurrencyPair = z.infer<typeof CurrencyPair>;
/** "Pairs response envelope: not shown": our reading is {data: [pair]}, like wallets. */
export const PairList = z.object({ data: z.array(CurrencyPair) });
export type PairList = z.infer<typeof PairList>;

/** "Request body and response of this route: not shown": {enabled} sets, an empty body flips. */
export const ToggleRequest = z.object({ enabled: z.boolean().optional() });
export type ToggleRequest = z.infer<typeof ToggleRequest>;

export const FieldDescriptor = z.object({
  name: z.string(),
  type: z.enum(['string', 'email', 'phone', 'number']),
  required: z.boolean(),
  validation: z.string().optional(),
});
export type FieldDescriptor = z.infer<typeof FieldDescriptor>;
/** A group: one of the listed field groups must be given (spec §2 Payment method). */
export const FieldGroup = z.object({
  name: z.string(),
  required: z.boolean(),
  oneOf: z.array(z.array(FieldDescriptor)),
});
export type FieldGroup = z.infer<typeof FieldGroup>;

/** "Exact shape of the fee and settlement values: not shown": fee {currency, amount, bands?}. */
export const MethodFee = z.object({
  currency: z.string(),
  amount: z.number(),
  bands: z.array(z.object({ below: z.number().nullable(), amount: z.number() })).optional(),
});
export const PaymentMethod = z.object({
  code: z.string(),
  name: z.string(),
  settlement: z.string(),
  fee: MethodFee,
  requiredFields: z.array(z.union([FieldDescriptor, FieldGroup])),
  optionalFields: z.array(FieldDescriptor),
});
export type PaymentMethod = z.infer<typeof PaymentMethod>;

/** Spec §4.11 query: the quote's corridor fields. */
export const MethodsQuery = QuoteRequest.pick({ sourceCurrency: true, destinationCurrency: true, destinationCountryCode: true });
export type MethodsQuery = z.infer<typeof MethodsQuery>;

export const MethodsResponse = z.object({
  corridor: MethodsQuery,
  rate: z.object({ rate: z.number() }),
  methods: z.array(PaymentMethod),
});
export type MethodsResponse = z.infer<typeof MethodsResponse>;

/** "Other wallet fields: not shown": we add balance (number, in the wallet's currency). */
export const Wallet = z.object({ walletId: uuid, currency: z.string(), balance: z.number() });
export type Wallet = z.infer<typeof Wallet>;
export const WalletList = z.object({ data: z.array(Wallet) });
export type WalletList = z.infer<typeof WalletList>;

// ---------------------------------------------------------------- public routes (§4.14, §4.15)

export const Country = z.object({
  id: z.union([z.string(), z.number()]),
  name: z.string(),
  code: z.string(),
  currencyCode: z.string(),
  score: z.number().nullable(),
  payoutCurrencies: z.array(z.object({ code: z.string(), name: z.string() })),
  tradingStartTime: z.string(),
  tradingEndTime: z.string(),
  timeZone: z.number(),
  cpi: z.number().nullable(),
  gdpPerCapitaInUsd: z.number().nullable(),
  globalRating: z.string().nullable(),
  isProhibited: z.boolean(),
  henleyPassportIndex: z.number().nullable(),
  createdAt: isoDate,
  updatedAt: isoDate,
  deletedAt: isoDate.nullable(),
});
export type Country = z.infer<typeof Country>;

const publicEnvelope = <T extends z.ZodTypeAny>(item: T) =>
  z.object({ statusCode: z.number().int(), message: z.string(), data: z.array(item), meta: PageMeta });

export const CountryList = publicEnvelope(Country);
export type CountryList = z.infer<typeof CountryList>;

/** "Item fields of data beyond these: not shown": id, type, amount, currency, wallet, ... */
export const WalletTransaction = z.object({
  id: uuid,
  type: z.enum(['DEBIT', 'CREDIT']),
  amount: z.number(),
  currency: z.string(),
  wallet: z.object({ walletId: uuid, currency: z.string() }),
  balanceBefore: z.number(),
  balanceAfter: z.number(),
  reference: z.string(),
  metadata: z.record(z.string(), z.unknown()),
  createdAt: isoDate,
});
export type WalletTransaction = z.infer<typeof WalletTransaction>;
export const TransactionList = publicEnvelope(WalletTransaction);
export type TransactionList = z.infer<typeof TransactionList>;

// ---------------------------------------------------------------- webhooks (§4.13, §6)

export const WebhookEventType = z.enum(['payout.status.changed', 'payout.status.changed.v1']);
export const WebhookRegisterRequest = z.object({
  url: z
    .string()
    .url()
    .refine((u) => u.startsWith('https://'), 'an HTTPS URL'),
  secret: z.string().min(1).optional(),
  eventTypes: z.array(WebhookEventType).optional(),
});
export type WebhookRegisterRequest = z.infer<typeof WebhookRegisterRequest>;
/** "The PATCH body: not shown": url and/or secret (and eventTypes), each optional. */
export const WebhookUpdateRequest = WebhookRegisterRequest.partial();
export type WebhookUpdateRequest = z.infer<typeof WebhookUpdateRequest>;
/** "Fields of the stored record as returned: not shown": the secret is never returned. */
export const WebhookSubscription = z.object({
  id: uuid,
  url: z.string(),
  eventTypes: z.array(z.string()),
  hasSecret: z.boolean(),
  createdAt: isoDate,
  updatedAt: isoDate,
});
export type WebhookSubscription = z.infer<typeof WebhookSubscription>;

export const PayoutStatusChangedEvent = z.object({
  eventType: WebhookEventType,
  deliveryId: uuid,
  occurredAt: isoDate,
  data: z.object({
    payoutId: z.string(),
    businessId: z.string(),
    oldStatus: PayoutStatus,
    newStatus: PayoutStatus,
    newStatusDetail: StatusDetail.optional(),
    oldStatusDetail: StatusDetail.optional(),
    informationRequests: z.array(InformationRequest).optional(),
    changedAt: isoDate,
    reason: z.string().optional(),
    changedBy: z.string().optional(),
  }),
});
export type PayoutStatusChangedEvent = z.infer<typeof PayoutStatusChangedEvent>;

export const WalletEvent = z.object({
  eventType: z.enum(['wallet.credited', 'wallet.debited']),
  deliveryId: uuid,
  occurredAt: isoDate,
  data: z.object({
    businessId: z.string(),
    amount: z.number().nonnegative(),
    currency: z.string(),
    transactionId: z.string(),
    createdAt: isoDate,
    transactionType: z.enum(['cr', 'dr']),
    reference: z.string(),
    narration: z.string(),
    balance: z.number().optional(),
    totalBalance: z.number().optional(),
  }),
});
export type WalletEvent = z.infer<typeof WalletEvent>;

export const WebhookEvent = z.union([PayoutStatusChangedEvent, WalletEvent]);
export type WebhookEvent = z.infer<typeof WebhookEvent>;
