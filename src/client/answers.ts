// What the client accepts from the service: one tolerant zod schema per answer. A schema requires
// only what the spec states and the tool uses; where the spec says "not shown" it reads the family
// of plausible shapes into one normalised value, so the engine reads one shape whatever the service
// sent. Unknown fields pass through; null means absent. test/contract/ holds bodies written by hand
// from the spec that every schema here must read.
import { z } from 'zod';
import { fromApi, type ApiAmount } from '../money.ts';
import { PAYOUT_STATUSES, type PayoutStatus } from '../spec/codes.ts';
import { isRecord, jsonObject } from './definitive.ts';

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

/** null is read as absent (`statusDetail: null`, `oldStatus: null`). */
const maybe = <T extends z.ZodType>(s: T) => s.nullish().transform((v): z.output<T> | undefined => v ?? undefined);

/** An identifier: a string, or a number written as one (countries' ids are numbers in some readings). */
const ident = z.union([z.string().min(1), z.number().transform(String)]);
const text = z.string();
/** A boolean, or "true"/"false"; a count as a number or a numeric string. */
const flag = z.union([z.boolean(), z.enum(['true', 'false']).transform((v) => v === 'true')]);
const count = z.union([z.number().int(), z.string().regex(/^\d+$/).transform(Number)]);

/** The fields of an envelope {statusCode, message, data} and kin around the answer. */
const ENVELOPE_KEYS = new Set(['statusCode', 'status', 'success', 'message', 'meta', 'error', 'timestamp', 'path', 'requestId']);

/** An object answer, bare or inside an envelope whose `data` is the object. */
function unwrapObject(v: unknown): unknown {
  if (isRecord(v) && isRecord(v.data) && Object.keys(v).every((k) => k === 'data' || ENVELOPE_KEYS.has(k))) return v.data;
  return v;
}

/** A list answer as {data: [...], meta?}: a bare array, {data: [...]}, or an envelope whose data is that. */
function unwrapList(v: unknown): unknown {
  if (Array.isArray(v)) return { data: v };
  if (isRecord(v) && isRecord(v.data) && (Array.isArray(v.data.data) || Array.isArray(v.data.items))) return unwrapList(v.data);
  if (isRecord(v) && !Array.isArray(v.data) && Array.isArray(v.items)) return { ...v, data: v.items };
  return v;
}

/**
 * `v` read with `schema`, else `fallback` (unreadable, not an error). `.optional()` first: zod 4
 * refuses a missing key before a transform runs, so an absent fee (spec §4.11: "not shown") would
 * fail the whole methods answer.
 */
const orElse = <T extends z.ZodType, F>(schema: T, fallback: F) =>
  z
    .unknown()
    .optional()
    .transform((v): z.output<T> | F => {
      if (v === undefined || v === null) return fallback;
      const r = schema.safeParse(v);
      return r.success ? r.data : fallback;
    });

/** Spec §4.4 meta, all of it optional: a page without meta ends the listing when it is short. */
const PageMeta = z.looseObject({ total: maybe(count), page: maybe(count), limit: maybe(count), size: maybe(count) });

/** A field named in several ways ("other fields: not shown"): the first given of `names` (by preference) read under the tool's name. */
const renamed = <T extends z.ZodType>(names: Record<string, readonly string[]>, schema: T) =>
  z.preprocess((v) => {
    if (!isRecord(v)) return v;
    const out = { ...v };
    for (const [name, others] of Object.entries(names)) {
      const given = [name, ...others].find((k) => v[k] != null);
      for (const k of others) delete out[k];
      if (given) out[name] = v[given];
    }
    return out;
  }, schema);

const listOf = <T extends z.ZodType>(item: T) => z.preprocess(unwrapList, z.looseObject({ data: z.array(item), meta: maybe(PageMeta) }));
const objectOf = <T extends z.ZodType>(schema: T) => z.preprocess(unwrapObject, schema);

/** A status in the spec's words; other spellings of them ("pending") are read in capitals. */
const payoutStatus = z
  .string()
  .transform((s) => s.trim().toUpperCase())
  .pipe(z.enum(PAYOUT_STATUSES as unknown as [PayoutStatus, ...PayoutStatus[]]));

// ---------------------------------------------------------------- payouts (§2, §4.2-4.4)

/** One allowed value of a SELECT request: its value (or, without one, its label). */
const optionValue = z.union([text, z.number().transform(String)]);
const OptionAnswer = z.union([optionValue, renamed({ value: ['label'] }, z.looseObject({ value: optionValue })).transform((o) => o.value)]);

