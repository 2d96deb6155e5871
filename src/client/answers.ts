// One tolerant zod schema per answer: it requires only what the spec states and the tool uses, and
// reads every plausible shape of a "not shown" field into one value. Unknown fields pass through;
// null means absent. test/contract/ holds hand-written bodies from the spec that each must read.
import * as z from 'zod';
import { fromApi, type ApiAmount } from '../money.ts';
import { PayoutStatus } from '../spec/codes.ts';
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

const maybe = <T extends z.ZodType>(s: T) => s.nullish().transform((v): z.output<T> | undefined => v ?? undefined);

const ident = z.union([z.string().min(1), z.number().transform(String)]);
const text = z.string();
const flag = z.union([z.boolean(), z.enum(['true', 'false']).transform((v) => v === 'true')]);
const count = z.union([z.number().int(), z.string().regex(/^\d+$/).transform(Number)]);

/** The fields of an envelope {statusCode, message, data} and kin. */
const ENVELOPE_KEYS = new Set(['statusCode', 'status', 'success', 'message', 'meta', 'error', 'timestamp', 'path', 'requestId']);

const unwrapObject = (v: unknown): unknown =>
  isRecord(v) && isRecord(v.data) && Object.keys(v).every((k) => k === 'data' || ENVELOPE_KEYS.has(k)) ? v.data : v;

/** A list answer as {data: [...], meta?}: a bare array, {data: [...]}, or an envelope whose data is that. */
function unwrapList(v: unknown): unknown {
  if (Array.isArray(v)) return { data: v };
  if (isRecord(v) && isRecord(v.data) && (Array.isArray(v.data.data) || Array.isArray(v.data.items))) return unwrapList(v.data);
  if (isRecord(v) && !Array.isArray(v.data) && Array.isArray(v.items)) return { ...v, data: v.items };
  return v;
}

/** `v` read with `schema`, else undefined: a field only shown when it is readable. */
const lenient = <T extends z.ZodType>(schema: T) => schema.optional().catch(undefined);

/** Spec §4.4 meta, all of it optional. */
const PageMeta = z.looseObject({ total: maybe(count), page: maybe(count), limit: maybe(count), size: maybe(count) });

/** A field named in several ways: the first given of `names` (by preference) read under the tool's name. */
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

const capitals = z.string().transform((s) => s.trim().toUpperCase());
const payoutStatus = capitals.pipe(PayoutStatus);

const optionValue = z.union([text, z.number().transform(String)]);
const OptionAnswer = z.union([optionValue, renamed({ value: ['label'] }, z.looseObject({ value: optionValue })).transform((o) => o.value)]);

/** Spec §2 informationRequests item: title and type are stated; the rest optional. */
export const InformationRequestAnswer = z.looseObject({
  title: text,
  type: z.string().transform((s) => s.toUpperCase()),
  description: maybe(text),
  section: maybe(text),
  // spec §2 "options: allowed values": text, a number or {value, label}; an unreadable list is left out
  options: lenient(z.array(OptionAnswer)),
  rejectionReason: maybe(text),
});
export type InformationRequestAnswer = z.output<typeof InformationRequestAnswer>;

const SupportingDocumentAnswer = z.union([
  z.looseObject({ id: maybe(ident), url: maybe(text) }),
  z.string().transform((url): { id?: string; url?: string } => ({ url })),
]);

/** Only `id` and `status` required: with both the payout exists and is recorded as created, whatever else of §4.2 is missing. */
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

/** fee {amount, currency} as stated, or a bare amount. */
const QuoteFee = z.union([
  amount.transform((a): { amount: ApiAmount; currency?: string } => ({ amount: a })),
  z.looseObject({ amount, currency: maybe(text) }),
]);

/** Spec §4.1: the destination amount required; a missing fee or total worked out from the other and sourceAmount. */
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

/** Spec §4.5: payoutId, totalDocuments, documents; the tool uses none of them, so all optional. */
export const DocumentsPatchAnswer = objectOf(
  z.looseObject({
    payoutId: maybe(ident),
    totalDocuments: maybe(count),
    documents: maybe(z.array(SupportingDocumentAnswer)),
  }),
);

/** Spec §4.6: the bytes are PUT to uploadUrl, so it is an http(s) URL. */
export const UploadUrlAnswer = objectOf(
  z.looseObject({
    uploadUrl: z.url({ protocol: /^https?$/, error: 'not an http(s) URL' }),
    documentUrl: z.string().min(1),
    headers: maybe(z.record(z.string(), z.union([z.string(), z.number(), z.boolean()]).transform(String))).transform((h) => h ?? {}),
  }),
);

/** Spec §4.7, §4.8: a payout's fields but information requests, and its wallets; any status, in capitals. */
export const SwapAnswer = objectOf(
  PayoutRecord.omit({ statusDetail: true, informationRequests: true }).extend({
    status: capitals,
    businessId: maybe(text),
    sourceWalletId: maybe(ident),
    destinationWalletId: maybe(ident),
  }),
);
export type SwapAnswer = z.output<typeof SwapAnswer>;
export const SwapListAnswer = listOf(SwapAnswer);

