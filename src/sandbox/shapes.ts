// The sandbox's second reading of the spec. Where the spec says "not shown" or leaves a shape
// open, the strict views (views.ts, corridors.ts) answer in one reading; with `shapes: 'variant'`
// each route's answer is rewritten here into another plausible one: envelopes
// {statusCode, message, data}, amounts as decimal strings, other identifiers, other fee, settlement
// and field-descriptor shapes, nulls where a value is absent, extra fields. One writer per route,
// and no randomness: a route always answers the same variant shape, so a failing test replays.
// Both readings keep the values and what the spec states: status codes, the error body and its
// codes (§7), the list envelope {data, meta} (§4.4, §4.14, §4.15), the fields it names.
import { UPLOAD_URL_TTL_MS, type PayoutMethod } from '../spec/codes.ts';
import type { RouteName } from './contract.ts';
import type { Sandbox } from './context.ts';
import type { Request } from './request.ts';
import { ApiError, type Reply } from './error-answers.ts';
import { Dec, amountText, fromApi, minorUnits } from '../money.ts';
import { FIELDS, publishedRow } from './rules.ts';
import type { Country, Store, StoreEvent } from './store.ts';
import type { methodView, quoteView } from './corridors.ts';
import type * as views from './views.ts';
import type { subscriptionView } from './webhooks.ts';

// The strict bodies rewritten here, as their views write them.
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

// ---------------------------------------------------------------- values

/** An amount as a decimal string of at least the currency's minor digits ("1000.00", "1530" for JPY-like), never cut. */
const amountOf = (value: number | string, currency: string): string => amountText(fromApi(value), currency, { exact: true });
const rateText = (value: number | string): string => fromApi(value).toFixed();

/** The envelope of many services built on NestJS: the answer's status, a message, the object in data. */
const envelope = (ctx: ShapeContext, message: string, data: unknown) => ({ statusCode: ctx.status, message, data });

/** A list in the same envelope, keeping the spec's {data, meta} where there is a meta. */
const listEnvelope = <T, U>(ctx: ShapeContext, message: string, page: { data: T[]; meta?: views.Page<T>['meta'] }, item: (t: T) => U) => ({
  statusCode: ctx.status,
  message,
  data: page.data.map(item),
  ...(page.meta ? { meta: page.meta } : {}),
});

const links = (ctx: ShapeContext, path: string) => ({ self: { href: `${ctx.sb.baseUrl()}${path}` } });

/** The amounts of a payout or swap item as strings, the rate as a string. */
const itemAmounts = (p: ListItem) => ({
  sourceAmount: amountOf(p.sourceAmount, p.sourceCurrency),
  destinationAmount: amountOf(p.destinationAmount, p.destinationCurrency),
  transactionFees: amountOf(p.transactionFees, p.sourceCurrency),
  exchangeRate: rateText(p.exchangeRate),
});

/** A method's fee (spec §4.11: "not shown"): {amount, currency, type: 'FLAT'}, SWIFT's tiered, NIP's a bare number, ALIPAY's absent. */
const FEE_SHAPE: Partial<Record<PayoutMethod, 'number' | 'absent'>> = { NIP: 'number', ALIPAY: 'absent' };

/** Required fields (spec §2) as plain names for these methods, descriptors without `required` for the others; groups as {oneOf: [[names]]}. */
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
  let min = new Dec(0);
  const tiers = m.fee.bands.map((b) => {
    const tier = {
      min: amountOf(min.toFixed(), currency),
      max: b.below === null ? null : amountOf(new Dec(b.below).minus(unit).toFixed(), currency),
      amount: amountOf(b.amount, currency),
    };
    if (b.below !== null) min = new Dec(b.below);
    return tier;
  });
  return { type: 'TIERED', currency, tiers };
}