/** Spec §2 informationRequests item: title and type are stated; the rest optional. */
export const InformationRequestAnswer = z.looseObject({
  title: text,
  type: z.string().transform((s) => s.toUpperCase()),
  description: maybe(text),
  section: maybe(text),
  // "options: allowed values" (spec §2): a value may come as text, a number, or {value, label};
  // read as the values. A list we cannot read is left out rather than failing the payout.
  options: orElse(z.array(OptionAnswer), undefined),
  rejectionReason: maybe(text),
});
export type InformationRequestAnswer = z.output<typeof InformationRequestAnswer>;

const SupportingDocumentAnswer = z.union([
  z.looseObject({ id: maybe(ident), url: maybe(text), uploadedAt: maybe(text) }),
  z.string().transform((url): { id?: string; url?: string; uploadedAt?: string } => ({ url })),
]);

/**
 * A payout, as get-payout, the list and initiate give it. Only `id` and `status` are required: an
 * answer with both means the payout exists, and the engine must record it as created whatever else
 * of spec §4.2's promise is missing (that is asked for with get-payout).
 */
const PayoutRecord = z.looseObject({
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
});
export const PayoutAnswer = objectOf(PayoutRecord);
export type PayoutAnswer = z.output<typeof PayoutAnswer>;

export const PayoutListAnswer = listOf(PayoutAnswer);

// ---------------------------------------------------------------- quote (§4.1)

/** fee {amount, currency} as stated, or a bare amount. */
const QuoteFee = z.union([
  amount.transform((a): { amount: ApiAmount; currency?: string } => ({ amount: a })),
  z.looseObject({ amount, currency: maybe(text) }),
]);

/**
 * Spec §4.1. The destination amount is required (what the beneficiary receives); a missing fee or
 * total is worked out from the other and sourceAmount, else left unknown.
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

/** Spec §4.6: the bytes are PUT to uploadUrl, so it is an http(s) URL; absent headers: none to send. */
export const UploadUrlAnswer = objectOf(
  z.looseObject({
    uploadUrl: z.url({ protocol: /^https?$/, error: 'not an http(s) URL' }),
    documentUrl: z.string().min(1),
    headers: maybe(z.record(z.string(), z.union([z.string(), z.number(), z.boolean()]).transform(String))).transform((h) => h ?? {}),
  }),
);
export type UploadUrlAnswer = z.output<typeof UploadUrlAnswer>;

// ---------------------------------------------------------------- swaps (§4.7, §4.8)

/** A swap: a payout's fields but information requests, and its wallets; id and status required, the status in capitals whatever its name. */
export const SwapAnswer = objectOf(
  PayoutRecord.omit({ statusDetail: true, informationRequests: true }).extend({
    status: z.string().transform((s) => s.trim().toUpperCase()),
    businessId: maybe(text),
    sourceWalletId: maybe(ident),
    destinationWalletId: maybe(ident),
  }),
);
export type SwapAnswer = z.output<typeof SwapAnswer>;
export const SwapListAnswer = listOf(SwapAnswer);

// ---------------------------------------------------------------- pairs (§4.9, §4.10)

/** A pair is on by `enabled` / `isEnabled`, else by a `status` that names a state (JSend's `{status: 'success'}` does not). */
const PairState = { enabled: maybe(flag), status: maybe(text) };
const PAIR_STATE_NAMES = { enabled: ['isEnabled'] };
function isOn({ enabled, status }: { enabled?: boolean; status?: string }): boolean | undefined {
  if (enabled !== undefined) return enabled;
  if (/^(active|enabled|on)$/i.test(status ?? '')) return true;
  return /^(inactive|disabled|off)$/i.test(status ?? '') ? false : undefined;
}

/** A currency as its code, or as {code, name} (the form of spec §2 Country payoutCurrencies). */
const currencyCode = z.union([text, z.looseObject({ code: text }).transform((c) => c.code)]);

/**
 * Spec §2 Currency pair ("other pair fields: not shown"): the identifier also as `id` or `pairId`.
 * The pairs route lists enabled pairs only (§4.9): a listed pair that does not say is enabled.
 */
export const CurrencyPairAnswer = renamed(
  { currencyPairId: ['id', 'pairId'], ...PAIR_STATE_NAMES },
  z
    .looseObject({
      currencyPairId: maybe(ident),
      baseCurrency: currencyCode,
      quoteCurrency: currencyCode,
      // "a rate field" (spec §2), form not shown: one we cannot read ({buy, sell}) is unknown (no money is computed from it)
      rate: orElse(amount, undefined),
      ...PairState,
    })
    .transform(({ enabled, status, ...rest }) => ({ ...rest, enabled: isOn({ enabled, status }) })),
);
export type CurrencyPairAnswer = z.output<typeof CurrencyPairAnswer>;
export const PairListAnswer = listOf(CurrencyPairAnswer);

