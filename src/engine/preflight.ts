// Preflight: a few requests per batch, never per row. Wallets, enabled pairs, the methods of each
// distinct corridor (cached for the run: the methods route is authoritative for required fields,
// so every row is checked against its requiredFields too) and the countries (prohibited
// destinations refused, trading hours warned about).
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
  /** The rate the methods route reports, as text (its direction is not stated by the spec). */
  rate?: string;
  methods: PaymentMethodAnswer[];
  /** The pair to toggle when not enabled (from GET pairs?status=all). */
  pairId?: string;
  /** Enabled by this preflight (--enable-pairs). */
  enabledNow?: boolean;
  /** Why the methods route refused, when it did. */
  error?: string;
}

/** A row that preflight found cannot be sent, and why. */
export interface RowIssue {
  /** INVALID: the row itself is wrong for the service; NOT_SENT: the account must change first. */
  status: 'INVALID' | 'NOT_SENT';
  code: string;
  message: string;
}

export interface PreflightResult {
  wallets: WalletAnswer[];
  corridors: CorridorInfo[];
  countries: Map<string, CountryAnswer>;
  rowIssues: Map<number, RowIssue>;
  /** Estimated fee per row (source currency), from the methods route's fee. */
  estimatedFees: Map<number, DecT>;
  /** Rows whose fee is not known before sending (a fee shape we cannot read): the service's answer decides. */
  feesUnknown: Set<number>;
  /**
   * Per row, what its quote depends on: corridor, method and the fee band of its amount (a
   * tiered fee's tier; an unreadable fee shape, the amount itself). `plan --out` quotes once per
   * group, not per row (plan-command.ts planRows).
   */
  quoteGroups: Map<number, string>;
  warnings: string[];
  requests: number;
  /**
   * The pairs (spec §4.9), when read: by the corridors not enabled (GET pairs?status=all) or, when
   * a wallet is short, to price its swap (readSwapPairs).
   */
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
 * The estimated fee of a method for one amount (flat, or by tier of the source amount as SWIFT's
 * bands in spec §1.9); undefined when the method's fee shape could not be read. A fee in another
 * currency than the source (the spec's "100 NGN" of NIP sent from USD) is converted at the
 * corridor rate read as destination units per source unit: the spec does not state the rate's
 * direction (§2 Currency pair), so this stays an estimate, and the plan says so.
 */
export function methodFee(m: PaymentMethodAnswer, amount: DecT, sourceCurrency: string, rate: DecT | undefined): DecT | undefined {
  const f = m.fee;
  let fee: DecT;
  if (f.kind === 'flat') fee = fromApi(f.amount);
  else if (f.kind === 'tiered') {
    const tier = tierOf(f, amount);
    if (!tier) return undefined;
    fee = fromApi(tier.amount);
  } else return undefined;
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
    return tier ? `tier ${m.fee.tiers.indexOf(tier)}` : `amount ${amount.toFixed()}`;
  }
  return `amount ${amount.toFixed()}`;
}

/** Whether a method's fee is converted from another currency at a rate (an estimate, see methodFee). */
export const feeConverted = (m: PaymentMethodAnswer, sourceCurrency: string): boolean =>
  m.fee.kind !== 'unknown' && m.fee.currency !== undefined && m.fee.currency !== sourceCurrency;

const present = (row: PayoutRow, name: string): boolean => {
  if (name === 'remitterAddress') return !!row.remitterAddress;
  const v = (row.beneficiary as Record<string, unknown>)[name];
  return typeof v === 'string' ? v.trim() !== '' : v !== undefined && v !== null;
};

/**
 * The fields the methods route requires that the row lacks (a one-of group as "a | b"). A field
 * listed among requiredFields is required unless the service marks it `required: false`.
 * accountCurrency is filled from the row's destination currency when the file has no column.
 */
export function missingRequired(row: PayoutRow, requiredFields: readonly RequiredField[]): string[] {
  const missing: string[] = [];
  for (const f of requiredFields) {
    if (f.required === false) continue;
    if ('oneOf' in f) {
      if (!f.oneOf.some((g) => g.every((d) => present(row, d.name)))) {
        missing.push(f.oneOf.map((g) => g.map((d) => d.name).join('+')).join(' | '));
      }
    } else if (!present(row, f.name)) missing.push(f.name);
  }
  return missing;
}

function minutes(hhmmss: string): number | undefined {
  const m = /^(\d{1,2}):(\d{2})(?::(\d{2}))?$/.exec(hhmmss);
  return m ? Number(m[1]) * 60 + Number(m[2]) : undefined;
}

/** Is `now` outside the country's trading hours (in its own time zone)? undefined: cannot tell. */
export function outsideTradingHours(country: CountryAnswer, now: Date): boolean | undefined {
  if (country.tradingStartTime === undefined || country.tradingEndTime === undefined || country.timeZone === undefined) return undefined;
  const start = minutes(country.tradingStartTime);
  const end = minutes(country.tradingEndTime);
  if (start === undefined || end === undefined || start === end) return undefined;
  const local = (((now.getUTCHours() * 60 + now.getUTCMinutes() + Math.round(country.timeZone * 60)) % 1440) + 1440) % 1440;
  return start < end ? local < start || local >= end : local < start && local >= end;
}

/** Promise.all that waits for every promise before it throws the first error (in list order). */
async function settledAll<T extends readonly unknown[]>(promises: { [K in keyof T]: Promise<T[K]> }): Promise<T> {
  const settled = await Promise.allSettled(promises);
  const failed = settled.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed) throw failed.reason;
  return settled.map((r) => (r as PromiseFulfilledResult<unknown>).value) as unknown as T;
}

