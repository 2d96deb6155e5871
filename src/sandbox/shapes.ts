// The variant reading (README "Readings of the spec"): each route's strict answer rewritten into another
// plausible one (envelopes, decimal strings, other names, nulls, extra fields), the same on every call.
// Kept as the spec states them: status codes, the error body and its codes (§7), {data, meta} (§4.4, §4.14, §4.15).
import { UPLOAD_URL_TTL_MS, type PayoutMethod } from '../spec/codes.ts';
import type { RouteName } from './contract.ts';
import type { Sandbox } from './context.ts';
import { ApiError, type Reply, type Request } from './http.ts';
import { Dec, amountText, fromApi, minorUnits } from '../money.ts';
import { FIELDS, publishedRow } from './rules.ts';
import type { Country, Store, StoreEvent } from './store.ts';
import type { methodView, quoteView } from './corridors.ts';
import type * as views from './views.ts';
import type { subscriptionView } from './webhooks.ts';

type Quote = ReturnType<typeof quoteView>;
type ListItem = ReturnType<typeof views.payoutListItem | typeof views.swapListItem>;
type PaymentMethod = ReturnType<typeof methodView>;
type Subscription = ReturnType<typeof subscriptionView>;
type Pair = ReturnType<typeof views.pairView>;

interface ShapeContext {
  sb: Sandbox;
  req: Request;
  status: number;
}

const amountOf = (value: number | string, currency: string): string => amountText(fromApi(value), currency, { exact: true });
const rateText = (value: number | string): string => fromApi(value).toFixed();

/** The envelope of NestJS services: the status, a message, the object in data. */
const envelope = (ctx: ShapeContext, message: string, data: unknown) => ({ statusCode: ctx.status, message, data });

const listEnvelope = <T, U>(ctx: ShapeContext, message: string, page: { data: T[]; meta?: views.Page<T>['meta'] }, item: (t: T) => U) => ({
  statusCode: ctx.status,
  message,
  data: page.data.map(item),
  ...(page.meta ? { meta: page.meta } : {}),
});

const links = (ctx: ShapeContext, path: string) => ({ self: { href: `${ctx.sb.baseUrl()}${path}` } });

const itemAmounts = (p: ListItem) => ({
  sourceAmount: amountOf(p.sourceAmount, p.sourceCurrency),
  destinationAmount: amountOf(p.destinationAmount, p.destinationCurrency),
  transactionFees: amountOf(p.transactionFees, p.sourceCurrency),
  exchangeRate: rateText(p.exchangeRate),
});

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
  const { bands } = m.fee;
  const tiers = bands.map((b, i) => ({
    min: amountOf(bands[i - 1]?.below ?? 0, currency),
    max: b.below === null ? null : amountOf(new Dec(b.below).minus(unit).toFixed(), currency),
    amount: amountOf(b.amount, currency),
  }));
  return { type: 'TIERED', currency, tiers };
}

