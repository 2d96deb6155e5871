// The seed: businesses with keys, wallets and pairs, and the countries (spec §2 Country), checked by zod.
import { readFileSync } from 'node:fs';
import * as z from 'zod';
// Imported, not read from disk: the build puts it inside the bundle.
import defaultSeedJson from './default-seed.json' with { type: 'json' };
import { Dec, isCurrencyCode, minorUnits } from '../money.ts';

/** Each balance stays below its limit: a JSON number exact to 15 digits with its decimals (money.ts toApi), after any debit too. */
export function balanceProblem(balance: Dec, currency: string): string | undefined {
  const limit = new Dec(10).pow(15 - (minorUnits(currency) ?? 2));
  return balance.lessThan(limit) ? undefined : `a ${currency} balance is below ${limit.toFixed()}`;
}

const decimalString = z.string().regex(/^\d+(\.\d+)?$/, 'a decimal string such as "1500.25" (no sign, no exponent)');
const currencyCode = z.string().refine(isCurrencyCode, 'an ISO 4217 currency code such as "USD"');
const countryCode = z.string().regex(/^[A-Z]{3}$/, 'an ISO 3166-1 alpha-3 code such as "NGA"');
const time = z.string().regex(/^\d{2}:\d{2}:\d{2}$/, 'a time of day HH:MM:SS');

/** One entry per key: a key given again is an issue at `path`. */
const onePerKey = (ctx: z.RefinementCtx, message: (key: string, earlier: number) => string) => {
  const seen = new Map<string, number>();
  return (key: string, at: number, path: (string | number)[]) => {
    const earlier = seen.get(key);
    if (earlier !== undefined) ctx.addIssue({ code: 'custom', path, message: message(key, earlier) });
    seen.set(key, at);
  };
};

const SeedWallet = z.strictObject({
  walletId: z.uuid().optional(),
  currency: currencyCode,
  balance: decimalString,
});

const SeedPair = z.strictObject({
  currencyPairId: z.uuid().optional(),
  baseCurrency: currencyCode,
  quoteCurrency: currencyCode,
  rate: decimalString.refine((r) => new Dec(r).greaterThan(0), 'a rate above 0'),
  enabled: z.boolean().default(true),
});

const SeedBusiness = z
  .strictObject({
    id: z.uuid().optional(),
    name: z.string().min(1),
    keys: z.array(z.string().min(8, 'an API key of at least 8 characters')).min(1),
    wallets: z.array(SeedWallet).default([]),
    pairs: z.array(SeedPair).default([]),
  })
  .superRefine((b, ctx) => {
    const issue = (path: (string | number)[], message: string) => ctx.addIssue({ code: 'custom', path, message });
    const wallet = onePerKey(ctx, (currency) => `a second ${currency} wallet (one wallet per currency)`);
    b.wallets.forEach((w, i) => {
      wallet(w.currency, i, ['wallets', i, 'currency']);
      const places = minorUnits(w.currency) ?? 2;
      if (new Dec(w.balance).decimalPlaces() > places)
        issue(['wallets', i, 'balance'], `${w.currency} amounts have at most ${places} decimals`);
      const tooLarge = balanceProblem(new Dec(w.balance), w.currency);
      if (tooLarge) issue(['wallets', i, 'balance'], tooLarge);
    });
    const pair = onePerKey(ctx, (k) => `pair ${k} listed twice`);
    b.pairs.forEach((p, i) => {
      if (p.baseCurrency === p.quoteCurrency) issue(['pairs', i, 'quoteCurrency'], 'must differ from baseCurrency');
      pair(`${p.baseCurrency}/${p.quoteCurrency}`, i, ['pairs', i]);
    });
  });

export const SeedCountry = z.strictObject({
  id: z.union([z.string(), z.number()]).optional(),
  name: z.string().min(1),
  code: countryCode,
  currencyCode,
  score: z.number().nullable().default(null),
  payoutCurrencies: z.array(z.object({ code: currencyCode, name: z.string() })).optional(),
  tradingStartTime: time,
  tradingEndTime: time,
  timeZone: z.number(),
  cpi: z.number().nullable().default(null),
  gdpPerCapitaInUsd: z.number().nullable().default(null),
  globalRating: z.string().nullable().default(null),
  isProhibited: z.boolean().default(false),
  henleyPassportIndex: z.number().nullable().default(null),
  createdAt: z.string().default('2024-01-01T00:00:00.000Z'),
  updatedAt: z.string().default('2024-01-01T00:00:00.000Z'),
  deletedAt: z.string().nullable().default(null),
});

export const Seed = z
  .strictObject({
    businesses: z.array(SeedBusiness).min(1, 'at least one business'),
    countries: z.array(SeedCountry).default([]),
  })
  .superRefine((s, ctx) => {
    const key = onePerKey(ctx, (_, earlier) => `key already used by businesses[${earlier}]`);
    s.businesses.forEach((b, i) => b.keys.forEach((k, j) => key(k, i, ['businesses', i, 'keys', j])));
    const country = onePerKey(ctx, (code) => `country ${code} listed twice`);
    s.countries.forEach((c, i) => country(c.code, i, ['countries', i, 'code']));
  });
export type Seed = z.infer<typeof Seed>;

export class SeedError extends Error {
  constructor(
    readonly issues: { path: string; message: string }[],
    readonly source = 'seed',
  ) {
    super(`${source}: ${issues.map((i) => (i.path ? `${i.path}: ${i.message}` : i.message)).join('; ')}`);
    this.name = 'SeedError';
  }
}

export function parseSeed(raw: unknown, source = 'seed'): Seed {
  const r = Seed.safeParse(raw);
  if (r.success) return r.data;
  throw new SeedError(
    r.error.issues.map((i) => ({
      path: i.path.map((p, n) => (typeof p === 'number' ? `[${p}]` : `${n ? '.' : ''}${String(p)}`)).join(''),
      message: i.message,
    })),
    source,
  );
}

export function readSeedFile(path: string): Seed {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(path, 'utf8'));
  } catch (err) {
    const message =
      err instanceof SyntaxError
        ? `is not valid JSON (${err.message})`
        : `cannot be read (${(err as NodeJS.ErrnoException).code ?? String(err)})`;
    throw new SeedError([{ path: '', message }], path);
  }
  return parseSeed(raw, path);
}

/** The shipped seed (README "Keys of the shipped seed"). */
export function defaultSeed(): Seed {
  return parseSeed(defaultSeedJson, 'default-seed.json');
}

export const DEFAULT_KEYS = {
  acmePrimary: 'sk_sandbox_acme_primary',
  acmeSecondary: 'sk_sandbox_acme_secondary',
  globex: 'sk_sandbox_globex',
} as const;
