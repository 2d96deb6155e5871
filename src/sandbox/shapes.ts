// The variant reading (README "Readings of the spec"): each route's strict answer rewritten, the same on every call;
// kept as the spec states them: status codes, the error body and its codes (§7), {data, meta} (§4.4, §4.14, §4.15).
import { UPLOAD_URL_TTL_MS, type PayoutMethod } from '../spec/codes.ts';
import type { RouteName } from './contract.ts';
import type { Sandbox } from './context.ts';
import { ApiError, type Reply, type Request } from './http.ts';
import { Dec, amountText, fromApi, minorUnits } from '../money.ts';
import { FIELDS, publishedRow } from './rules.ts';
import type { Storage } from './storage.ts';
import type { Country, Store, StoreEvent } from './store.ts';
import type { methodView, quoteView } from './corridors.ts';
import type * as views from './views.ts';
import type { subscriptionView } from './webhooks.ts';

type PaymentMethod = ReturnType<typeof methodView>;
type Subscription = ReturnType<typeof subscriptionView>;
type Pair = ReturnType<typeof views.pairView>;
type Corridor = { destinationCurrency: string; destinationCountryCode: string };

interface ShapeContext {
  sb: Sandbox;
  req: Request;
  status: number;
}

const amountOf = (value: number | string, currency: string): string => amountText(fromApi(value), currency, { exact: true });
const rateText = (value: number | string): string => fromApi(value).toFixed();

/** Each amount field with the field naming its currency (exchangeRate and rate are rates, written in full). */
const CURRENCY_OF: Partial<Record<string, string>> = {
  sourceAmount: 'sourceCurrency',
  destinationAmount: 'destinationCurrency',
  transactionFees: 'sourceCurrency',
  totalDeductible: 'sourceCurrency',
  amount: 'currency',
  balance: 'currency',
  balanceBefore: 'currency',
  balanceAfter: 'currency',
};

/** A record with its amounts and rates as decimal strings, every other field (and the order) kept. */
function asText(record: object): Record<string, unknown> {
  const r = record as Record<string, unknown>;
  const text = ([k, v]: [string, unknown]): [string, unknown] => {
    const currency = CURRENCY_OF[k];
    if (k === 'exchangeRate' || k === 'rate') return [k, rateText(v as number)];
    return [k, currency ? amountOf(v as number, String(r[currency])) : v];
  };
  return Object.fromEntries(Object.entries(r).map(text));
}

/** Spec §2 "amount debited from the source wallet": a payout's sourceAmount with its fee added. */
const debited = <T extends { sourceAmount: number | string; transactionFees: number | string }>(p: T): T => ({
  ...p,
  sourceAmount: fromApi(p.sourceAmount).plus(fromApi(p.transactionFees)).toFixed(),
});

/** The envelope of NestJS services: the status, a message, the object in data. */
const one =
  <T>(message: string, data: (body: T, ctx: ShapeContext) => unknown) =>
  (body: T, ctx: ShapeContext) => ({ statusCode: ctx.status, message, data: data(body, ctx) });

const each =
  <T>(message: string, item: (t: T, ctx: ShapeContext) => unknown) =>
  (page: { data: T[]; meta?: unknown }, ctx: ShapeContext) => ({
    statusCode: ctx.status,
    message,
    data: page.data.map((t) => item(t, ctx)),
    ...(page.meta ? { meta: page.meta } : {}),
  });

const links = (ctx: ShapeContext, path: string) => ({ self: { href: `${ctx.sb.baseUrl()}${path}` } });

/** A method's fee (spec §4.11: "not shown"): {amount, currency, type: 'FLAT'}, SWIFT's tiered, NIP's a bare number, ALIPAY's absent. */
const FEE_SHAPE: Partial<Record<PayoutMethod, 'number' | 'absent'>> = { NIP: 'number', ALIPAY: 'absent' };

/** Required fields (spec §2) as plain names for these methods, descriptors for the others. */
const NAMES_ONLY: ReadonlySet<string> = new Set<PayoutMethod>(['NIP', 'SEPA', 'ALIPAY', 'WECHAT', 'FASTER_PAYMENTS', 'WIRE']);

/** Spec §1.8: "HK_FPS (also written HONG_KONG_FPS)"; this reading's methods route writes the long name. */
const CODE_AS_WRITTEN: Partial<Record<PayoutMethod, string>> = { HK_FPS: 'HONG_KONG_FPS' };

