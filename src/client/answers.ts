// What the client accepts from the service: one tolerant zod schema per answer, read liberally.
//
// Strict in what we send (src/spec/schemas.ts checks every request body), liberal in what we
// accept: a schema here requires only what the spec states about an answer and the tool uses;
// where the spec says "not shown", it takes the family of plausible shapes and turns them into one
// normalised value, so the engine reads one shape whatever the service sent. Unknown fields pass
// through; null means absent. The readings are listed per route in src/client/README.md, and
// test/contract/ holds bodies written by hand from the spec that every schema here must read.
import { z } from 'zod';
import { fromApi, type ApiAmount } from '../money.ts';
import { PAYOUT_STATUSES, type PayoutStatus } from '../spec/codes.ts';

// ---------------------------------------------------------------- pieces

export type { ApiAmount };

const DECIMAL = /^[+-]?\d+(\.\d+)?$/;
/** A JSON number, or a plain decimal string ("1000.00"); kept as given, so nothing is rounded. */
export const amount = z.union([
  z.number().finite(),
  z
    .string()
    .trim()
    .regex(DECIMAL, 'a decimal number')
    .transform((s) => s.replace(/^\+/, '')),
]);

/** Absent, null or the value: null is read as absent (`statusDetail: null`, `oldStatus: null`). */
const maybe = <T extends z.ZodType>(s: T) => s.nullish().transform((v): z.output<T> | undefined => v ?? undefined);

/** An identifier: a string, or a number written as one (countries' ids are numbers in some readings). */
const ident = z.union([z.string().min(1), z.number().transform(String)]);
const text = z.string();
const flag = z.union([z.boolean(), z.enum(['true', 'false']).transform((v) => v === 'true')]);
/** A count as a number or a numeric string. */
const count = z.union([z.number().int(), z.string().regex(/^\d+$/).transform(Number)]);

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Fields of a response envelope around the answer itself ({statusCode, message, data} and kin). */
const ENVELOPE_KEYS = new Set(['statusCode', 'status', 'success', 'message', 'meta', 'error', 'timestamp', 'path', 'requestId']);

/** An object answer, bare or inside an envelope whose `data` is the object. */
export function unwrapObject(v: unknown): unknown {
  if (isRecord(v) && isRecord(v.data) && Object.keys(v).every((k) => k === 'data' || ENVELOPE_KEYS.has(k))) return v.data;
  return v;
}

/** A list answer as {data: [...], meta?}: a bare array, {data: [...]}, or an envelope whose data is that. */
export function unwrapList(v: unknown): unknown {
  if (Array.isArray(v)) return { data: v };
  if (isRecord(v) && isRecord(v.data) && (Array.isArray(v.data.data) || Array.isArray(v.data.items))) return unwrapList(v.data);
  if (isRecord(v) && !Array.isArray(v.data) && Array.isArray(v.items)) return { ...v, data: v.items };
  return v;
}

/** Spec §4.4 meta, all of it optional: a page without meta ends the listing when it is short. */
const PageMeta = z.looseObject({ total: maybe(count), page: maybe(count), limit: maybe(count), size: maybe(count) });

const listOf = <T extends z.ZodType>(item: T) => z.preprocess(unwrapList, z.looseObject({ data: z.array(item), meta: maybe(PageMeta) }));
const objectOf = <T extends z.ZodType>(schema: T) => z.preprocess(unwrapObject, schema);

/** A status in the spec's words; other spellings of them ("pending") are read in capitals. */
const payoutStatus = z
  .string()
  .transform((s) => s.trim().toUpperCase())
  .pipe(z.enum(PAYOUT_STATUSES as unknown as [PayoutStatus, ...PayoutStatus[]]));

// ---------------------------------------------------------------- payouts (§2, §4.2-4.4)

