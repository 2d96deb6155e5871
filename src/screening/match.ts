// Comparing a payee with the listed names and identifiers. Names are normalised (NFKD, no
// diacritics, lower case, the TR39 skeleton of look-alike letters, no punctuation), legal forms are
// dropped from both sides, and the token sets are aligned order-free with Jaro-Winkler.
import { jaroWinkler } from '@skyra/jaro-winkler';
import unhomoglyph from 'unhomoglyph';
import type { Entry, ReadList } from './lists.ts';
import type { Hit, Payee, Thresholds } from './screening.ts';

/** Tokens of a name: NFKD, marks stripped, lower case, TR39 skeleton, letters and digits only. */
export function tokens(name: string): string[] {
  let s = name.normalize('NFKD').replace(/\p{M}/gu, '').toLowerCase();
  // The skeleton maps m to "rn", 0 to O and 1 to l; only non-ASCII text needs the whole table.
  s = /^[\x20-\x7e]*$/.test(s) ? s.replace(/m/g, 'rn').replace(/0/g, 'o').replace(/1/g, 'l') : skeleton(s);
  return s
    .replace(/ß/g, 'ss')
    .replace(/\.(?=\S)/g, '') // S.A. → sa, L.L.C. → llc
    .split(/[^a-z0-9]+/)
    .filter(Boolean);
}
function skeleton(s: string): string {
  return unhomoglyph(s).toLowerCase().normalize('NFKD').replace(/\p{M}/gu, '');
}

/** Dropped from both sides before scoring: legal forms and filler words never make a name alike. */
const DROPPED = new Set(
  (
    'ltd limited llc llp lp inc incorporated corp corporation co company cie gmbh ag kg ohg sa sas sarl srl spa plc bv nv oy ab ' +
    'as asa pte pty jsc ojsc pjsc cjsc ooo oao zao pao fze fzco fzc bhd sdn kft zrt sro doo the and of et und'
  )
    .split(' ')
    .flatMap(tokens),
);
export const nameTokens = (name: string) => [...new Set(tokens(name).filter((t) => !DROPPED.has(t)))];

/** Below this a pair of tokens counts as unlike (0), so an unrelated token adds nothing. */
const TOKEN_FLOOR = 0.8;
/** An initial against a token it begins: alike, never the same. */
const INITIAL = 0.75;
/** How much the listed name's tokens being found counts against the payee's tokens being found. */
const LISTED_WEIGHT = 0.75;

function tokenSimilarity(a: string, b: string): number {
  if (a === b) return 1;
  if (a.length === 1 || b.length === 1) return a[0] === b[0] ? INITIAL : 0;
  const jw = jaroWinkler(a, b);
  return jw >= TOKEN_FLOOR ? jw : 0;
}

/**
 * The score of two token sets, 0..1: the tokens aligned greedily, best pair first; each side's
 * coverage is the share of its letters found, weighted by the pair's similarity. A single shared
 * token is not a match ("CORP", "George Bush" against "George Habbash"), unless the listed name is
 * that one long token (a listed "HAMAS" in "HAMAS TRADING"), which reaches the review band only.
 */
export function nameScore(payee: string[], listed: string[], review: number): number {
  if (!payee.length || !listed.length) return 0;
  const pairs: [number, number, number][] = [];
  for (let i = 0; i < payee.length; i++)
    for (let j = 0; j < listed.length; j++) {
      const s = tokenSimilarity(payee[i]!, listed[j]!);
      if (s > 0) pairs.push([s, i, j]);
    }
  pairs.sort((a, b) => b[0] - a[0]);
  const usedP = new Set<number>();
  const usedL = new Set<number>();
  let foundP = 0;
  let foundL = 0;
  for (const [s, i, j] of pairs) {
    if (usedP.has(i) || usedL.has(j)) continue;
    usedP.add(i);
    usedL.add(j);
    foundP += s * payee[i]!.length;
    foundL += s * listed[j]!.length;
  }
  const letters = (ts: string[]) => ts.reduce((n, t) => n + t.length, 0);
  const score = LISTED_WEIGHT * (foundL / letters(listed)) + (1 - LISTED_WEIGHT) * (foundP / letters(payee));
  if (usedP.size > 1 || (payee.length === 1 && listed.length === 1)) return score;
  return listed.length === 1 && listed[0]!.length >= 5 && foundL === listed[0]!.length ? Math.min(score, review) : 0;
}