type Field = PaymentMethod['requiredFields'][number];
const describe = (f: { name: string; type: string; validation?: string }) => ({
  name: f.name,
  type: f.type,
  description: FIELDS[f.name]?.description ?? f.name,
  ...(f.validation ? { validation: f.validation } : {}),
});

function variantFee(m: PaymentMethod): unknown {
  const { currency } = m.fee;
  const shape = FEE_SHAPE[m.code];
  if (shape === 'absent') return undefined;
  if (shape === 'number') return m.fee.amount;
  if (!m.fee.bands) return { amount: amountOf(m.fee.amount, currency), currency, type: 'FLAT' };
  // Bands {below (exclusive), amount} as tiers {min, max (inclusive, one minor unit under the next band)}.
  const unit = new Dec(10).pow(-(minorUnits(currency) ?? 2));
  const tiers = m.fee.bands.map((b, i, bands) => ({
    min: amountOf(bands[i - 1]?.below ?? 0, currency),
    max: b.below === null ? null : amountOf(new Dec(b.below).minus(unit).toFixed(), currency),
    amount: amountOf(b.amount, currency),
  }));
  return { type: 'TIERED', currency, tiers };
}

function variantMethod(m: PaymentMethod, corridor: Corridor) {
  const { code } = m;
  const names = NAMES_ONLY.has(code);
  const field = (f: Field) => ('oneOf' in f ? { oneOf: f.oneOf.map((group) => group.map((d) => d.name)) } : names ? f.name : describe(f));
  const row = publishedRow(code, corridor.destinationCurrency, corridor.destinationCountryCode);
  const fee = variantFee(m);
  return {
    code: CODE_AS_WRITTEN[code] ?? code,
    name: m.name,
    settlement: { description: m.settlement, minHours: row?.settlement.minHours ?? null, maxHours: row?.settlement.maxHours ?? null },
    ...(fee === undefined ? {} : { fee }),
    requiredFields: m.requiredFields.map(field),
    ...(names ? {} : { optionalFields: m.optionalFields.map(describe) }),
  };
}

/** "Fields of the stored record: not shown": businessId, isActive and deletedAt added; eventTypes null for every payout event. */
function subscription(s: Subscription, ctx: ShapeContext, deletedAt: string | null = null) {
  return {
    ...s,
    eventTypes: s.eventTypes.length ? s.eventTypes : null,
    businessId: ctx.req.business.id,
    isActive: deletedAt === null,
    deletedAt,
  };
}