function variantMethod(m: PaymentMethod, corridor: { destinationCurrency: string; destinationCountryCode: string }) {
  const { code } = m;
  const names = NAMES_ONLY.has(code);
  const field = (f: Field) => ('oneOf' in f ? { oneOf: f.oneOf.map((group) => group.map((d) => d.name)) } : names ? f.name : describe(f));
  // Spec §1.9 gives settlement as text; this reading adds the hours it spans (rules.ts).
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

/** The variant of each spec route's success answer, taking the body its route's strict view gives. */
const VARIANTS: Partial<Record<RouteName, (body: never, ctx: ShapeContext) => unknown>> = {
  // ---------------------------------------------------------------- payouts (§4.1-4.5)

  /** Spec §4.1 "Response 200": the same fields, amounts as strings, in the envelope. */
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

  /** Spec §2 Payout: optional fields present as null when absent, amounts as strings, extra fields. */
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

  /** Spec §4.5 response, in the envelope; each stored document also says it is not deleted. */
  patchDocuments: (r: { payoutId: string; totalDocuments: number; documents: views.Payout['supportingDocuments'] }, ctx: ShapeContext) =>
    envelope(ctx, 'Documents attached successfully', { ...r, documents: r.documents.map((d) => ({ ...d, deletedAt: null })) }),

  /** Spec §4.6, in the envelope, with how long the uploadUrl lasts (spec §8: 15 minutes) in seconds. */
  uploadUrl: (u: { uploadUrl: string; documentUrl: string; headers: Record<string, string> }, ctx: ShapeContext) =>
    envelope(ctx, 'Upload URL created successfully', { ...u, expiresIn: UPLOAD_URL_TTL_MS / 1000 }),

  // ---------------------------------------------------------------- swaps (§4.7, §4.8)

  swap: (s: ReturnType<typeof views.swapCreatedView>, ctx: ShapeContext) =>
    envelope(ctx, 'Swap initiated successfully', { ...s, ...itemAmounts(s), _links: links(ctx, `${ctx.req.path}s/${s.id}`) }),

  listSwaps: (page: views.Page<ListItem>, ctx: ShapeContext) =>
    listEnvelope(ctx, 'Swaps retrieved successfully', page, (s) => ({ ...s, ...itemAmounts(s) })),

  getSwap: (s: ReturnType<typeof views.swapView>, ctx: ShapeContext) =>
    envelope(ctx, 'Swap retrieved successfully', { ...s, ...itemAmounts(s), businessId: ctx.req.business.id, deletedAt: null }),

  // ---------------------------------------------------------------- pairs and methods (§4.9-4.11)

  /** Spec §2 Currency pair ("other pair fields: not shown"): `id`, a `code` "USD/NGN", no `enabled` (§4.9 lists enabled ones), the rate as text. */
  pairs: (list: { data: Pair[] }, ctx: ShapeContext) =>
    listEnvelope(ctx, 'Currency pairs retrieved successfully', list, (p) => ({
      id: p.currencyPairId,
      code: `${p.baseCurrency}/${p.quoteCurrency}`,
      baseCurrency: p.baseCurrency,
      quoteCurrency: p.quoteCurrency,
      rate: rateText(p.rate),
    })),

  /** Spec §4.10 "response of this route: not shown": the pair's id, its currencies and isEnabled. */
  togglePair: (p: Pair, ctx: ShapeContext) =>
    envelope(ctx, 'Currency pair updated successfully', {
      id: p.currencyPairId,
      baseCurrency: p.baseCurrency,
      quoteCurrency: p.quoteCurrency,
      isEnabled: p.enabled,
    }),

  /** Spec §4.11: the corridor, the rate (an object with field rate, here a string) and the methods. */
  methods: (
    r: { corridor: { destinationCurrency: string; destinationCountryCode: string }; rate: { rate: number }; methods: PaymentMethod[] },
    ctx: ShapeContext,
  ) =>
    envelope(ctx, 'Payment methods retrieved successfully', {
      corridor: r.corridor,
      rate: { rate: rateText(r.rate.rate) },
      methods: r.methods.map((m) => variantMethod(m, r.corridor)),
    }),

  /** Spec §4.12: walletId and currency; "Other wallet fields: not shown": the balance as a string, businessId. */
  wallets: (list: { data: ReturnType<typeof views.walletView>[] }, ctx: ShapeContext) =>
    listEnvelope(ctx, 'Wallets retrieved successfully', list, (w) => ({
      ...w,
      balance: amountOf(w.balance, w.currency),
      businessId: ctx.req.business.id,
    })),

  // ---------------------------------------------------------------- webhooks (§4.13)

  registerWebhook: (s: Subscription, ctx: ShapeContext) => envelope(ctx, 'Webhook registered successfully', subscription(s, ctx)),
  listWebhooks: (list: { data: Subscription[] }, ctx: ShapeContext) =>
    listEnvelope(ctx, 'Webhooks retrieved successfully', list, (s) => subscription(s, ctx)),
  getWebhook: (s: Subscription, ctx: ShapeContext) => envelope(ctx, 'Webhook retrieved successfully', subscription(s, ctx)),
  updateWebhook: (s: Subscription, ctx: ShapeContext) => envelope(ctx, 'Webhook updated successfully', subscription(s, ctx)),
  deleteWebhook: (s: Subscription, ctx: ShapeContext) =>
    envelope(ctx, 'Webhook deleted successfully', subscription(s, ctx, ctx.sb.clock.iso())),

  // ---------------------------------------------------------------- public routes (§4.14, §4.15)

  /** Spec §2 Country types only some fields: here id a number, cpi and gdpPerCapitaInUsd as decimal text, extra fields. */
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

  /** Spec §2 Wallet transaction: "Item fields of data beyond these: not shown": amounts as strings, extra fields. */
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

/**
 * Spec §7 states the error body {statusCode, message (string), error}; real NestJS services send
 * a validation failure's message as an array of strings, one per problem. This reading does so
 * for VALIDATION_ERROR (statusCode and the code stay), without the sandbox's own `errors` list.
 */
function variantError(e: ApiError): Reply {
  if (e.body.error !== 'VALIDATION_ERROR') return e;
  const { errors, ...body } = e.body;
  const message = errors?.length ? errors.map((f) => `${f.field} ${f.message}`) : [body.message].flat();
  return { status: e.status, body: { ...body, message }, ...(e.headers ? { headers: e.headers } : {}) };
}

/** A spec route's answer rewritten into the variant reading. */
export function variantReply(name: RouteName, reply: Reply, ctx: Omit<ShapeContext, 'status'>): Reply {
  if (reply instanceof ApiError) return variantError(reply);
  const rewrite = VARIANTS[name];
  if (!rewrite || reply.body === undefined || reply.status >= 300) return reply;
  // The one place a strict body is taken as the shape its route's view gives it.
  return { ...reply, body: rewrite(reply.body as never, { ...ctx, status: reply.status }) };
}

// ---------------------------------------------------------------- webhook events (§6)

/**
 * An event's data in the variant reading: payout.status.changed with its optional fields (spec §6)
 * null when absent and oldStatus null on a swap's creation (the spec names none before it); wallet
 * events with the walletId added. Amounts stay numbers: §6 types them.
 */
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
