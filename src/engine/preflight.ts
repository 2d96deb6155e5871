// Preflight: a few requests per batch, never per row: wallets, countries (prohibited refused, trading
// hours warned about), pairs, and the methods of each distinct corridor (authoritative for requiredFields).
import type { RowList } from '../files/spill.ts';
import type { PayoutClient } from '../client/client.ts';
import { PayoutApiError } from '../client/errors.ts';
import { Dec, fromApi, roundTo, type Dec as DecT } from '../money.ts';
import { canonicalMethod } from '../spec/codes.ts';
import type { CountryAnswer, CurrencyPairAnswer, MethodFee, PaymentMethodAnswer, RequiredField, WalletAnswer } from '../client/answers.ts';
import type { PayoutRow } from '../validation/row-schemas.ts';

export interface CorridorInfo {
  sourceCurrency: string;
  destinationCurrency: string;
  destinationCountryCode: string;
  enabled: boolean;
  /** The methods route's rate, as text (the spec does not state its direction). */
  rate?: string;
  methods: PaymentMethodAnswer[];
  /** The pair to toggle when not enabled (GET pairs?status=all). */
  pairId?: string;
  /** Enabled by this preflight (--enable-pairs). */
  enabledNow?: boolean;
  error?: string;
}

export interface RowIssue {
  /** INVALID: the row is wrong for the service; NOT_SENT: the account must change first. */
  status: 'INVALID' | 'NOT_SENT';
  code: string;
  message: string;
}

export interface PreflightResult {
  wallets: WalletAnswer[];
  corridors: CorridorInfo[];
  rowIssues: Map<number, RowIssue>;
  /** Per row, in its source currency, from the methods route's fee. */
  estimatedFees: Map<number, DecT>;
  /** Rows whose fee shape cannot be read: the service's answer decides. */
  feesUnknown: Set<number>;
  /** Per row: corridor, method and fee band; `plan --out` quotes once per group (plan-command.ts). */
  quoteGroups: Map<number, string>;
  warnings: string[];
  requests: number;
  /** The pairs (spec §4.9), when read: for corridors not enabled, or to price a short wallet's swap. */
  pairs?: CurrencyPairAnswer[];
}

export const corridorKey = (c: { sourceCurrency: string; destinationCurrency: string; destinationCountryCode: string }) =>
  `${c.sourceCurrency}>${c.destinationCurrency}@${c.destinationCountryCode}`;

/** The tier of a tiered fee that holds `amount`: [from, below) or [from, upTo], open where not given. */
function tierOf(fee: Extract<MethodFee, { kind: 'tiered' }>, amount: DecT) {
  return fee.tiers.find(
    (t) =>
      (t.from === undefined || amount.greaterThanOrEqualTo(fromApi(t.from))) &&
      (t.below === undefined || amount.lessThan(fromApi(t.below))) &&
      (t.upTo === undefined || amount.lessThanOrEqualTo(fromApi(t.upTo))),
  );
}

/**
 * A method's estimated fee for one amount (flat, or by tier as SWIFT's bands, spec §1.9); undefined
 * when unreadable. A fee in another currency (NIP's "100 NGN") is converted at the corridor rate read
 * as destination units per source unit: the spec does not state its direction (§2), so an estimate.
 */
function methodFee(m: PaymentMethodAnswer, amount: DecT, sourceCurrency: string, rate: DecT | undefined): DecT | undefined {
  const f = m.fee;
  const given = f.kind === 'flat' ? f.amount : f.kind === 'tiered' ? tierOf(f, amount)?.amount : undefined;
  if (given === undefined || f.kind === 'unknown') return undefined;
  let fee = fromApi(given);
  if (f.currency !== undefined && f.currency !== sourceCurrency) {
    if (!rate || rate.isZero()) return undefined;
    fee = fee.dividedBy(rate);
  }
  return roundTo(fee, sourceCurrency);
}

/** The fee band of an amount: one for a flat fee, the tier of a tiered one, the amount itself when the shape is unknown. */
function feeBand(m: PaymentMethodAnswer, amount: DecT): string {
  if (m.fee.kind === 'flat') return 'flat';
  if (m.fee.kind === 'tiered') {
    const tier = tierOf(m.fee, amount);
    if (tier) return `tier ${m.fee.tiers.indexOf(tier)}`;
  }
  return `amount ${amount.toFixed()}`;
}