/** "Response of this route: not shown" (spec §4.10): any 2xx; the pair's state read when it shows one. */
export const ToggleAnswer = z.unknown().transform((v): { enabled?: boolean } => {
  const pair = renamed(PAIR_STATE_NAMES, z.looseObject(PairState)).safeParse(unwrapObject(v));
  const on = pair.success ? isOn(pair.data) : undefined;
  return on === undefined ? {} : { enabled: on };
});

// ---------------------------------------------------------------- methods (§2 Payment method, §4.11)

/** A field of a method: its name (also `field` or `key`), or the name alone; `required` false only when said so. */
const FieldAnswer = z.preprocess(
  (v) => (typeof v === 'string' ? { name: v } : v),
  renamed({ name: ['field', 'key'] }, z.object({ name: z.string().min(1), required: maybe(flag) })),
);
/** One of the listed groups must be given in full (spec §2: WECHAT openId or wechatUserId). */
const FieldGroupAnswer = z.object({
  required: maybe(flag),
  // each listed group: an array of fields, one field, or {fields: [...]} (spec §2 "field groups")
  oneOf: z.array(
    z.union([
      z.array(FieldAnswer),
      z.looseObject({ fields: z.array(FieldAnswer) }).transform((g) => g.fields),
      FieldAnswer.transform((d) => [d]),
    ]),
  ),
});
const RequiredFieldAnswer = z.union([FieldGroupAnswer, FieldAnswer]);
export type RequiredField = z.output<typeof RequiredFieldAnswer>;

/** requiredFields: names, descriptors or groups; or an object by field name ({accountName: {type, required}} or {accountName: true}). */
const FieldListAnswer = z.preprocess(
  (v) =>
    isRecord(v) && Object.values(v).every((d) => isRecord(d) || typeof d === 'boolean')
      ? Object.entries(v).map(([name, d]) => (isRecord(d) ? { ...d, name } : { name, required: d }))
      : v,
  z.array(RequiredFieldAnswer),
);

/**
 * A method's fee ("exact shape of the fee: not shown", spec §4.11): flat, or tiers by source amount
 * (§1.9 has flat fees and SWIFT's bands); anything else is `unknown`, and the plan says so.
 */
export type MethodFee =
  | { kind: 'flat'; amount: ApiAmount; currency?: string }
  | { kind: 'tiered'; currency?: string; tiers: { from?: ApiAmount; below?: ApiAmount; upTo?: ApiAmount; amount: ApiAmount }[] }
  | { kind: 'unknown' };

const UNKNOWN_FEE: MethodFee = { kind: 'unknown' };

const Band = z.looseObject({ below: maybe(amount), amount });
/** A tier's bounds as min and max (or from and to), its fee as amount (or fee). */
const Tier = renamed({ min: ['from'], max: ['to'], amount: ['fee'] }, z.looseObject({ min: maybe(amount), max: maybe(amount), amount }));
/**
 * Tiers as [from, below) or [from, upTo]. Where ranges are contiguous, an upper bound equal to the
 * next tier's lower bound belongs to the next tier ({from: 0, to: 2000}, {from: 2000, to: 10000}:
 * 2000 pays 40 by spec §1.9's "40 (2k to under 10k)"), so it is read as exclusive.
 */
function tiersOf(raw: { min?: ApiAmount; max?: ApiAmount; amount: ApiAmount }[]) {
  return raw.map(({ min, max, amount: fee }, i) => {
    const next = raw[i + 1]?.min;
    const contiguous = max !== undefined && next !== undefined && fromApi(max).eq(fromApi(next));
    return contiguous ? { from: min, below: max, amount: fee } : { from: min, upTo: max, amount: fee };
  });
}

/** A fee given as a percentage (by its type or a percent field) is not a flat amount. */
const isPercentage = (f: Record<string, unknown>): boolean =>
  (typeof f.type === 'string' && /percent|variable/i.test(f.type)) || Object.keys(f).some((k) => /percent/i.test(k) && f[k] != null);

