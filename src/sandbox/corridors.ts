// Corridors: the rate between two currencies for a business (spec §1.7, §4.9), a method's fee (§1.9),
// conversion, pricing and the methods route's items; the routes are in routes/pairs.ts. All arithmetic is decimal.
import { canonicalMethod, type PayoutMethod } from '../spec/codes.ts';
import type { MethodsQuery, QuoteRequest } from '../spec/schemas.ts';
import { Dec, minorUnits, roundTo, toApi } from '../money.ts';
import { apiError, checkFields, fieldError } from './http.ts';
import {
  ALWAYS_REQUIRED,
  FIELDS,
  METHOD_FIELDS,
  OPTIONAL_FOR_EVERY_METHOD,
  corridorMethods,
  groupName,
  publishedRow,
  type PublishedRow,
} from './rules.ts';
import { ownedBy, type PairRec, type Store } from './store.ts';

type UsableCorridor = { kind: 'same' } | { kind: 'direct' | 'reverse'; pair: PairRec };
type Corridor = UsableCorridor | { kind: 'disabled'; pair: PairRec } | { kind: 'none' };

/** Spec §1.7: same currency converts at 1; A/B serves A→B at rate and B→A at 1/rate; the enabled pair in the direction of travel wins. */
export function corridorOf(store: Store, businessId: string, source: string, destination: string): Corridor {
  if (source === destination) return { kind: 'same' };
  const pairs = ownedBy(store.pairs.values(), businessId);
  const direct = pairs.find((p) => p.baseCurrency === source && p.quoteCurrency === destination);
  const reverse = pairs.find((p) => p.baseCurrency === destination && p.quoteCurrency === source);
  if (direct?.enabled) return { kind: 'direct', pair: direct };
  if (reverse?.enabled) return { kind: 'reverse', pair: reverse };
  const known = direct ?? reverse;
  return known ? { kind: 'disabled', pair: known } : { kind: 'none' };
}

export function usableCorridor(store: Store, businessId: string, source: string, destination: string): UsableCorridor {
  const c = corridorOf(store, businessId, source, destination);
  if (c.kind === 'same' || c.kind === 'direct' || c.kind === 'reverse') return c;
  throw apiError(400, 'CORRIDOR_NOT_ENABLED', `The currency pair ${source}/${destination} is not enabled for this business`);
}

function exactRate(c: UsableCorridor): Dec {
  if (c.kind === 'same') return new Dec(1);
  return c.kind === 'direct' ? c.pair.rate : new Dec(1).div(c.pair.rate);
}

export const reportedRate = (c: UsableCorridor): Dec => (c.kind === 'reverse' ? exactRate(c).toSignificantDigits(12) : exactRate(c));

/** Spec §1.9 fee in the source currency (§4.1); one priced in the destination currency (NIP's "100 NGN") converted at the rate. */
function feeFor(c: UsableCorridor, row: PublishedRow, sourceAmount: Dec, sourceCurrency: string, destinationCurrency: string): Dec {
  const band = row.fee.kind === 'flat' ? row.fee : row.fee.bands.find((b) => b.below === null || sourceAmount.lessThan(b.below));
  const fee = new Dec(band?.amount ?? 0);
  const priced = row.fee.kind === 'flat' ? row.fee.currency : undefined;
  return roundTo(priced && priced !== sourceCurrency && priced === destinationCurrency ? fee.dividedBy(exactRate(c)) : fee, sourceCurrency);
}

/** Rounded half-up to the destination's minor units; in reverse divided by the exact rate, so a client recomputing from GET pairs agrees. */
export function convert(c: UsableCorridor, amount: Dec, destinationCurrency: string): Dec {
  const raw = c.kind === 'same' ? amount : c.kind === 'direct' ? amount.times(c.pair.rate) : amount.div(c.pair.rate);
  return roundTo(raw, destinationCurrency);
}

const notIso = (c: string) => (minorUnits(c) === undefined ? `${c} is not an ISO 4217 currency code` : undefined);
/** Spec §8 "minimum or maximum payout amounts: not shown": the currency's minor units, at most 1e9 (exact as a JSON number). */
const MAX_AMOUNT = new Dec('1000000000');
export function amountProblem(amount: Dec, currency: string): string | undefined {
  const places = minorUnits(currency);
  if (places === undefined) return notIso(currency);
  if (amount.decimalPlaces() > places) return `${currency} amounts have at most ${places} decimals`;
  if (amount.greaterThan(MAX_AMOUNT)) return `at most ${MAX_AMOUNT.toFixed()} per payout`;
  return undefined;
}