/** A pair is on by `enabled` / `isEnabled`, else by a `status` that names a state (JSend's `{status: 'success'}` does not). */
const PairState = { enabled: maybe(flag), status: maybe(text) };
const PAIR_STATE_NAMES = { enabled: ['isEnabled'] };
function isOn({ enabled, status }: { enabled?: boolean; status?: string }): boolean | undefined {
  if (enabled !== undefined) return enabled;
  if (/^(active|enabled|on)$/i.test(status ?? '')) return true;
  return /^(inactive|disabled|off)$/i.test(status ?? '') ? false : undefined;
}

/** A code, or {code, name} (spec §2 Country payoutCurrencies). */
const currencyCode = z.union([text, z.looseObject({ code: text }).transform((c) => c.code)]);

/** Spec §2 Currency pair; §4.9 lists enabled pairs only, so a listed pair that does not say is enabled. */
export const CurrencyPairAnswer = renamed(
  { currencyPairId: ['id', 'pairId'], ...PAIR_STATE_NAMES },
  z
    .looseObject({
      currencyPairId: maybe(ident),
      baseCurrency: currencyCode,
      quoteCurrency: currencyCode,
      // "a rate field" (spec §2): one we cannot read ({buy, sell}) is unknown; no money is computed from it
      rate: lenient(amount),
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

/** A method's field: its name (also `field` or `key`), or the name alone. */
const FieldAnswer = z.preprocess(
  (v) => (typeof v === 'string' ? { name: v } : v),
  renamed({ name: ['field', 'key'] }, z.object({ name: z.string().min(1), required: maybe(flag) })),
);
/** One of the listed groups must be given in full (spec §2: WECHAT openId or wechatUserId). */
const FieldGroupAnswer = z.object({
  required: maybe(flag),
  // a group: an array of fields, one field, or {fields: [...]}
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

/** Names, descriptors or groups; or an object by field name ({accountName: {type, required}} or {accountName: true}). */
const FieldListAnswer = z.preprocess(
  (v) =>
    isRecord(v) && Object.values(v).every((d) => isRecord(d) || typeof d === 'boolean')
      ? Object.entries(v).map(([name, d]) => (isRecord(d) ? { ...d, name } : { name, required: d }))
      : v,
  z.array(RequiredFieldAnswer),
);

/** Spec §4.11 "exact shape of the fee: not shown": flat, or tiers by source amount (§1.9), else unknown. */
export type MethodFee =
  | { kind: 'flat'; amount: ApiAmount; currency?: string }
  | { kind: 'tiered'; currency?: string; tiers: { from?: ApiAmount; below?: ApiAmount; upTo?: ApiAmount; amount: ApiAmount }[] }
  | { kind: 'unknown' };

const Band = z.looseObject({ below: maybe(amount), amount });
const Tier = renamed({ min: ['from'], max: ['to'], amount: ['fee'] }, z.looseObject({ min: maybe(amount), max: maybe(amount), amount }));
/** An upper bound equal to the next tier's lower bound is exclusive: 2000 pays 40 by spec §1.9's "40 (2k to under 10k)". */
function tiersOf(raw: { min?: ApiAmount; max?: ApiAmount; amount: ApiAmount }[]) {
  return raw.map(({ min, max, amount: fee }, i) => {
    const next = raw[i + 1]?.min;
    const contiguous = max !== undefined && next !== undefined && fromApi(max).eq(fromApi(next));
    return contiguous ? { from: min, below: max, amount: fee } : { from: min, upTo: max, amount: fee };
  });
}

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
  // {amount, currency} or {type: 'FIXED', value}; not a percentage
  renamed({ amount: ['value'] }, z.looseObject({ amount, currency: maybe(text) }))
    .refine((f) => !isPercentage(f), 'a flat amount')
    .transform((f): MethodFee => ({ kind: 'flat', amount: f.amount, currency: f.currency })),
]);

/** Settlement "not shown" (spec §4.11) as text; a range in its unit when given ({min: 1, max: 3, unit: 'days'}: §1.9 has both). */
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

/** Spec §2: only the code required; an unreadable fee or field list is unknown, so one odd method does not stop a corridor. */
export const PaymentMethodAnswer = renamed(
  { code: ['method'] },
  z
    .looseObject({
      code: maybe(text),
      settlement: SettlementAnswer,
      fee: MethodFeeAnswer.catch({ kind: 'unknown' }),
      requiredFields: lenient(FieldListAnswer),
    })
    .refine((m) => !!m.code, 'a method code')
    .transform((m) => ({ ...m, code: m.code!.toUpperCase() })),
);
export type PaymentMethodAnswer = z.output<typeof PaymentMethodAnswer>;

/** Spec §4.11: corridor, rate ("object with field rate") and methods; or the methods alone, bare or as `data`. */
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
      // only feeds an estimate: unreadable is unknown, not fatal
      rate: lenient(z.union([amount, z.looseObject({ rate: maybe(amount) })])),
      exchangeRate: lenient(amount),
      methods: z.array(PaymentMethodAnswer),
    })
    .transform(({ rate, exchangeRate, ...r }) => ({
      ...r,
      rate: (typeof rate === 'object' ? rate.rate : rate) ?? exchangeRate,
    })),
);