const MethodFeeAnswer = z.union([
  amount.transform((a): MethodFee => ({ kind: 'flat', amount: a })),
  z.looseObject({ currency: maybe(text), amount: maybe(amount), bands: z.array(Band).min(1) }).transform((f): MethodFee => ({
    kind: 'tiered',
    currency: f.currency,
    tiers: f.bands.map((b) => ({ below: b.below, amount: b.amount })),
  })),
  z
    .looseObject({ currency: maybe(text), tiers: z.array(Tier).min(1) })
    .transform((f): MethodFee => ({ kind: 'tiered', currency: f.currency, tiers: tiersOf(f.tiers) })),
  // {amount, currency} or {type: 'FIXED', value}; not a percentage, which would read as an amount
  renamed({ amount: ['value'] }, z.looseObject({ amount, currency: maybe(text) }))
    .refine((f) => !isPercentage(f), 'a flat amount')
    .transform((f): MethodFee => ({ kind: 'flat', amount: f.amount, currency: f.currency })),
]);

/**
 * Settlement "not shown" (spec §4.11): a string, or an object whose description (or range) is shown
 * as text. Optional first, as orElse, so a method without one is read. A range says its unit when
 * it gives one ({min: 1, max: 3, unit: 'days'} is "1 to 3 days", not hours: spec §1.9 has both).
 */
const SettlementAnswer = z
  .unknown()
  .optional()
  .transform((v): string | undefined => {
    if (typeof v === 'string') return v;
    if (typeof v === 'number') return `${v}`;
    if (!isRecord(v)) return undefined;
    for (const k of ['description', 'text', 'label', 'value']) if (typeof v[k] === 'string') return v[k];
    const hours = v.minHours !== undefined || v.maxHours !== undefined;
    const lo = hours ? v.minHours : v.min;
    const hi = hours ? v.maxHours : v.max;
    const unit = hours ? 'hours' : typeof v.unit === 'string' ? v.unit.toLowerCase() : 'hours';
    const show = (x: unknown) => (typeof x === 'number' || typeof x === 'string' ? String(x) : '?');
    if (lo !== undefined || hi !== undefined) return lo === hi ? `${show(lo)} ${unit}` : `${show(lo)} to ${show(hi)} ${unit}`;
    return JSON.stringify(v);
  });

/**
 * A payment method (spec §2): only the code (also `method`) is required, as a row names it; a fee or
 * field list the client cannot read is unknown, so one odd method does not stop a whole corridor.
 */
export const PaymentMethodAnswer = renamed(
  { code: ['method'] },
  z
    .looseObject({
      code: maybe(text),
      settlement: SettlementAnswer,
      fee: orElse(MethodFeeAnswer, UNKNOWN_FEE),
      requiredFields: orElse(FieldListAnswer, undefined),
    })
    .refine((m) => !!m.code, 'a method code')
    .transform((m) => ({ ...m, code: m.code!.toUpperCase() })),
);
export type PaymentMethodAnswer = z.output<typeof PaymentMethodAnswer>;

/**
 * Spec §4.11: the corridor, the current rate ("object with field rate") and the methods. Read as
 * well: the methods alone, as a bare array or as the `data` array of an envelope (no rate then).
 */
const methodsBody = (v: unknown): unknown => {
  if (Array.isArray(v)) return { methods: v };
  if (isRecord(v) && Array.isArray(v.data) && v.methods === undefined) return { methods: v.data };
  return unwrapObject(v);
};
export const MethodsAnswer = z.preprocess(
  methodsBody,
  z
    .looseObject({
      corridor: z.unknown().optional(),
      // the rate only feeds an estimate (a fee in another currency): unreadable is unknown, not fatal
      rate: orElse(z.union([amount, z.looseObject({ rate: maybe(amount) })]), undefined),
      exchangeRate: orElse(amount, undefined),
      methods: z.array(PaymentMethodAnswer),
    })
    .transform(({ rate, exchangeRate, ...r }) => ({
      ...r,
      rate: (typeof rate === 'object' ? rate.rate : rate) ?? exchangeRate,
    })),
);

// ---------------------------------------------------------------- wallets (§4.12)

/**
 * Spec §2 Wallet: walletId and currency ("other wallet fields: not shown"); the balance from
 * `balance`, `availableBalance` or `available`, else unknown (the service's INSUFFICIENT_FUNDS decides).
 */