const present = (row: PayoutRow, name: string): boolean => {
  if (name === 'remitterAddress') return !!row.remitterAddress;
  const v = (row.beneficiary as Record<string, unknown>)[name];
  return typeof v === 'string' ? v.trim() !== '' : v !== undefined && v !== null;
};

/** The required fields the row lacks (a one-of group as "a | b"); required unless marked `required: false`. */
function missingRequired(row: PayoutRow, requiredFields: readonly RequiredField[]): string[] {
  return requiredFields.flatMap((f) => {
    if (f.required === false) return [];
    if (!('oneOf' in f)) return present(row, f.name) ? [] : [f.name];
    return f.oneOf.some((g) => g.every((d) => present(row, d.name)))
      ? []
      : [f.oneOf.map((g) => g.map((d) => d.name).join('+')).join(' | ')];
  });
}

function minutes(hhmmss: string | undefined): number | undefined {
  const m = /^(\d{1,2}):(\d{2})(?::(\d{2}))?$/.exec(hhmmss ?? '');
  return m ? Number(m[1]) * 60 + Number(m[2]) : undefined;
}

/** Is `now` outside the country's trading hours (in its own time zone)? undefined: cannot tell. */
function outsideTradingHours(country: CountryAnswer, now: Date): boolean | undefined {
  const start = minutes(country.tradingStartTime);
  const end = minutes(country.tradingEndTime);
  if (start === undefined || end === undefined || start === end || country.timeZone === undefined) return undefined;
  const local = (((now.getUTCHours() * 60 + now.getUTCMinutes() + Math.round(country.timeZone * 60)) % 1440) + 1440) % 1440;
  return start < end ? local < start || local >= end : local < start && local >= end;
}

/** Promise.all that waits for every promise before it throws the first error (in list order). */
async function settledAll<T extends readonly unknown[]>(promises: { [K in keyof T]: Promise<T[K]> }): Promise<T> {
  await Promise.allSettled(promises);
  // (every one settled: Promise.all rejects with the first rejected in list order)
  return Promise.all(promises);
}

/** A terminal shows the step preflight is at (`run --plan` waits on it for seconds). */
export type PreflightStep = { step: 'wallets' } | { step: 'methods'; corridors: number; done: number } | { step: 'quotes'; rows: number };

interface PreflightOptions {
  enablePairs?: boolean;
  now?: Date;
  onStep?: (s: PreflightStep) => void;
}