/** Spec §2 Wallet, §4.12; a balance we cannot read ({total, pending}) is unknown: INSUFFICIENT_FUNDS decides. */
export const WalletAnswer = renamed(
  { walletId: ['id'] },
  z
    .looseObject({
      walletId: maybe(ident),
      currency: text,
      balance: lenient(
        z.union([
          amount,
          z
            .looseObject({ available: maybe(amount), availableBalance: maybe(amount), amount: maybe(amount) })
            .transform((b) => b.available ?? b.availableBalance ?? b.amount),
        ]),
      ),
      availableBalance: lenient(amount),
      available: lenient(amount),
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

/** Spec §2 Country, §4.14: only the code required; the rest read when its type fits. */
export const CountryAnswer = z.looseObject({
  code: text,
  name: lenient(text),
  currencyCode: lenient(text),
  isProhibited: lenient(flag),
  tradingStartTime: lenient(text),
  tradingEndTime: lenient(text),
  timeZone: lenient(z.union([z.number(), z.string().regex(DECIMAL).transform(Number)])),
});
export type CountryAnswer = z.output<typeof CountryAnswer>;
export const CountryListAnswer = listOf(CountryAnswer);

/** Spec §2 Wallet transaction, §4.15: amount negative for debits. */
export const WalletTransactionAnswer = z.looseObject({
  id: maybe(ident),
  type: maybe(z.string().transform((s) => s.toUpperCase())),
  amount,
  currency: maybe(text),
  // "wallet details", "metadata" (spec §2), forms not shown: an object, an id or JSON text; else left out
  wallet: lenient(
    z.union([z.looseObject({ walletId: maybe(ident), currency: maybe(text) }), ident.transform((walletId) => ({ walletId }))]),
  ),
  balanceBefore: maybe(amount),
  balanceAfter: maybe(amount),
  reference: maybe(text),
  metadata: lenient(z.preprocess((v) => (typeof v === 'string' ? (jsonObject(v) ?? v) : v), z.record(z.string(), z.unknown()))),
  createdAt: maybe(text),
});
export type WalletTransactionAnswer = z.output<typeof WalletTransactionAnswer>;
export const TransactionListAnswer = listOf(WalletTransactionAnswer);

/** Spec §4.13, record "not shown": the id as `id` or `webhookId`. */
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

const isWebhookRecord = (v: unknown): boolean => isRecord(v) && (v.id !== undefined || v.webhookId !== undefined);

/** Spec §4.13 PATCH, "not shown": the record, or only `{statusCode, message}` (then the path's subscription). */
export const webhookUpdateAnswer = (webhookId: string) =>
  z.preprocess((v) => {
    const o = unwrapObject(v);
    return isWebhookRecord(o) ? o : { ...(isRecord(o) ? o : {}), id: webhookId };
  }, WebhookRecord);
/** "Only one active subscription per business" (spec §4.13): the record alone, or `data: null`, read as a list. */
export const WebhookSubscriptionListAnswer = z.preprocess((v) => {
  if (isWebhookRecord(v)) return { data: [v] };
  if (isRecord(v) && isWebhookRecord(v.data)) return { ...v, data: [v.data] };
  if (isRecord(v) && 'data' in v && v.data === null) return { ...v, data: [] };
  return v;
}, listOf(WebhookRecord));

/** Spec §6: a delivery of one of `types`, its fields in `data`. */
const event = <const E extends readonly [string, ...string[]], D extends z.ZodRawShape>(types: E, data: D) =>
  z.looseObject({ eventType: z.enum(types), deliveryId: maybe(ident), occurredAt: maybe(text), data: z.looseObject(data) });

/** Spec §6 payout.status.changed. */
export const PayoutStatusChangedEvent = event(['payout.status.changed', 'payout.status.changed.v1'], {
  payoutId: ident,
  businessId: maybe(ident),
  oldStatus: maybe(payoutStatus),
  newStatus: payoutStatus,
  newStatusDetail: maybe(text),
  informationRequests: maybe(z.array(InformationRequestAnswer)),
  changedAt: maybe(text),
  reason: maybe(text),
});
export type PayoutStatusChangedEvent = z.output<typeof PayoutStatusChangedEvent>;

/** Spec §6 wallet.credited / wallet.debited. */
export const WalletEvent = event(['wallet.credited', 'wallet.debited'], {
  businessId: maybe(ident),
  amount,
  currency: maybe(text),
  transactionId: maybe(ident),
  createdAt: maybe(text),
  transactionType: maybe(z.string().transform((s) => s.toLowerCase())),
  reference: maybe(text),
  narration: maybe(text),
  balance: maybe(amount),
});
export type WalletEvent = z.output<typeof WalletEvent>;

export const WebhookEvent = z.union([PayoutStatusChangedEvent, WalletEvent]);
export type WebhookEvent = z.output<typeof WebhookEvent>;