export const WalletAnswer = renamed(
  { walletId: ['id'] },
  z
    .looseObject({
      walletId: maybe(ident),
      currency: text,
      // "other wallet fields: not shown" (spec §2): a balance in a form we cannot read ({total,
      // pending}) is no balance, not a refused listing; {available, ledger} reads the available one
      balance: orElse(
        z.union([
          amount,
          z
            .looseObject({ available: maybe(amount), availableBalance: maybe(amount), amount: maybe(amount) })
            .transform((b) => b.available ?? b.availableBalance ?? b.amount),
        ]),
        undefined,
      ),
      availableBalance: orElse(amount, undefined),
      available: orElse(amount, undefined),
    })
    .refine((w) => !!w.walletId, 'a walletId')
    .transform(({ walletId, balance, availableBalance, available, ...w }) => ({
      ...w,
      walletId: walletId!,
      balance: availableBalance ?? available ?? balance,
    })),
);
export type WalletAnswer = z.output<typeof WalletAnswer>;
export const WalletListAnswer = listOf(WalletAnswer);

// ---------------------------------------------------------------- public routes (§4.14, §4.15)

/** Spec §2 Country: only the code is required; the rest is read when its type fits, else ignored. */
export const CountryAnswer = z.looseObject({
  code: text,
  name: orElse(text, undefined),
  currencyCode: orElse(text, undefined),
  isProhibited: orElse(flag, undefined),
  tradingStartTime: orElse(text, undefined),
  tradingEndTime: orElse(text, undefined),
  timeZone: orElse(z.union([z.number(), z.string().regex(DECIMAL).transform(Number)]), undefined),
});
export type CountryAnswer = z.output<typeof CountryAnswer>;
export const CountryListAnswer = listOf(CountryAnswer);

/** Spec §2 Wallet transaction: type, amount (negative for debits), reference; the rest optional. */
export const WalletTransactionAnswer = z.looseObject({
  id: maybe(ident),
  type: maybe(z.string().transform((s) => s.toUpperCase())),
  amount,
  currency: maybe(text),
  // "wallet details" and "metadata" (spec §2): forms not shown. The wallet as an object or its id;
  // metadata as an object or the JSON text of one (parsed); anything else is left out, not fatal.
  wallet: orElse(
    z.union([z.looseObject({ walletId: maybe(ident), currency: maybe(text) }), ident.transform((walletId) => ({ walletId }))]),
    undefined,
  ),
  balanceBefore: maybe(amount),
  balanceAfter: maybe(amount),
  reference: maybe(text),
  metadata: orElse(
    z.preprocess((v) => (typeof v === 'string' ? (jsonObject(v) ?? v) : v), z.record(z.string(), z.unknown())),
    undefined,
  ),
  createdAt: maybe(text),
});
export type WalletTransactionAnswer = z.output<typeof WalletTransactionAnswer>;
export const TransactionListAnswer = listOf(WalletTransactionAnswer);

// ---------------------------------------------------------------- webhooks (§4.13, §6)

/** "Fields of the stored record as returned: not shown" (spec §4.13): the id the routes need, as `id` or `webhookId`. */
const WebhookRecord = renamed(
  { id: ['webhookId'] },
  z
    .looseObject({
      id: maybe(ident),
      url: maybe(text),
      eventTypes: maybe(z.array(text)),
      hasSecret: maybe(flag),
      createdAt: maybe(text),
      updatedAt: maybe(text),
    })
    .refine((w) => w.id !== undefined, { message: 'an id', path: ['id'] })
    .transform((w) => ({ ...w, id: w.id! })),
);
export const WebhookSubscriptionAnswer = objectOf(WebhookRecord);

/**
 * The PATCH answer ("response bodies of these routes: not shown", spec §4.13): the record, or only
 * `{statusCode, message}`. Without an id of its own it is the subscription the path named.
 */
export const webhookUpdateAnswer = (webhookId: string) =>
  z.preprocess((v) => {
    const o = unwrapObject(v);
    if (!isRecord(o)) return { id: webhookId };
    return o.id === undefined && o.webhookId === undefined ? { ...o, id: webhookId } : o;
  }, WebhookRecord);

const isWebhookRecord = (v: unknown): boolean => isRecord(v) && (v.id !== undefined || v.webhookId !== undefined);
/**
 * The list: "only one active subscription per business" (spec §4.13), so a service may answer with
 * the one record (bare or as `data`) or `data: null` for none; both are read as a list.
 */
export const WebhookSubscriptionListAnswer = z.preprocess((v) => {
  if (isWebhookRecord(v)) return { data: [v] };
  if (isRecord(v) && isWebhookRecord(v.data)) return { ...v, data: [v.data] };
  if (isRecord(v) && 'data' in v && v.data === null) return { ...v, data: [] };
  return v;
}, listOf(WebhookRecord));

/** Spec §6 payout.status.changed: oldStatus (a payout's first event) and every optional field may be null. */
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