export async function preflight(client: PayoutClient, rows: RowList<PayoutRow>, options: PreflightOptions = {}): Promise<PreflightResult> {
  let requests = 0;
  // nothing to send: no request of the monthly quota
  if (!rows.length) return { ...checkRows([], new Map(), new Map(), new Date()), wallets: [], corridors: [], requests: 0 };
  const counted = <T>(request: () => Promise<T>): Promise<T> => {
    requests++;
    return request();
  };
  // Reads go out together to fill the rate limit; each group settles in full before an error is
  // thrown, so nothing (a pair toggle least of all) runs on once preflight has failed.
  options.onStep?.({ step: 'wallets' });
  const [walletList, list] = await settledAll([counted(() => client.listWallets()), counted(() => client.listCountries({ limit: 250 }))]);
  const countries = new Map<string, CountryAnswer>(list.data.map((c) => [c.code, c]));
  const corridors = new Map<string, CorridorInfo>();
  for (const p of rows) {
    const { sourceCurrency, destinationCurrency, destinationCountryCode } = p;
    if (!corridors.has(corridorKey(p)))
      corridors.set(corridorKey(p), { sourceCurrency, destinationCurrency, destinationCountryCode, enabled: false, methods: [] });
  }
  const loaded: { pairs?: CurrencyPairAnswer[] } = {};
  let allPairs: Promise<CurrencyPairAnswer[]> | undefined;
  // (refused: the swap's pairs are read alone, pipeline.ts planStage)
  const pairsAll = () => (allPairs ??= counted(() => listedPairs(client, true).then((pairs) => (loaded.pairs = pairs) ?? [])));
  const toggled = new Map<string, Promise<unknown>>();
  /** A corridor's methods; one not enabled names its pair (asked once) and with --enable-pairs is toggled once and loaded again. */
  const loadCorridor = async (c: CorridorInfo) => {
    // (no methods read: its rows are refused as prohibited, checkRows)
    if (countries.get(c.destinationCountryCode)?.isProhibited) return;
    const { sourceCurrency, destinationCurrency, destinationCountryCode } = c;
    const load = async () => {
      const r = await counted(() => client.listMethods({ sourceCurrency, destinationCurrency, destinationCountryCode }));
      c.enabled = true;
      c.rate = r.rate === undefined ? undefined : String(r.rate);
      c.methods = r.methods;
    };
    try {
      await load();
    } catch (e) {
      if (!(e instanceof PayoutApiError) || e.status !== 400) throw e;
      c.error = e.code ?? 'CORRIDOR_NOT_ENABLED';
      if (e.code !== 'CORRIDOR_NOT_ENABLED' && e.code !== undefined) return;
      const pair = (await pairsAll()).find(
        (p) =>
          (p.baseCurrency === c.sourceCurrency && p.quoteCurrency === c.destinationCurrency) ||
          (p.baseCurrency === c.destinationCurrency && p.quoteCurrency === c.sourceCurrency),
      );
      c.pairId = pair?.currencyPairId;
      if (options.enablePairs && pair?.currencyPairId !== undefined) {
        const id = pair.currencyPairId;
        await toggled.set(id, toggled.get(id) ?? counted(() => client.togglePair(id, { enabled: true }))).get(id);
        pair.enabled = true; // (the listing, read before, is what a swap is priced from)
        c.enabledNow = true;
        c.error = undefined;
        await load();
      }
    }
  };
  const methodsStep = (done: number) => options.onStep?.({ step: 'methods', corridors: corridors.size, done });
  let done = 0;
  methodsStep(done);
  await settledAll([...corridors.values()].map((c) => loadCorridor(c).then(() => methodsStep(++done))));
  const checked = checkRows(rows, countries, corridors, options.now ?? new Date());
  return { ...checked, wallets: walletList.data, corridors: [...corridors.values()], requests, ...loaded };
}

/** Spec §4.9's "400 when no pair is enabled" (or a service refusing `all`, not in the spec): undefined. */
export async function listedPairs(client: PayoutClient, all?: boolean): Promise<CurrencyPairAnswer[] | undefined> {
  try {
    return (await client.listPairs({ all })).data;
  } catch (e) {
    if (!(e instanceof PayoutApiError) || e.status !== 400 || e.outcome === 'unknown') throw e;
    return undefined;
  }
}

/** Why the service blocks the row: its destination's country, or the beneficiary's (countryCode, SWIFT's beneficiaryCountry). */
function prohibitedCountry(p: PayoutRow, countries: Map<string, CountryAnswer>): string | undefined {
  const { countryCode, beneficiaryCountry } = p.beneficiary;
  for (const [code, field] of [
    [p.destinationCountryCode, ''],
    [countryCode, ", the beneficiary's countryCode"],
    [beneficiaryCountry, ', the beneficiaryCountry'],
  ]) {
    const c = code === undefined ? undefined : countries.get(code);
    if (c?.isProhibited) return `payouts to ${c.name ?? c.code} (${c.code}${field}) are prohibited by the service`;
  }
  return undefined;
}

