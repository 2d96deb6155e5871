// Preflight: a few requests per batch, never per row. Wallets, enabled pairs, the methods of each
// distinct corridor (cached for the run: the methods route is authoritative for required fields,
// so every row is checked against its requiredFields too) and the countries (prohibited
// destinations refused, trading hours warned about).
import type { PayoutClient } from '../client/client.ts';
import { PayoutApiError } from '../client/errors.ts';
import { Dec, fromApi, roundTo, type Dec as DecT } from '../money.ts';
import type { Country, CurrencyPair, PaymentMethod, Wallet } from '../spec/schemas.ts';
import type { PayoutRow } from '../validation/schemas.ts';

export interface CorridorInfo {
  sourceCurrency: string;
  destinationCurrency: string;
  destinationCountryCode: string;
  enabled: boolean;
  /** Destination units per source unit, as the methods route reports it. */
  rate?: string;
  methods: PaymentMethod[];
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
  wallets: Wallet[];
  corridors: CorridorInfo[];
  countries: Map<string, Country>;
  rowIssues: Map<number, RowIssue>;
  /** Estimated fee per row (source currency), from the methods route's fee. */
  estimatedFees: Map<number, DecT>;
  warnings: string[];
  requests: number;
}

export const corridorKey = (c: { sourceCurrency: string; destinationCurrency: string; destinationCountryCode: string }) =>
  `${c.sourceCurrency}>${c.destinationCurrency}@${c.destinationCountryCode}`;

/** The spec's fee of a method for one amount: flat, or by band of the source amount (SWIFT). */
export function methodFee(m: PaymentMethod, amount: DecT, sourceCurrency: string, rate: DecT | undefined): DecT {
  let fee = fromApi(m.fee.amount);
  if (m.fee.bands?.length) {
    const band = m.fee.bands.find((b) => b.below === null || amount.lessThan(fromApi(b.below)));
    if (band) fee = fromApi(band.amount);
  }
  // A fee in the destination currency (the spec's "100 NGN" of NIP) is converted at the corridor rate.
  if (m.fee.currency !== sourceCurrency && rate && !rate.isZero()) fee = fee.dividedBy(rate);
  return roundTo(fee, sourceCurrency);
}

const present = (row: PayoutRow, name: string): boolean => {
  if (name === 'remitterAddress') return !!row.remitterAddress;
  const v = (row.beneficiary as Record<string, unknown>)[name];
  return typeof v === 'string' ? v.trim() !== '' : v !== undefined && v !== null;
};

/** The fields the methods route requires that the row lacks (a one-of group as "a | b"). */
export function missingRequired(row: PayoutRow, method: PaymentMethod): string[] {
  const missing: string[] = [];
  for (const f of method.requiredFields) {
    if ('oneOf' in f) {
      if (f.required && !f.oneOf.some((g) => g.every((d) => present(row, d.name)))) {
        missing.push(f.oneOf.map((g) => g.map((d) => d.name).join('+')).join(' | '));
      }
    } else if (f.required && !present(row, f.name)) missing.push(f.name);
  }
  return missing;
}

function minutes(hhmmss: string): number | undefined {
  const m = /^(\d{1,2}):(\d{2})(?::(\d{2}))?$/.exec(hhmmss);
  return m ? Number(m[1]) * 60 + Number(m[2]) : undefined;
}