/** The step preflight is at, as it happens: a terminal shows it (`run --plan` waits on it for seconds). */
export type PreflightStep =
  | { step: 'wallets' }
  | { step: 'methods'; corridors: number; done: number }
  /** `plan --out`: the rows to send quoted (plan-command.ts). */
  | { step: 'quotes'; rows: number };

export interface PreflightOptions {
  /** Turn on the pairs of corridors that are not enabled (PATCH toggle {enabled: true}). */
  enablePairs?: boolean;
  now?: Date;
  onStep?: (s: PreflightStep) => void;
}

export async function preflight(client: PayoutClient, rows: PayoutRow[], options: PreflightOptions = {}): Promise<PreflightResult> {
  const requests = { n: 0 };
  // Nothing to send (every row invalid, or all created already): ask the service nothing, so an
  // unusable batch or a finished one costs no request of the monthly quota.
  if (!rows.length)
    return { ...checkRows([], new Map(), new Map(), new Date()), wallets: [], corridors: [], countries: new Map(), requests: 0 };
  // The reads go out together, so that they share the rate limit's pipe rather than each waiting
  // for the last one's latency: wallets and countries first (countries say which corridors to skip),
  // then the methods of every corridor at once. Each batch is settled in full before an error is
  // thrown, so nothing is left running (a pair toggle least of all) once preflight has failed.
  requests.n += 2;
  options.onStep?.({ step: 'wallets' });
  const [walletList, list] = await settledAll([client.listWallets(), client.listCountries({ limit: 250 })]);
  const countries = new Map<string, CountryAnswer>(list.data.map((c) => [c.code, c]));
  const corridors = distinctCorridors(rows);
  const loaded: { pairs?: CurrencyPairAnswer[] } = {};
  const loader = corridorLoader(client, countries, options, requests, loaded);
  let done = 0;
  const methodsStep = () => options.onStep?.({ step: 'methods', corridors: corridors.size, done });
  methodsStep();
  await settledAll(
    [...corridors.values()].map(async (c) => {
      await loader(c);
      done++;
      methodsStep();
    }),
  );
  const checked = checkRows(rows, countries, corridors, options.now ?? new Date());
  return { ...checked, wallets: walletList.data, corridors: [...corridors.values()], countries, requests: requests.n, ...loaded };
}

/**
 * The pairs a short wallet's swap is priced from (spec §4.9), read once: the listing preflight
 * already read for the corridors not enabled is used as it is; else GET pairs, one request more
 * in the preflight's count. "400 when no pair is enabled": no pair.
 */
export async function readSwapPairs(client: PayoutClient, pf: PreflightResult): Promise<void> {
  if (pf.pairs) return;
  pf.requests++;
  try {
    pf.pairs = (await client.listPairs()).data;
  } catch (e) {
    if (!(e instanceof PayoutApiError) || e.status !== 400 || e.outcome === 'unknown') throw e;
    pf.pairs = [];
  }
}

/** The distinct corridors of the rows, by corridorKey, not loaded yet. */
function distinctCorridors(rows: PayoutRow[]): Map<string, CorridorInfo> {
  const corridors = new Map<string, CorridorInfo>();
  for (const p of rows) {
    const k = corridorKey(p);
    if (corridors.has(k)) continue;
    corridors.set(k, {
      sourceCurrency: p.sourceCurrency,
      destinationCurrency: p.destinationCurrency,
      destinationCountryCode: p.destinationCountryCode,
      enabled: false,
      methods: [],
    });
  }
  return corridors;
}