/** Spec §2 informationRequests item: title and type are stated; the rest optional. */
export const InformationRequestAnswer = z.looseObject({
  title: text,
  type: z.string().transform((s) => s.toUpperCase()),
  description: maybe(text),
  section: maybe(text),
  options: maybe(z.array(text)),
  rejectionReason: maybe(text),
});
export type InformationRequestAnswer = z.output<typeof InformationRequestAnswer>;

const SupportingDocumentAnswer = z.union([
  z.looseObject({ id: maybe(ident), url: maybe(text), uploadedAt: maybe(text) }),
  z.string().transform((url): { id?: string; url?: string; uploadedAt?: string } => ({ url })),
]);

/**
 * A payout, as get-payout, the list and initiate give it. Only `id` and `status` are required: the
 * spec promises more on initiate (payoutRef, sourceAmount, destinationAmount, exchangeRate) but an
 * answer that carries an id and a status means the payout exists, and the engine must record it as
 * created whatever else is missing (what is missing is asked for with get-payout).
 */
export const PayoutAnswer = objectOf(
  z.looseObject({
    id: ident,
    status: payoutStatus,
    payoutRef: maybe(text),
    sourceAmount: maybe(amount),
    sourceCurrency: maybe(text),
    destinationAmount: maybe(amount),
    destinationCurrency: maybe(text),
    statusDetail: maybe(text),
    informationRequests: maybe(z.array(InformationRequestAnswer)),
    method: maybe(text),
    transactionFees: maybe(amount),
    exchangeRate: maybe(amount),
    createdAt: maybe(text),
    updatedAt: maybe(text),
    supportingDocuments: maybe(z.array(SupportingDocumentAnswer)),
  }),
);
export type PayoutAnswer = z.output<typeof PayoutAnswer>;

export const PayoutListAnswer = listOf(PayoutAnswer);
export type PayoutListAnswer = z.output<typeof PayoutListAnswer>;

// ---------------------------------------------------------------- quote (§4.1)

/** fee {amount, currency} as stated, or a bare amount. */
const QuoteFee = z.union([
  amount.transform((a): { amount: ApiAmount; currency?: string } => ({ amount: a })),
  z.looseObject({ amount, currency: maybe(text) }),
]);

/**
 * Spec §4.1 states every field; the engine uses destinationAmount, totalDeductible, the fee and the
 * rate. The destination amount is required (it is what the beneficiary receives); a missing fee or
 * total is worked out from the other and sourceAmount when both are there, else left unknown.
 */
export const QuoteAnswer = objectOf(
  z
    .looseObject({
      sourceAmount: maybe(amount),
      sourceCurrency: maybe(text),
      destinationAmount: amount,
      destinationCurrency: maybe(text),
      totalDeductible: maybe(amount),
      exchangeRate: maybe(amount),
      method: maybe(text),
      fee: maybe(QuoteFee),
    })
    .transform((q) => {
      // totalDeductible = sourceAmount + fee.amount (spec §4.1): one missing is the other's difference
      if (q.sourceAmount === undefined) return q;
      const source = fromApi(q.sourceAmount);
      if (!q.fee && q.totalDeductible !== undefined) return { ...q, fee: { amount: fromApi(q.totalDeductible).minus(source).toFixed() } };
      if (q.fee && q.totalDeductible === undefined) return { ...q, totalDeductible: source.plus(fromApi(q.fee.amount)).toFixed() };
      return q;
    }),
);
export type QuoteAnswer = z.output<typeof QuoteAnswer>;

// ---------------------------------------------------------------- documents (§4.5, §4.6)

/** Spec §4.5: payoutId, totalDocuments, documents; the tool uses none of them, so all optional. */
export const DocumentsPatchAnswer = objectOf(
  z.looseObject({
    payoutId: maybe(ident),
    totalDocuments: maybe(count),
    documents: maybe(z.array(SupportingDocumentAnswer)),
  }),
);
export type DocumentsPatchAnswer = z.output<typeof DocumentsPatchAnswer>;