function checkRows(
  rows: Iterable<PayoutRow>,
  countries: Map<string, CountryAnswer>,
  corridors: Map<string, CorridorInfo>,
  now: Date,
): Pick<PreflightResult, 'rowIssues' | 'estimatedFees' | 'feesUnknown' | 'quoteGroups' | 'warnings'> {
  const rowIssues = new Map<number, RowIssue>();
  const estimatedFees = new Map<number, DecT>();
  const feesUnknown = new Set<number>();
  const quoteGroups = new Map<number, string>();
  const noted = new Map<string, string>();
  const closed = new Map<string, CountryAnswer>();
  const closedRows: number[] = [];
  const noteOnce = (key: string, warning: string) => noted.has(key) || noted.set(key, warning);
  for (const p of rows) {
    const { rowNumber } = p;
    const country = countries.get(p.destinationCountryCode);
    const prohibited = prohibitedCountry(p, countries);
    if (prohibited) {
      rowIssues.set(rowNumber, { status: 'INVALID', code: 'PROHIBITED_DESTINATION', message: prohibited });
      continue;
    }
    if (country && outsideTradingHours(country, now)) {
      closed.set(country.code, country);
      closedRows.push(rowNumber);
    }
    const c = corridors.get(corridorKey(p))!;
    const found = methodFor(p, c);
    if (found.issue) {
      rowIssues.set(rowNumber, found.issue);
      continue;
    }
    const m = found.method;
    if (!m.requiredFields) {
      noteOnce(
        `fields ${p.method}`,
        `the methods route's requiredFields for ${p.method} (${p.sourceCurrency} -> ${p.destinationCurrency}) could not be read: offline validation alone decides its rows`,
      );
    }
    const missing = m.requiredFields ? missingRequired(p, m.requiredFields) : [];
    if (missing.length) {
      rowIssues.set(rowNumber, {
        status: 'INVALID',
        code: 'MISSING_REQUIRED_FIELDS',
        message: `the methods route requires ${missing.join(', ')} for ${p.method}`,
      });
      continue;
    }
    quoteGroups.set(rowNumber, `${corridorKey(p)} ${p.method} ${feeBand(m, p.sourceAmount)}`);
    const fee = methodFee(m, p.sourceAmount, p.sourceCurrency, c.rate ? new Dec(c.rate) : undefined);
    if (fee === undefined) {
      feesUnknown.add(rowNumber);
      noteOnce(
        `fee ${p.method} ${p.sourceCurrency}`,
        `fee of ${p.method} from ${p.sourceCurrency}: not known before sending (the service's answer decides); the totals below leave it out`,
      );
      continue;
    }
    estimatedFees.set(rowNumber, fee);
    if (m.fee.kind !== 'unknown' && m.fee.currency !== undefined && m.fee.currency !== p.sourceCurrency) {
      noteOnce(
        `rate ${p.method} ${p.sourceCurrency}`,
        `fee of ${p.method} is priced in ${m.fee.currency}: converted to ${p.sourceCurrency} at the corridor rate read as ${p.destinationCurrency} per ${p.sourceCurrency}, an estimate (the spec does not state the rate's direction)`,
      );
    }
  }
  // one line for the rule, the count first so a line cut to a terminal's width still says it
  const hours = `outside trading hours now: ${rowsText(closedRows)}, whose payouts wait for the next window: ${[...closed.values()].map(tradingHours).join('; ')}`;
  return { rowIssues, estimatedFees, feesUnknown, quoteGroups, warnings: [...(closed.size ? [hours] : []), ...noted.values()] };
}

/** "10 rows (rows 3, 7, 12 and 7 more)", "1 row (row 4)" */
export function rowsText(rows: number[]): string {
  const shown = rows.slice(0, 3).join(', ');
  if (rows.length === 1) return `1 row (row ${shown})`;
  return `${rows.length} rows (rows ${shown}${rows.length > 3 ? ` and ${rows.length - 3} more` : ''})`;
}

const tradingHours = (c: CountryAnswer) =>
  `${c.name ?? c.code} (${c.code}) ${c.tradingStartTime}-${c.tradingEndTime} UTC${(c.timeZone ?? 0) >= 0 ? '+' : ''}${c.timeZone}`;

/** The method the corridor offers for the row, or why the row cannot go: corridor not enabled, method not offered. */
function methodFor(p: PayoutRow, c: CorridorInfo): { method: PaymentMethodAnswer; issue?: undefined } | { issue: RowIssue } {
  if (!c.enabled) {
    const message = `the corridor ${p.sourceCurrency} -> ${p.destinationCurrency} (${p.destinationCountryCode}) is not enabled for this business`;
    return { issue: { status: 'NOT_SENT', code: c.error ?? 'CORRIDOR_NOT_ENABLED', message } };
  }
  // the spec writes HK FPS two ways (§1.8: HK_FPS, also HONG_KONG_FPS): a method is matched by its canonical name
  const m = c.methods.find((x) => (canonicalMethod(x.code) ?? x.code) === p.method);
  if (m) return { method: m };
  const offered = c.methods.map((x) => x.code).join(', ') || 'none';
  return {
    issue: {
      status: 'INVALID',
      code: 'METHOD_NOT_AVAILABLE',
      message: `${p.method} is not offered from ${p.sourceCurrency} to ${p.destinationCurrency} in ${p.destinationCountryCode} (offered: ${offered})`,
    },
  };
}