function variantMethod(m: PaymentMethod, corridor: { destinationCurrency: string; destinationCountryCode: string }) {
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
  quote: (q: Quote, ctx: ShapeContext) =>
    envelope(ctx, 'Quote retrieved successfully', {
      ...q,
      sourceAmount: amountOf(q.sourceAmount, q.sourceCurrency),
      destinationAmount: amountOf(q.destinationAmount, q.destinationCurrency),
      totalDeductible: amountOf(q.totalDeductible, q.sourceCurrency),
      exchangeRate: rateText(q.exchangeRate),
      fee: { amount: amountOf(q.fee.amount, q.fee.currency), currency: q.fee.currency },
    }),

  /** Spec §4.2: "the response includes at least id, status PENDING, payoutRef, ...": that minimum alone (a replay too). */
  initiate: (p: views.Payout, ctx: ShapeContext) =>
    envelope(ctx, 'Payout initiated successfully', {
      id: p.id,
      status: p.status,
      payoutRef: p.payoutRef,
      sourceAmount: amountOf(p.sourceAmount, p.sourceCurrency),
      destinationAmount: amountOf(p.destinationAmount, p.destinationCurrency),
      exchangeRate: rateText(p.exchangeRate),
    }),

  /** Spec §2 Payout: absent optional fields null, amounts as strings, extra fields. */
  getPayout: (p: views.Payout, ctx: ShapeContext) =>
    envelope(ctx, 'Payout retrieved successfully', {
      ...p,
      ...itemAmounts(p),
      statusDetail: p.statusDetail ?? null,
      informationRequests: p.informationRequests ?? null,
      businessId: ctx.req.business.id,
      _links: links(ctx, ctx.req.path),
    }),

  listPayouts: (page: views.Page<ListItem>, ctx: ShapeContext) =>
    listEnvelope(ctx, 'Payouts retrieved successfully', page, (p) => ({ ...p, ...itemAmounts(p) })),

  patchDocuments: (r: { payoutId: string; totalDocuments: number; documents: views.Payout['supportingDocuments'] }, ctx: ShapeContext) =>
    envelope(ctx, 'Documents attached successfully', { ...r, documents: r.documents.map((d) => ({ ...d, deletedAt: null })) }),

  /** Spec §4.6, with how long the uploadUrl lasts (spec §8: 15 minutes), in seconds. */
  uploadUrl: (u: { uploadUrl: string; documentUrl: string; headers: Record<string, string> }, ctx: ShapeContext) =>
    envelope(ctx, 'Upload URL created successfully', { ...u, expiresIn: UPLOAD_URL_TTL_MS / 1000 }),

  swap: (s: ReturnType<typeof views.swapCreatedView>, ctx: ShapeContext) =>
    envelope(ctx, 'Swap initiated successfully', { ...s, ...itemAmounts(s), _links: links(ctx, `${ctx.req.path}s/${s.id}`) }),

  listSwaps: (page: views.Page<ListItem>, ctx: ShapeContext) =>
    listEnvelope(ctx, 'Swaps retrieved successfully', page, (s) => ({ ...s, ...itemAmounts(s) })),

  getSwap: (s: ReturnType<typeof views.swapView>, ctx: ShapeContext) =>
    envelope(ctx, 'Swap retrieved successfully', { ...s, ...itemAmounts(s), businessId: ctx.req.business.id, deletedAt: null }),

  /** Spec §2 Currency pair ("other fields: not shown"): `id`, a `code` "USD/NGN", no `enabled`, the rate as text. */
  pairs: (list: { data: Pair[] }, ctx: ShapeContext) =>
    listEnvelope(ctx, 'Currency pairs retrieved successfully', list, (p) => ({
      id: p.currencyPairId,
      code: `${p.baseCurrency}/${p.quoteCurrency}`,
      baseCurrency: p.baseCurrency,
      quoteCurrency: p.quoteCurrency,
      rate: rateText(p.rate),
    })),

  /** Spec §4.10 "response: not shown": the pair's id, its currencies and isEnabled. */
  togglePair: (p: Pair, ctx: ShapeContext) =>
    envelope(ctx, 'Currency pair updated successfully', {
      id: p.currencyPairId,
      baseCurrency: p.baseCurrency,
      quoteCurrency: p.quoteCurrency,
      isEnabled: p.enabled,
    }),

  methods: (
    r: { corridor: { destinationCurrency: string; destinationCountryCode: string }; rate: { rate: number }; methods: PaymentMethod[] },
    ctx: ShapeContext,
  ) =>
    envelope(ctx, 'Payment methods retrieved successfully', {
      corridor: r.corridor,
      rate: { rate: rateText(r.rate.rate) },
      methods: r.methods.map((m) => variantMethod(m, r.corridor)),
    }),

  /** Spec §4.12 "Other wallet fields: not shown": the balance as a string, businessId. */
  wallets: (list: { data: ReturnType<typeof views.walletView>[] }, ctx: ShapeContext) =>
    listEnvelope(ctx, 'Wallets retrieved successfully', list, (w) => ({
      ...w,
      balance: amountOf(w.balance, w.currency),
      businessId: ctx.req.business.id,
    })),

  registerWebhook: (s: Subscription, ctx: ShapeContext) => envelope(ctx, 'Webhook registered successfully', subscription(s, ctx)),
  listWebhooks: (list: { data: Subscription[] }, ctx: ShapeContext) =>
    listEnvelope(ctx, 'Webhooks retrieved successfully', list, (s) => subscription(s, ctx)),
  getWebhook: (s: Subscription, ctx: ShapeContext) => envelope(ctx, 'Webhook retrieved successfully', subscription(s, ctx)),
  updateWebhook: (s: Subscription, ctx: ShapeContext) => envelope(ctx, 'Webhook updated successfully', subscription(s, ctx)),
  deleteWebhook: (s: Subscription, ctx: ShapeContext) =>
    envelope(ctx, 'Webhook deleted successfully', subscription(s, ctx, ctx.sb.clock.iso())),

  /** Spec §2 Country types only some fields: id a number, cpi and gdpPerCapitaInUsd as text, extra fields. */
  countries: (page: views.Page<Country> & { statusCode: number; message: string }, ctx: ShapeContext) => ({
    ...page,
    data: page.data.map((c) => ({
      ...c,
      id: typeof c.id === 'number' ? c.id : ctx.sb.store.countries.findIndex((x) => x.code === c.code) + 1,
      cpi: c.cpi === null ? null : String(c.cpi),
      gdpPerCapitaInUsd: c.gdpPerCapitaInUsd === null ? null : String(c.gdpPerCapitaInUsd),
      slug: c.name.toLowerCase().replace(/[^a-z0-9]+/g, '-'),
      isActive: true,
    })),
  }),

  /** Spec §2 Wallet transaction ("beyond these: not shown"): amounts as strings, extra fields. */
  transactions: (
    page: views.Page<ReturnType<typeof views.transactionView>> & { statusCode: number; message: string },
    ctx: ShapeContext,
  ) => ({
    ...page,
    data: page.data.map((t) => ({
      ...t,
      amount: amountOf(t.amount, t.currency),
      balanceBefore: amountOf(t.balanceBefore, t.currency),
      balanceAfter: amountOf(t.balanceAfter, t.currency),
      walletId: t.wallet.walletId,
      businessId: ctx.req.business.id,
    })),
  }),
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
        newStatusDetail: d.newStatusDetail ?? null,
        oldStatusDetail: d.oldStatusDetail ?? null,
        informationRequests: d.informationRequests ?? null,
        reason: d.reason ?? null,
        changedBy: d.changedBy ?? null,
      },
    };
  }
  const tx = store.transactions.find((t) => t.id === d.transactionId);
  return { ...e, data: { ...d, ...(tx ? { walletId: tx.walletId } : {}) } };
}