const VARIANTS: Partial<Record<RouteName, (body: never, ctx: ShapeContext) => unknown>> = {
  /** Spec §4.1: amounts as strings. */
  quote: one('Quote retrieved successfully', (q: ReturnType<typeof quoteView>) => ({ ...asText(q), fee: asText(q.fee) })),

  /** Spec §4.2: "the response includes at least id, status PENDING, payoutRef, ...": that minimum alone (a replay too), sourceAmount the debit. */
  initiate: one('Payout initiated successfully', (p: views.Payout) => {
    const { id, status, payoutRef, sourceAmount, destinationAmount, exchangeRate } = asText(debited(p));
    return { id, status, payoutRef, sourceAmount, destinationAmount, exchangeRate };
  }),

  /** Spec §2 Payout: absent optional fields null, amounts as strings (sourceAmount the debit), extra fields. */
  getPayout: one('Payout retrieved successfully', (p: views.Payout, ctx) => ({
    ...asText(debited(p)),
    statusDetail: p.statusDetail ?? null,
    informationRequests: p.informationRequests ?? null,
    businessId: ctx.req.business.id,
    _links: links(ctx, ctx.req.path),
  })),

  listPayouts: each('Payouts retrieved successfully', (p: ReturnType<typeof views.payoutListItem>) => asText(debited(p))),

  patchDocuments: one('Documents attached successfully', (r: { documents: views.Payout['supportingDocuments'] }) => ({
    ...r,
    documents: r.documents.map((d) => ({ ...d, deletedAt: null })),
  })),

  /** Spec §4.6, with how long the uploadUrl lasts (spec §8: 15 minutes), in seconds. */
  uploadUrl: one('Upload URL created successfully', (u: ReturnType<Storage['issue']>) => ({ ...u, expiresIn: UPLOAD_URL_TTL_MS / 1000 })),

  swap: one('Swap initiated successfully', (s: { id: string }, ctx) => ({ ...asText(s), _links: links(ctx, `${ctx.req.path}s/${s.id}`) })),

  listSwaps: each('Swaps retrieved successfully', asText),

  getSwap: one('Swap retrieved successfully', (s: object, ctx) => ({ ...asText(s), businessId: ctx.req.business.id, deletedAt: null })),

  /** Spec §2 Currency pair ("other fields: not shown"): `id`, a `code` "USD/NGN", no `enabled`, the rate as text. */
  pairs: each('Currency pairs retrieved successfully', ({ currencyPairId: id, enabled, rate, ...currencies }: Pair) => ({
    id,
    code: `${currencies.baseCurrency}/${currencies.quoteCurrency}`,
    ...currencies,
    rate: rateText(rate),
  })),

  /** Spec §4.10 "response: not shown": the pair's id, its currencies and isEnabled. */
  togglePair: one('Currency pair updated successfully', ({ currencyPairId: id, enabled, rate, ...currencies }: Pair) => ({
    id,
    ...currencies,
    isEnabled: enabled,
  })),

  methods: one('Payment methods retrieved successfully', (r: { corridor: Corridor; rate: { rate: number }; methods: PaymentMethod[] }) => ({
    corridor: r.corridor,
    rate: asText(r.rate),
    methods: r.methods.map((m) => variantMethod(m, r.corridor)),
  })),

  /** Spec §4.12 "Other wallet fields: not shown": the balance as a string, businessId. */
  wallets: each('Wallets retrieved successfully', (w: object, ctx) => ({ ...asText(w), businessId: ctx.req.business.id })),

  registerWebhook: one('Webhook registered successfully', subscription),
  listWebhooks: each('Webhooks retrieved successfully', subscription),
  getWebhook: one('Webhook retrieved successfully', subscription),
  updateWebhook: one('Webhook updated successfully', subscription),
  deleteWebhook: one('Webhook deleted successfully', (s: Subscription, ctx) => subscription(s, ctx, ctx.sb.clock.iso())),

  /** Spec §2 Country types only some fields: id a number, cpi and gdpPerCapitaInUsd as text, extra fields. */
  countries: each('Countries retrieved successfully', (c: Country, ctx) => ({
    ...c,
    id: typeof c.id === 'number' ? c.id : ctx.sb.store.countries.findIndex((x) => x.code === c.code) + 1,
    cpi: c.cpi === null ? null : String(c.cpi),
    gdpPerCapitaInUsd: c.gdpPerCapitaInUsd === null ? null : String(c.gdpPerCapitaInUsd),
    slug: c.name.toLowerCase().replace(/[^a-z0-9]+/g, '-'),
    isActive: true,
  })),

  /** Spec §2 Wallet transaction ("beyond these: not shown"): amounts as strings, extra fields. */
  transactions: each('Transactions retrieved successfully', (t: ReturnType<typeof views.transactionView>, ctx) => ({
    ...asText(t),
    walletId: t.wallet.walletId,
    businessId: ctx.req.business.id,
  })),
};

/** Spec §7 message is a string; NestJS sends a validation failure's as an array of strings, one per problem (no `errors`). */
function variantError(e: ApiError): Reply {
  if (e.body.error !== 'VALIDATION_ERROR') return e;
  const { errors, ...body } = e.body;
  const message = errors?.length ? errors.map((f) => `${f.field} ${f.message}`) : [body.message].flat();
  return { status: e.status, body: { ...body, message }, ...(e.headers ? { headers: e.headers } : {}) };
}

export function variantReply(name: RouteName, reply: Reply, ctx: Omit<ShapeContext, 'status'>): Reply {
  if (reply instanceof ApiError) return variantError(reply);
  const rewrite = VARIANTS[name];
  if (!rewrite || reply.body === undefined || reply.status >= 300) return reply;
  return { ...reply, body: rewrite(reply.body as never, { ...ctx, status: reply.status }) };
}

const NULL_WHEN_ABSENT = ['newStatusDetail', 'oldStatusDetail', 'informationRequests', 'reason', 'changedBy'];

/** An event's data in the variant reading: absent optional fields null (oldStatus on a swap's creation), wallet events with walletId. */
export function variantEvent(e: StoreEvent, store: Store): StoreEvent {
  const d = e.data;
  if (e.eventType === 'payout.status.changed') {
    const creation = store.swaps.has(String(d.payoutId)) && d.oldStatus === 'PENDING' && d.newStatus === 'PROCESSING';
    return {
      ...e,
      data: {
        ...d,
        oldStatus: creation ? null : d.oldStatus,
        ...Object.fromEntries(NULL_WHEN_ABSENT.map((k) => [k, d[k] ?? null])),
      },
    };
  }
  const tx = store.transactions.find((t) => t.id === d.transactionId);
  return { ...e, data: { ...d, ...(tx ? { walletId: tx.walletId } : {}) } };
}