/**
 * Loads a corridor's methods (spec: the methods route). A corridor not enabled names its pair
 * (GET pairs?status=all, asked once), and with --enable-pairs is turned on (one toggle per pair,
 * however many countries) and loaded again. Counts the requests it makes.
 */
function corridorLoader(
  client: PayoutClient,
  countries: Map<string, CountryAnswer>,
  options: PreflightOptions,
  requests: { n: number },
  loaded: { pairs?: CurrencyPairAnswer[] },
): (c: CorridorInfo) => Promise<void> {
  let allPairs: Promise<CurrencyPairAnswer[]> | undefined;
  const pairsAll = () => {
    if (!allPairs) {
      requests.n++;
      allPairs = client.listPairs({ all: true }).then((r) => (loaded.pairs = r.data));
    }
    return allPairs;
  };
  const toggled = new Map<string, Promise<unknown>>();
  const enablePair = (pairId: string) => {
    let t = toggled.get(pairId);
    if (!t) {
      requests.n++;
      t = client.togglePair(pairId, { enabled: true });
      toggled.set(pairId, t);
    }
    return t;
  };
  return async (c) => {
    if (countries.get(c.destinationCountryCode)?.isProhibited) {
      c.error = 'PROHIBITED_DESTINATION';
      return;
    }
    const load = async () => {
      requests.n++;
      const r = await client.listMethods({
        sourceCurrency: c.sourceCurrency,
        destinationCurrency: c.destinationCurrency,
        destinationCountryCode: c.destinationCountryCode,
      });
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
        await enablePair(pair.currencyPairId);
        pair.enabled = true; // (the listing, read before, is what a swap is priced from)
        c.enabledNow = true;
        c.error = undefined;
        await load();
      }
    }
  };
}

/** The row checks against the loaded corridors and countries: issues, estimated fees, warnings (each once). */
function checkRows(
  rows: PayoutRow[],
  countries: Map<string, CountryAnswer>,
  corridors: Map<string, CorridorInfo>,
  now: Date,
): Pick<PreflightResult, 'rowIssues' | 'estimatedFees' | 'feesUnknown' | 'quoteGroups' | 'warnings'> {
  const rowIssues = new Map<number, RowIssue>();
  const estimatedFees = new Map<number, DecT>();
  const feesUnknown = new Set<number>();
  const quoteGroups = new Map<number, string>();
  const warnings: string[] = [];
  const noted = new Set<string>();
  const closed = new Map<string, CountryAnswer>();
  const closedRows: number[] = [];
  const noteOnce = (key: string, warning: string) => {
    if (noted.has(key)) return;
    noted.add(key);
    warnings.push(warning);
  };
  for (const p of rows) {
    const { rowNumber } = p;
    const country = countries.get(p.destinationCountryCode);
    if (country?.isProhibited) {
      rowIssues.set(rowNumber, {
        status: 'INVALID',
        code: 'PROHIBITED_DESTINATION',
        message: `payouts to ${country.name ?? country.code} (${country.code}) are prohibited by the service`,
      });
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
    if (feeConverted(m, p.sourceCurrency)) {
      noteOnce(
        `rate ${p.method} ${p.sourceCurrency}`,
        `fee of ${p.method} is priced in ${m.fee.kind !== 'unknown' ? m.fee.currency : '?'}: converted to ${p.sourceCurrency} at the corridor rate read as ${p.destinationCurrency} per ${p.sourceCurrency}, an estimate (the spec does not state the rate's direction)`,
      );
    }
  }
  // One line for the rule, its rows counted and the countries listed: ten countries are one fact,
  // not ten warnings (and the count comes first, so a line cut to a terminal's width still says it).
  if (closed.size)
    warnings.unshift(
      `outside trading hours now: ${rowsText(closedRows)}, whose payouts wait for the next window: ${[...closed.values()].map(tradingHours).join('; ')}`,
    );
  return { rowIssues, estimatedFees, feesUnknown, quoteGroups, warnings };
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
    const issue: RowIssue = {
      status: 'NOT_SENT',
      code: c.error ?? 'CORRIDOR_NOT_ENABLED',
      message: `the corridor ${p.sourceCurrency} -> ${p.destinationCurrency} (${p.destinationCountryCode}) is not enabled for this business`,
    };
    return { issue };
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