/** Spec §4.6: uploadUrl and documentUrl are what the tool needs; headers may be absent (none to send). */
export const UploadUrlAnswer = objectOf(
  z.looseObject({
    uploadUrl: z.string().min(1),
    documentUrl: z.string().min(1),
    headers: maybe(z.record(z.string(), z.union([z.string(), z.number(), z.boolean()]).transform(String))).transform((h) => h ?? {}),
  }),
);
export type UploadUrlAnswer = z.output<typeof UploadUrlAnswer>;

// ---------------------------------------------------------------- swaps (§4.7, §4.8)

const swapStatus = z.string().transform((s) => s.trim().toUpperCase());

/** A swap: id and status required, like a payout; amounts as numbers or decimal strings. */
export const SwapAnswer = objectOf(
  z.looseObject({
    id: ident,
    status: swapStatus,
    payoutRef: maybe(text),
    businessId: maybe(text),
    sourceWalletId: maybe(ident),
    destinationWalletId: maybe(ident),
    sourceAmount: maybe(amount),
    sourceCurrency: maybe(text),
    destinationAmount: maybe(amount),
    destinationCurrency: maybe(text),
    exchangeRate: maybe(amount),
    transactionFees: maybe(amount),
    method: maybe(text),
    createdAt: maybe(text),
    updatedAt: maybe(text),
    supportingDocuments: maybe(z.array(SupportingDocumentAnswer)),
  }),
);
export type SwapAnswer = z.output<typeof SwapAnswer>;
export const SwapListAnswer = listOf(SwapAnswer);
export type SwapListAnswer = z.output<typeof SwapListAnswer>;

// ---------------------------------------------------------------- pairs (§4.9, §4.10)

/**
 * Spec §2 Currency pair: baseCurrency, quoteCurrency, rate, and an identifier currencyPairId
 * ("other pair fields: not shown"). Read as well: `id` or `pairId` for the identifier, `enabled` /
 * `isEnabled` / `status` for whether it is on. The pairs route lists enabled pairs only (§4.9), so
 * a listed pair without such a field is taken as enabled.
 */
export const CurrencyPairAnswer = z
  .looseObject({
    currencyPairId: maybe(ident),
    id: maybe(ident),
    pairId: maybe(ident),
    baseCurrency: text,
    quoteCurrency: text,
    rate: maybe(amount),
    enabled: maybe(flag),
    isEnabled: maybe(flag),
    status: maybe(text),
  })
  .transform(({ currencyPairId, id, pairId, enabled, isEnabled, status, ...rest }) => ({
    ...rest,
    currencyPairId: currencyPairId ?? id ?? pairId,
    enabled: enabled ?? isEnabled ?? (status === undefined ? undefined : /^(active|enabled|on)$/i.test(status)),
  }));
export type CurrencyPairAnswer = z.output<typeof CurrencyPairAnswer>;
export const PairListAnswer = listOf(CurrencyPairAnswer);
export type PairListAnswer = z.output<typeof PairListAnswer>;

/**
 * "Request body and response of this route: not shown" (spec §4.10): any 2xx answer is accepted;
 * when it shows the pair's state (`enabled`, `isEnabled` or `status`), that is read.
 */
export const ToggleAnswer = z.unknown().transform((v): { enabled?: boolean } => {
  const pair = z.looseObject({ enabled: maybe(flag), isEnabled: maybe(flag), status: maybe(text) }).safeParse(unwrapObject(v));
  if (!pair.success) return {};
  const { enabled, isEnabled, status } = pair.data;
  const on = enabled ?? isEnabled ?? (status === undefined ? undefined : /^(active|enabled|on)$/i.test(status));
  return on === undefined ? {} : { enabled: on };
});
export type ToggleAnswer = z.output<typeof ToggleAnswer>;

// ---------------------------------------------------------------- methods (§2 Payment method, §4.11)