/** The checks quote and initiate share, in this order: amount and currencies, method, prohibited destination, corridor, method on it. */
export function price(store: Store, businessId: string, r: QuoteRequest) {
  const sourceAmount = new Dec(String(r.sourceAmount));
  checkFields({
    sourceCurrency: notIso(r.sourceCurrency),
    sourceAmount: notIso(r.sourceCurrency) ? undefined : amountProblem(sourceAmount, r.sourceCurrency),
    destinationCurrency: notIso(r.destinationCurrency),
  });
  const method = canonicalMethod(r.method);
  if (!method) throw fieldError('method', `unknown payout method "${r.method}"; one of ${Object.keys(METHOD_FIELDS).join(', ')}`);
  refuseProhibited(store, r.destinationCountryCode);
  const corridor = usableCorridor(store, businessId, r.sourceCurrency, r.destinationCurrency);
  const available = corridorMethods(r.sourceCurrency, r.destinationCurrency, r.destinationCountryCode);
  const row = publishedRow(method, r.destinationCurrency, r.destinationCountryCode);
  if (!available.includes(method) || !row) {
    // "Complete list of error codes for initiate: not shown": a VALIDATION_ERROR of `method`
    throw fieldError(
      'method',
      `${method} is not available from ${r.sourceCurrency} to ${r.destinationCurrency} in ${r.destinationCountryCode}` +
        (available.length ? `; available: ${available.join(', ')}` : '; no method serves this corridor'),
    );
  }
  const fee = feeFor(corridor, row, sourceAmount, r.sourceCurrency, r.destinationCurrency);
  const destinationAmount = convert(corridor, sourceAmount, r.destinationCurrency);
  // Reading ("minimum payout amounts: not shown"): a payout must deliver something.
  checkFields({ sourceAmount: destinationAmount.isZero() ? `converts to 0 ${r.destinationCurrency}: too small to send` : undefined });
  return {
    method,
    sourceAmount,
    destinationAmount,
    exchangeRate: reportedRate(corridor),
    fee,
    total: sourceAmount.plus(fee),
  };
}

/** Spec §2 Country isProhibited; the refusal's code is "not shown": 400 PROHIBITED_DESTINATION. A country not listed is not refused. */
export function refuseProhibited(store: Store, countryCode: string): void {
  const c = store.countries.find((x) => x.code === countryCode);
  if (c?.isProhibited) throw apiError(400, 'PROHIBITED_DESTINATION', `Payouts to ${c.name} (${c.code}) are not allowed`);
}

export function quoteView(p: ReturnType<typeof price>, { sourceCurrency, destinationCurrency }: QuoteRequest) {
  return {
    sourceAmount: toApi(p.sourceAmount),
    sourceCurrency,
    destinationAmount: toApi(p.destinationAmount),
    destinationCurrency,
    totalDeductible: toApi(p.total),
    exchangeRate: toApi(p.exchangeRate),
    method: p.method,
    fee: { amount: toApi(p.fee), currency: sourceCurrency },
  };
}

/** Spec §2 Payment method: "Each field descriptor has a type (string, email, phone, number)"; email and phone have their own. */
function descriptor(name: string, required: boolean) {
  const hint = FIELDS[name]?.validation;
  const type = name === 'email' ? 'email' : name === 'phoneNumber' ? 'phone' : 'string';
  return { name, type, required, ...(hint ? { validation: hint } : {}) };
}

/**
 * One item of the methods route, for a method `corridorMethods` offers. Readings: fee in the source currency
 * (SWIFT's first band, with `bands`); requiredFields: the always required, the method's, then one `oneOf`
 * group named as MISSING_REQUIRED_FIELDS names it; optionalFields add countryCode and remitterAddress (spec §2 Payment method).
 */
export function methodView(method: PayoutMethod, q: MethodsQuery, corridor: UsableCorridor) {
  const rule = METHOD_FIELDS[method];
  const row = publishedRow(method, q.destinationCurrency, q.destinationCountryCode)!;
  const group = rule.oneOf && {
    name: groupName(rule.oneOf),
    required: true,
    oneOf: rule.oneOf.map((g) => g.map((f) => descriptor(f, true))),
  };
  const { bands } = row.fee.kind === 'bands' ? row.fee : { bands: undefined };
  return {
    code: method,
    name: rule.name,
    settlement: row.settlement.text,
    fee: {
      currency: q.sourceCurrency,
      amount: toApi(feeFor(corridor, row, new Dec(0), q.sourceCurrency, q.destinationCurrency)),
      ...(bands
        ? { bands: bands.map((b) => ({ below: b.below === null ? null : toApi(new Dec(b.below)), amount: toApi(new Dec(b.amount)) })) }
        : {}),
    },
    requiredFields: [...[...ALWAYS_REQUIRED, ...rule.required].map((f) => descriptor(f, true)), ...(group ? [group] : [])],
    optionalFields: [...rule.optional, ...OPTIONAL_FOR_EVERY_METHOD].map((f) => descriptor(f, false)),
  };
}
