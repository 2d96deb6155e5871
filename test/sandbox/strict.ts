// The strict reading's answers (src/sandbox/README.md, "Readings of the spec"), as zod shapes the
// sandbox's tests parse its answers with: amounts as JSON numbers, the fields the sandbox's views
// (src/sandbox/views.ts, corridors.ts) write. Written apart from those views, so that a view that
// drifts from the reading fails here rather than agreeing with itself.
import { z } from 'zod';
import { PayoutStatus, StatusDetail, SwapStatus } from '../../src/spec/codes.ts';
import { InformationRequest, MethodsQuery } from '../../src/spec/schemas.ts';

const isoDate = z.string().min(1);
const uuid = z.string().min(1);

/** Spec §4.4 list envelope meta. */
export const PageMeta = z.object({
  total: z.number().int(),
  page: z.number().int(),
  limit: z.number().int(),
  size: z.number().int(),
});

export const SupportingDocument = z.object({ id: uuid, url: z.string(), uploadedAt: isoDate });

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

/** Spec §2: list items carry a subset (no statusDetail, informationRequests, updatedAt or documents). */
export const PayoutListItem = Payout.omit({ statusDetail: true, informationRequests: true, updatedAt: true, supportingDocuments: true });

const pageOf = <T extends z.ZodTypeAny>(item: T) => z.object({ data: z.array(item), meta: PageMeta });
export const PayoutList = pageOf(PayoutListItem);

export const DocumentsPatchResponse = z.object({
  payoutId: uuid,
  totalDocuments: z.number().int(),
  documents: z.array(SupportingDocument),
});

export const UploadUrl = z.object({
  uploadUrl: z.string(),
  documentUrl: z.string(),
  headers: z.record(z.string(), z.string()),
});

/** Spec §2 swap: list items have a payout list item's fields, with the swap's statuses and method SWAP. */
export const SwapListItem = PayoutListItem.extend({ status: SwapStatus, method: z.literal('SWAP') });
/** Spec §2 swap, as created: its business and wallets besides. */
export const SwapCreated = SwapListItem.extend({ businessId: z.string(), sourceWalletId: uuid, destinationWalletId: uuid });
export const Swap = SwapListItem.extend({ updatedAt: isoDate, supportingDocuments: z.array(SupportingDocument) });
export const SwapList = pageOf(SwapListItem);

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
/** "Pairs response envelope: not shown": our reading is {data: [pair]}, like wallets. */
export const PairList = z.object({ data: z.array(CurrencyPair) });

export const FieldDescriptor = z.object({
  name: z.string(),
  type: z.enum(['string', 'email', 'phone', 'number']),
  required: z.boolean(),
  validation: z.string().optional(),
});
/** A group: one of the listed field groups must be given (spec §2 Payment method). */
export const FieldGroup = z.object({
  name: z.string(),
  required: z.boolean(),
  oneOf: z.array(z.array(FieldDescriptor)),
});

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

export const MethodsResponse = z.object({
  corridor: MethodsQuery,
  rate: z.object({ rate: z.number() }),
  methods: z.array(PaymentMethod),
});

/** "Other wallet fields: not shown": we add balance (number, in the wallet's currency). */
export const Wallet = z.object({ walletId: uuid, currency: z.string(), balance: z.number() });
export const WalletList = z.object({ data: z.array(Wallet) });

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

const publicEnvelope = <T extends z.ZodTypeAny>(item: T) =>
  z.object({ statusCode: z.number().int(), message: z.string(), data: z.array(item), meta: PageMeta });

export const CountryList = publicEnvelope(Country);

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
export const TransactionList = publicEnvelope(WalletTransaction);

/** "Fields of the stored record as returned: not shown": the secret is never returned. */
export const WebhookSubscription = z.object({
  id: uuid,
  url: z.string(),
  eventTypes: z.array(z.string()),
  hasSecret: z.boolean(),
  createdAt: isoDate,
  updatedAt: isoDate,
});

export const PayoutStatusChangedEvent = z.object({
  eventType: z.enum(['payout.status.changed', 'payout.status.changed.v1']),
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