/** A required or optional field of a method, normalised: a name, and its type and validation when given. */
export interface FieldRule {
  name: string;
  type?: string;
  validation?: string;
  /** false only when the service says so of a field listed among the required ones. */
  required?: boolean;
}
/** One of the listed groups must be given in full (spec §2: WECHAT openId or wechatUserId). */
export interface FieldGroupRule {
  name?: string;
  required?: boolean;
  oneOf: FieldRule[][];
}
export type RequiredField = FieldRule | FieldGroupRule;

const FieldDescriptorAnswer = z.union([
  z.string().transform((name): FieldRule => ({ name })),
  z
    .looseObject({
      name: maybe(text),
      field: maybe(text),
      key: maybe(text),
      type: maybe(text),
      validation: maybe(text),
      required: maybe(flag),
    })
    .refine((d) => !!(d.name ?? d.field ?? d.key), 'a field name')
    .transform((d): FieldRule => ({ name: (d.name ?? d.field ?? d.key)!, type: d.type, validation: d.validation, required: d.required })),
]);
const FieldGroupAnswer = z
  .looseObject({
    name: maybe(text),
    required: maybe(flag),
    oneOf: z.array(z.union([z.array(FieldDescriptorAnswer), FieldDescriptorAnswer.transform((d) => [d])])),
  })
  .transform((g): FieldGroupRule => ({ name: g.name, required: g.required, oneOf: g.oneOf }));
const FieldListAnswer = z.array(z.union([FieldGroupAnswer, FieldDescriptorAnswer]));

/**
 * A method's fee, normalised ("exact shape of the fee: not shown", spec §4.11): a flat amount, or
 * tiers by source amount. The spec's table (§1.9) has flat fees and SWIFT's bands (50 under 2k, 40
 * from 2k to under 10k, 0 from 10k), so these are the shapes read; anything else is `unknown`, and
 * the plan says the fee is not known before sending.
 */
export type MethodFee =
  | { kind: 'flat'; amount: ApiAmount; currency?: string }
  | { kind: 'tiered'; currency?: string; tiers: { from?: ApiAmount; below?: ApiAmount; upTo?: ApiAmount; amount: ApiAmount }[] }
  | { kind: 'unknown' };

const UNKNOWN_FEE: MethodFee = { kind: 'unknown' };

const Band = z.looseObject({ below: maybe(amount), amount });
const Tier = z.looseObject({
  min: maybe(amount),
  max: maybe(amount),
  from: maybe(amount),
  to: maybe(amount),
  amount: maybe(amount),
  fee: maybe(amount),
});
const MethodFeeAnswer = z.union([
  amount.transform((a): MethodFee => ({ kind: 'flat', amount: a })),
  z
    .looseObject({ currency: maybe(text), amount: maybe(amount), bands: z.array(Band).min(1) })
    .transform((f): MethodFee => ({
      kind: 'tiered',
      currency: f.currency,
      tiers: f.bands.map((b) => ({ below: b.below, amount: b.amount })),
    })),
  z
    .looseObject({ currency: maybe(text), tiers: z.array(Tier).min(1) })
    .refine((f) => f.tiers.every((t) => (t.amount ?? t.fee) !== undefined), 'an amount per tier')
    .transform((f): MethodFee => ({
      kind: 'tiered',
      currency: f.currency,
      tiers: f.tiers.map((t) => ({ from: t.min ?? t.from, upTo: t.max ?? t.to, amount: (t.amount ?? t.fee)! })),
    })),
  z.looseObject({ amount, currency: maybe(text) }).transform((f): MethodFee => ({ kind: 'flat', amount: f.amount, currency: f.currency })),
]);

/** Reads `v` with `schema`; what does not fit is `fallback` (recorded as unreadable, not an error). */
const orElse = <T extends z.ZodType, F>(schema: T, fallback: F) =>
  z.unknown().transform((v): z.output<T> | F => {
    if (v === undefined || v === null) return fallback;
    const r = schema.safeParse(v);
    return r.success ? r.data : fallback;
  });