interface ListedName {
  list: number;
  entry: Entry;
  text: string;
  on: 'name' | 'alias';
  tokens: string[];
}
export interface Index {
  lists: ReadList[];
  names: ListedName[];
  /** Identifier (BIC, IBAN, account; upper case, no spaces) → the entries carrying it. */
  identifiers: Map<string, { list: number; entry: Entry; on: 'bic' | 'iban' | 'account'; value: string }[]>;
}

const ident = (s: string) => s.replace(/[\s-]/g, '').toUpperCase();
/** A BIC's bank and country part (8 letters): a listed head-office BIC covers every branch. */
const bank = (bic: string) => ident(bic).slice(0, 8);

export function buildIndex(lists: ReadList[]): Index {
  const index: Index = { lists, names: [], identifiers: new Map() };
  const addIdentifier = (key: string, value: Index['identifiers'] extends Map<string, (infer V)[]> ? V : never) => {
    const at = index.identifiers.get(key);
    if (at) at.push(value);
    else index.identifiers.set(key, [value]);
  };
  lists.forEach(({ entries }, list) => {
    for (const entry of entries) {
      for (const [text, on] of [[entry.name, 'name'] as const, ...entry.aliases.map((a) => [a, 'alias'] as const)]) {
        const ts = nameTokens(text);
        if (ts.length) index.names.push({ list, entry, text, on, tokens: ts });
      }
      for (const value of entry.bics) addIdentifier(`bic:${bank(value)}`, { list, entry, on: 'bic', value });
      for (const value of entry.ibans) addIdentifier(`iban:${ident(value)}`, { list, entry, on: 'iban', value });
      for (const value of entry.accounts) addIdentifier(`account:${ident(value)}`, { list, entry, on: 'account', value });
    }
  });
  return index;
}

export function screenPayee(index: Index, payee: Payee, thresholds: Thresholds): Hit[] {
  const hits: Hit[] = [];
  const hit = (list: number, entry: Entry, h: Pick<Hit, 'matched' | 'on' | 'band' | 'why'> & { score: number }) => {
    const info = index.lists[list]!.info;
    hits.push({
      list: info.format,
      listPath: info.path,
      entryId: entry.id,
      entryName: entry.name,
      ...h,
      ...(entry.programme ? { programme: entry.programme } : {}),
      score: (Math.floor(h.score * 100) / 100).toFixed(2),
    });
  };
  if (payee.bic)
    for (const r of index.identifiers.get(`bic:${bank(payee.bic)}`) ?? []) {
      const same = ident(r.value).length === 8 || ident(r.value).endsWith('XXX') || ident(r.value) === ident(payee.bic);
      hit(r.list, r.entry, {
        matched: r.value,
        on: 'bic',
        band: same ? 'hit' : 'review',
        score: same ? 1 : thresholds.review,
        why: same
          ? `the payee's BIC ${payee.bic} is listed`
          : `the payee's BIC ${payee.bic} is another branch of the listed bank ${r.value}`,
      });
    }
  for (const [on, value] of [
    ['iban', payee.iban],
    ['account', payee.accountNumber],
  ] as const)
    if (value)
      for (const r of index.identifiers.get(`${on}:${ident(value)}`) ?? [])
        hit(r.list, r.entry, {
          matched: r.value,
          on,
          band: 'hit',
          score: 1,
          why: `the payee's ${on === 'iban' ? 'IBAN' : 'account'} is listed`,
        });
  const payeeTokens = nameTokens(payee.name);
  const best = new Map<Entry, { name: ListedName; score: number }>();
  for (const name of index.names) {
    const score = nameScore(payeeTokens, name.tokens, thresholds.review);
    if (score >= thresholds.review && score > (best.get(name.entry)?.score ?? 0)) best.set(name.entry, { name, score });
  }
  for (const [entry, { name, score }] of best) {
    const band = score >= thresholds.hit ? 'hit' : 'review';
    hit(name.list, entry, { matched: name.text, on: name.on, band, score, why: why(payee, name, score) });
  }
  return hits;
}

function why(payee: Payee, name: ListedName, score: number): string {
  const alike = score >= 1 ? 'the same name' : 'a name alike';
  const country = payee.country && name.entry.countries.some((c) => c.toUpperCase() === payee.country!.toUpperCase());
  return `${alike} (${name.on === 'alias' ? 'an alias' : 'the listed name'})${country ? `, and the entry names the destination ${payee.country}` : ''}`;
}