/** Is `now` outside the country's trading hours (in its own time zone)? undefined: cannot tell. */
export function outsideTradingHours(country: Country, now: Date): boolean | undefined {
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

export interface PreflightOptions {
  /** Turn on the pairs of corridors that are not enabled (PATCH toggle {enabled: true}). */
  enablePairs?: boolean;
  now?: Date;
}

export async function preflight(
  client: PayoutClient,
  rows: { rowNumber: number; payout: PayoutRow }[],
  options: PreflightOptions = {},
): Promise<PreflightResult> {
  // Nothing to send (every row invalid, or all created already): ask the service nothing, so an
  // unusable batch or a finished one costs no request of the monthly quota.
  if (!rows.length) {
    return { wallets: [], corridors: [], countries: new Map(), rowIssues: new Map(), estimatedFees: new Map(), warnings: [], requests: 0 };
  }
  let requests = 0;
  const warnings: string[] = [];
  // The reads go out together, so that they share the rate limit's pipe rather than each waiting
  // for the last one's latency: wallets and countries first (countries say which corridors to skip),
  // then the methods of every corridor at once. Each batch is settled in full before an error is
  // thrown, so nothing is left running (a pair toggle least of all) once preflight has failed.
  requests += 2;
  const [walletList, list] = await settledAll([client.listWallets(), client.listCountries({ limit: 250 })]);
  const wallets = walletList.data;
  const countries = new Map<string, Country>();
  for (const c of list.data) countries.set(c.code, c);

  // Distinct corridors of the rows.
  const corridors = new Map<string, CorridorInfo>();
  for (const { payout: p } of rows) {
    const k = corridorKey(p);
    if (!corridors.has(k)) {
      corridors.set(k, {
        sourceCurrency: p.sourceCurrency,
        destinationCurrency: p.destinationCurrency,
        destinationCountryCode: p.destinationCountryCode,
        enabled: false,
        methods: [],
      });
    }
  }

  // Asked at most once, however many corridors need it at the same time.
  let allPairs: Promise<CurrencyPair[]> | undefined;
  const pairsAll = () => {
    if (!allPairs) {
      requests++;
      allPairs = client.listPairs({ all: true }).then((r) => r.data);
    }
    return allPairs;
  };
  // Corridors of one currency pair into several countries are turned on by one toggle.
  const toggled = new Map<string, Promise<unknown>>();
  const enablePair = (pairId: string) => {
    let t = toggled.get(pairId);
    if (!t) {
      requests++;
      t = client.togglePair(pairId, { enabled: true });
      toggled.set(pairId, t);
    }
    return t;
  };

  const loadCorridor = async (c: CorridorInfo): Promise<void> => {
    const country = countries.get(c.destinationCountryCode);
    if (country?.isProhibited) {
      c.error = 'PROHIBITED_DESTINATION';
      return;
    }
    const load = async () => {
      requests++;
      const r = await client.listMethods({
        sourceCurrency: c.sourceCurrency,
        destinationCurrency: c.destinationCurrency,
        destinationCountryCode: c.destinationCountryCode,
      });
      c.enabled = true;
      c.rate = String(r.rate.rate);
      c.methods = r.methods;
    };
    try {
      await load();
    } catch (e) {
      if (!(e instanceof PayoutApiError) || e.status !== 400) throw e;
      c.error = e.code ?? 'CORRIDOR_NOT_ENABLED';
      if (e.code === 'CORRIDOR_NOT_ENABLED' || e.code === undefined) {
        const pair = (await pairsAll()).find(
          (p) =>
            (p.baseCurrency === c.sourceCurrency && p.quoteCurrency === c.destinationCurrency) ||
            (p.baseCurrency === c.destinationCurrency && p.quoteCurrency === c.sourceCurrency),
        );
        c.pairId = pair?.currencyPairId;
        if (options.enablePairs && pair) {
          await enablePair(pair.currencyPairId);
          c.enabledNow = true;
          c.error = undefined;
          await load();
        }
      }
    }
  };
  await settledAll([...corridors.values()].map(loadCorridor));

  const now = options.now ?? new Date();
  const warnedCountry = new Set<string>();
  const rowIssues = new Map<number, RowIssue>();
  const estimatedFees = new Map<number, DecT>();
  for (const { rowNumber, payout: p } of rows) {
    const country = countries.get(p.destinationCountryCode);
    if (country?.isProhibited) {
      rowIssues.set(rowNumber, {
        status: 'INVALID',
        code: 'PROHIBITED_DESTINATION',
        message: `payouts to ${country.name} (${country.code}) are prohibited by the service`,
      });
      continue;
    }
    if (country && !warnedCountry.has(country.code) && outsideTradingHours(country, now)) {
      warnedCountry.add(country.code);
      warnings.push(
        `${country.name} (${country.code}) is outside its trading hours ${country.tradingStartTime}-${country.tradingEndTime} (UTC${country.timeZone >= 0 ? '+' : ''}${country.timeZone}): its payouts will wait for the next window`,
      );
    }
    const c = corridors.get(corridorKey(p))!;
    if (!c.enabled) {
      rowIssues.set(rowNumber, {
        status: 'NOT_SENT',
        code: c.error ?? 'CORRIDOR_NOT_ENABLED',
        message: `the corridor ${p.sourceCurrency} -> ${p.destinationCurrency} (${p.destinationCountryCode}) is not enabled for this business`,
      });
      continue;
    }
    const m = c.methods.find((x) => x.code === p.method);
    if (!m) {
      rowIssues.set(rowNumber, {
        status: 'INVALID',
        code: 'METHOD_NOT_AVAILABLE',
        message: `${p.method} is not offered from ${p.sourceCurrency} to ${p.destinationCurrency} in ${p.destinationCountryCode} (offered: ${c.methods.map((x) => x.code).join(', ') || 'none'})`,
      });
      continue;
    }
    const missing = missingRequired(p, m);
    if (missing.length) {
      rowIssues.set(rowNumber, {
        status: 'INVALID',
        code: 'MISSING_REQUIRED_FIELDS',
        message: `the methods route requires ${missing.join(', ')} for ${p.method}`,
      });
      continue;
    }
    estimatedFees.set(rowNumber, methodFee(m, p.sourceAmount, p.sourceCurrency, c.rate ? new Dec(c.rate) : undefined));
  }
  return { wallets, corridors: [...corridors.values()], countries, rowIssues, estimatedFees, warnings, requests };
}