/** Settlement "not shown": a string, or an object whose description (or hours) is shown as text. */
const SettlementAnswer = z.unknown().transform((v): string | undefined => {
  if (typeof v === 'string') return v;
  if (typeof v === 'number') return `${v}`;
  if (!isRecord(v)) return undefined;
  for (const k of ['description', 'text', 'label', 'value']) if (typeof v[k] === 'string') return v[k];
  const hours = (x: unknown) => (typeof x === 'number' || typeof x === 'string' ? String(x) : undefined);
  const lo = hours(v.minHours ?? v.min);
  const hi = hours(v.maxHours ?? v.max);
  if (lo !== undefined || hi !== undefined) return `${lo ?? '?'} to ${hi ?? '?'} hours`;
  return JSON.stringify(v);
});

/**
 * A payment method (spec §2): code, name, settlement, fee, requiredFields, optionalFields. Only the
 * code is required (it is what a row names). A fee or a field list the client cannot read is kept
 * as `{kind: 'unknown'}` / undefined, so one odd method does not stop a whole corridor.
 */
export const PaymentMethodAnswer = z
  .looseObject({
    code: maybe(text),
    method: maybe(text),
    name: maybe(text),
    settlement: SettlementAnswer,
    fee: orElse(MethodFeeAnswer, UNKNOWN_FEE),
    requiredFields: orElse(FieldListAnswer, undefined),
    optionalFields: orElse(FieldListAnswer, undefined),
  })
  .refine((m) => !!(m.code ?? m.method), 'a method code')
  .transform(({ code, method, ...m }) => ({ ...m, code: (code ?? method)!.toUpperCase() }));
export type PaymentMethodAnswer = z.output<typeof PaymentMethodAnswer>;

/** Spec §4.11: the corridor, the current rate ("object with field rate") and the methods. */
export const MethodsAnswer = objectOf(
  z
    .looseObject({
      corridor: z.unknown().optional(),
      rate: maybe(z.union([amount, z.looseObject({ rate: maybe(amount) })])),
      exchangeRate: maybe(amount),
      methods: z.array(PaymentMethodAnswer),
    })
    .transform(({ rate, exchangeRate, ...r }) => ({
      ...r,
      rate: (typeof rate === 'object' ? rate.rate : rate) ?? exchangeRate,
    })),
);
export type MethodsAnswer = z.output<typeof MethodsAnswer>;

// ---------------------------------------------------------------- wallets (§4.12)

/**
 * Spec §2 Wallet: walletId and currency ("other wallet fields: not shown"). The balance is read from
 * `balance`, `availableBalance` or `available` when there; absent, the plan says the balance is not
 * known and the service's INSUFFICIENT_FUNDS decides.
 */
export const WalletAnswer = z
  .looseObject({
    walletId: maybe(ident),
    id: maybe(ident),
    currency: text,
    balance: maybe(z.union([amount, z.looseObject({ amount })])),
    availableBalance: maybe(amount),
    available: maybe(amount),
  })
  .refine((w) => !!(w.walletId ?? w.id), 'a walletId')
  .transform(({ walletId, id, balance, availableBalance, available, ...w }) => ({
    ...w,
    walletId: (walletId ?? id)!,
    balance: availableBalance ?? available ?? (typeof balance === 'object' ? balance.amount : balance),
  }));
export type WalletAnswer = z.output<typeof WalletAnswer>;
export const WalletListAnswer = listOf(WalletAnswer);
export type WalletListAnswer = z.output<typeof WalletListAnswer>;

// ---------------------------------------------------------------- public routes (§4.14, §4.15)

/**
 * Spec §2 Country: the tool uses code, name, isProhibited and the trading hours with timeZone.
 * Only the code is required; the rest is read when its type fits and ignored when it does not.
 */
export const CountryAnswer = z.looseObject({
  code: text,
  name: orElse(text, undefined),
  currencyCode: orElse(text, undefined),
  isProhibited: orElse(flag, undefined),
  tradingStartTime: orElse(text, undefined),
  tradingEndTime: orElse(text, undefined),
  timeZone: orElse(
    z.union([
      z.number(),
      z
        .string()
        .regex(/^[+-]?\d+(\.\d+)?$/)
        .transform(Number),
    ]),
    undefined,
  ),
});
export type CountryAnswer = z.output<typeof CountryAnswer>;
export const CountryListAnswer = listOf(CountryAnswer);
export type CountryListAnswer = z.output<typeof CountryListAnswer>;

/** Spec §2 Wallet transaction: type, amount (negative for debits), reference; the rest optional. */
export const WalletTransactionAnswer = z.looseObject({
  id: maybe(ident),
  type: maybe(z.string().transform((s) => s.toUpperCase())),
  amount,
  currency: maybe(text),
  wallet: maybe(z.looseObject({ walletId: maybe(ident), currency: maybe(text) })),
  balanceBefore: maybe(amount),
  balanceAfter: maybe(amount),
  reference: maybe(text),
  metadata: maybe(z.record(z.string(), z.unknown())),
  createdAt: maybe(text),
});
export type WalletTransactionAnswer = z.output<typeof WalletTransactionAnswer>;
export const TransactionListAnswer = listOf(WalletTransactionAnswer);
export type TransactionListAnswer = z.output<typeof TransactionListAnswer>;

// ---------------------------------------------------------------- webhooks (§4.13, §6)

/** "Fields of the stored record as returned: not shown": an id is what the routes need. */
export const WebhookSubscriptionAnswer = objectOf(
  z.looseObject({
    id: ident,
    url: maybe(text),
    eventTypes: maybe(z.array(text)),
    hasSecret: maybe(flag),
    createdAt: maybe(text),
    updatedAt: maybe(text),
  }),
);
export type WebhookSubscriptionAnswer = z.output<typeof WebhookSubscriptionAnswer>;
export const WebhookSubscriptionListAnswer = listOf(WebhookSubscriptionAnswer);

/**
 * Spec §6 payout.status.changed. payoutId and newStatus are what the tool acts on; oldStatus may be
 * null (a payout's first event), and every optional field may be null.
 */
export const PayoutStatusChangedEvent = z.looseObject({
  eventType: z.enum(['payout.status.changed', 'payout.status.changed.v1']),
  deliveryId: maybe(ident),
  occurredAt: maybe(text),
  data: z.looseObject({
    payoutId: ident,
    businessId: maybe(ident),
    oldStatus: maybe(payoutStatus),
    newStatus: payoutStatus,
    newStatusDetail: maybe(text),
    oldStatusDetail: maybe(text),
    informationRequests: maybe(z.array(InformationRequestAnswer)),
    changedAt: maybe(text),
    reason: maybe(text),
    changedBy: maybe(text),
  }),
});
export type PayoutStatusChangedEvent = z.output<typeof PayoutStatusChangedEvent>;

/** Spec §6 wallet.credited / wallet.debited: amounts as numbers or decimal strings. */
export const WalletEvent = z.looseObject({
  eventType: z.enum(['wallet.credited', 'wallet.debited']),
  deliveryId: maybe(ident),
  occurredAt: maybe(text),
  data: z.looseObject({
    businessId: maybe(ident),
    amount,
    currency: maybe(text),
    transactionId: maybe(ident),
    createdAt: maybe(text),
    transactionType: maybe(z.string().transform((s) => s.toLowerCase())),
    reference: maybe(text),
    narration: maybe(text),
    balance: maybe(amount),
    totalBalance: maybe(amount),
  }),
});
export type WalletEvent = z.output<typeof WalletEvent>;

export const WebhookEvent = z.union([PayoutStatusChangedEvent, WalletEvent]);
export type WebhookEvent = z.output<typeof WebhookEvent>;
