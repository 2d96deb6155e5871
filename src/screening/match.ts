// Comparing a payee with the listed names and identifiers. Names are normalised (NFKD, no
// diacritics, lower case, the TR39 skeleton of look-alike letters, no punctuation), legal forms are
// dropped from both sides, and the token sets are aligned order-free with Jaro-Winkler.
import { jaroWinkler } from '@skyra/jaro-winkler';
import unhomoglyph from 'unhomoglyph';
import type { Entry, ReadList } from './sanctions-lists.ts';
import type { Hit, Payee, Thresholds } from './screening-types.ts';

/** Tokens of a name: NFKD, marks stripped, lower case, TR39 skeleton, letters and digits only. */
export function tokens(name: string): string[] {
  let s = name.normalize('NFKD').replace(/\p{M}/gu, '').toLowerCase();
  // The skeleton maps 0 to O and 1 to l (and m to "rn", kept as m); only non-ASCII text needs the whole table.
  s = /^[\x20-\x7e]*$/.test(s) ? s.replace(/0/g, 'o').replace(/1/g, 'l') : skeleton(s);
  return s
    .replace(/rn/g, 'm')
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
    'ltd limited llc llp lp inc incorporated corp corporation co company cie gmbh ag kg ohg sa sas sarl srl spa plc bv nv oy ab pvt private ' +
    'as asa pte pty jsc ojsc pjsc cjsc ooo oao zao pao fze fzco fzc bhd sdn kft zrt sro doo the and of et und'
  )
    .split(' ')
    .flatMap(tokens),
);
/** Words too common in firms' names to make two names one when they are all the names share. */
const WEAK = new Set(
  'general trading group holding holdings international global services enterprises industries'.split(' ').flatMap(tokens),
);
export const nameTokens = (name: string) => [...new Set(tokens(name).filter((t) => !DROPPED.has(t)))];

/** Below this a pair of tokens counts as unlike (0), so an unrelated token adds nothing. */
const TOKEN_FLOOR = 0.8;
/** An initial against a token it begins: alike, never the same. */
const INITIAL = 0.75;

/** Pairs of tokens already compared: a list repeats its words, and so do payees. */
const compared = new Map<string, number>();
function tokenSimilarity(a: string, b: string): number {
  if (a === b) return 1;
  const key = `${a} ${b}`;
  let s = compared.get(key);
  if (s === undefined) {
    if (compared.size > 1_000_000) compared.clear();
    compared.set(key, (s = compare(a, b)));
  }
  return s;
}
/** `ka`, `kb`: the words' sounds where the caller already has them. */
function compare(a: string, b: string, ka?: string, kb?: string): number {
  if (a === b) return 1;
  if (a.length === 1 || b.length === 1) return a[0] === b[0] ? INITIAL : 0;
  if (a.length < 4 || b.length < 4) return 0; // Ali is not Al, Li is not Lu
  ka ??= sound(a);
  if (ka.length >= 3 && ka === (kb ?? sound(b))) return SAME_SOUND;
  if (!near(a.length, b.length)) return 0;
  const jw = jaroWinkler(a, b);
  return jw >= TOKEN_FLOOR && edits(a, b) <= allowedEdits(a.length, b.length) ? jw : 0;
}

/** One edit per four letters of the shorter word (of `m` and `n` letters), at least one. */
const allowedEdits = (m: number, n: number) => Math.max(1, Math.floor(Math.min(m, n) / 4));
/** Whether words of `m` and `n` letters are near enough in length to be alike. */
const near = (m: number, n: number) => Math.abs(m - n) <= allowedEdits(m, n);

/** Transliterations of one name mostly differ in vowels: Mohammed, Muhammad; Yusuf, Yousef; Oleksandr, Aleksandr. */
const SAME_SOUND = 0.93;
function sound(t: string): string {
  return t
    .replace(/x/g, 'ks')
    .replace(/ph/g, 'f')
    .replace(/w/g, 'v')
    .replace(/[aeiouy]/g, '')
    .replace(/(.)\1+/g, '$1');
}

/** Optimal string alignment distance (a transposition is one edit): Jaro-Winkler alone rewards a shared prefix (Ivan, Ivanov). */
function edits(a: string, b: string): number {
  let before = new Array<number>(b.length + 1).fill(0);
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      let d = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d = Math.min(d, before[j - 2]! + 1);
      current.push(d);
    }
    [before, previous] = [previous, current];
  }
  return previous[b.length]!;
}

/**
 * The score of two token sets, 0..1: the tokens aligned greedily, best pair first; each side's
 * coverage is the share of its letters found, weighted by the pair's similarity; the score is the
 * mean of the two. A name found whole inside the other (two words or more: Ivan Petrov in PETROV,
 * Ivan Sergeyevich) reaches the review band at least, unless the words it shares are initials or common words (General Trading). A single shared token is not a match
 * ("CORP", "George Bush" against "George Habbash"), unless the listed name is that one long token
 * (a listed "HAMAS" in "HAMAS TRADING"), which reaches the review band only.
 */
export function nameScore(payeeTokens: string[], listedTokens: string[], review: number): number {
  if (!payeeTokens.length || !listedTokens.length) return 0;
  const listed = joined(payeeTokens, listedTokens);
  const payee = joined(listed, payeeTokens);
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
  let strong = 0;
  for (const [s, i, j] of pairs) {
    if (usedP.has(i) || usedL.has(j)) continue;
    usedP.add(i);
    usedL.add(j);
    foundP += s * payee[i]!.length;
    foundL += s * listed[j]!.length;
    if (s > INITIAL && !WEAK.has(listed[j]!)) strong++;
  }
  const letters = (ts: string[]) => ts.reduce((n, t) => n + t.length, 0);
  const score = (foundL / letters(listed) + foundP / letters(payee)) / 2;
  if (payee.length === 1 && listed.length === 1) return score;
  if (usedP.size > 1) return strong > 1 && usedP.size === Math.min(payee.length, listed.length) ? Math.max(score, review) : score;
  return listed.length === 1 && listed[0]!.length >= 5 && foundL === listed[0]!.length ? review : 0;
}

/** `tokens` with two neighbours joined where `other` writes them as one word (Northstar, North Star; Weiming, Wei Ming). */
function joined(other: string[], tokens: string[]): string[] {
  for (let j = 0; j + 1 < tokens.length; j++) {
    if (tokens[j]!.length < 2 || tokens[j + 1]!.length < 2) continue; // an initial stays one
    const both = tokens[j]! + tokens[j + 1]!;
    if (other.some((o) => o.length > 2 && tokenSimilarity(o, both) >= 0.9))
      return [...tokens.slice(0, j), both, ...joined(other, tokens.slice(j + 2))];
  }
  return tokens;
}

interface ListedName {
  list: number;
  entry: Entry;
  text: string;
  on: 'name' | 'alias';
  tokens: string[];
  letters: number;
}
type Identified = { list: number; entry: Entry; on: 'bic' | 'iban' | 'account'; value: string };
/**
 * The lists, indexed: each distinct token of the listed names (the vocabulary) with the names
 * holding it; each word's letter triples (by word length) and its sound with the words holding
 * them. A payee token finds its alike words through the triples it must share with them (an edit
 * changes at most four) and its sound; only names holding enough alike words to reach the review
 * band are scored, so a payee costs its words' neighbours, never the whole list.
 */
export interface Index {
  lists: ReadList[];
  names: ListedName[];
  vocabulary: Map<string, number>;
  words: string[];
  /** Per word, its sound and the letters it holds (`letterMask`). */
  sounds: string[];
  masks: number[];
  namesOf: number[][];
  tripleIds: Map<string, number>;
  /** Triple id × LENGTHS + word length → the words of that length holding the triple. */
  wordsWithTriple: Postings;
  wordsWithSound: Map<string, number[]>;
  /** Memo of a payee token → its alike vocabulary words and their similarity. */
  alike: Map<string, [number, number][]>;
  /** Work space while one payee is screened. */
  scratch?: Scratch;
  /** Identifier (BIC bank part, IBAN, account; upper case, no spaces) → the entries carrying it. */
  identifiers: Map<string, Identified[]>;
}

const ident = (s: string) => s.replace(/[\s-]/g, '').toUpperCase();
/** A BIC's bank, country and location (its first 8 characters): a listed head-office BIC covers every branch. */
const bank = (bic: string) => ident(bic).slice(0, 8);
const triples = (token: string) => {
  const padded = `^^${token}$$`;
  const out = new Set<string>();
  for (let i = 0; i + 3 <= padded.length; i++) out.add(padded.slice(i, i + 3));
  return out;
};
const push = <K, V>(map: Map<K, V[]>, key: K, value: V) => {
  const at = map.get(key);
  if (at) at.push(value);
  else map.set(key, [value]);
};

export function buildIndex(lists: ReadList[]): Index {
  const index: Index = {
    lists,
    names: [],
    vocabulary: new Map(),
    words: [],
    sounds: [],
    namesOf: [],
    tripleIds: new Map(),
    masks: [],
    wordsWithTriple: postings(new Map(), 0),
    wordsWithSound: new Map(),
    alike: new Map(),
    identifiers: new Map(),
  };
  const { vocabulary, words, namesOf } = index;
  const wordsWithTriple = new Map<number, number[]>();
  lists.forEach(({ entries }, list) => {
    for (const entry of entries) {
      for (const [text, on] of [[entry.name, 'name'] as const, ...entry.aliases.map((a) => [a, 'alias'] as const)]) {
        const ts = nameTokens(text);
        if (!ts.length) continue;
        const id = index.names.push({ list, entry, text, on, tokens: ts, letters: ts.reduce((n, t) => n + t.length, 0) }) - 1;
        for (const t of ts) {
          let word = vocabulary.get(t);
          if (word === undefined) {
            word = words.push(t) - 1;
            vocabulary.set(t, word);
            namesOf.push([]);
            const ids = [...triples(t)].map((p) => index.tripleIds.get(p) ?? index.tripleIds.set(p, index.tripleIds.size).size - 1);
            for (const p of ids) push(wordsWithTriple, p * LENGTHS + Math.min(t.length, LENGTHS - 1), word);
            const key = sound(t);
            index.sounds.push(key);
            index.masks.push(letterMask(t));
            if (key.length >= 3) push(index.wordsWithSound, key, word);
          }
          namesOf[word]!.push(id);
        }
      }
      for (const value of entry.bics) push(index.identifiers, `bic:${bank(value)}`, { list, entry, on: 'bic', value });
      for (const value of entry.ibans) push(index.identifiers, `iban:${ident(value)}`, { list, entry, on: 'iban', value });
      for (const value of entry.accounts) push(index.identifiers, `account:${ident(value)}`, { list, entry, on: 'account', value });
    }
  });
  return { ...index, wordsWithTriple: postings(wordsWithTriple, index.tripleIds.size * LENGTHS) };
}

/** The letters a word holds, one bit each (digits share six bits: a shared bit only lets more words through). */
function letterMask(word: string): number {
  let mask = 0;
  for (let i = 0; i < word.length; i++) {
    const c = word.charCodeAt(i);
    mask |= 1 << (c >= 97 ? c - 97 : 26 + ((c - 48) % 6));
  }
  return mask;
}
function bitCount(n: number): number {
  let count = 0;
  for (; n; n &= n - 1) count++;
  return count;
}

/** Lists of numbers laid end to end: list k is `of[at[k]]` up to `of[at[k + 1]]`. */
interface Postings {
  at: Int32Array;
  of: Int32Array;
}
function postings(lists: Map<number, number[]>, keys: number): Postings {
  const at = new Int32Array(keys + 1);
  for (const [k, l] of lists) at[k + 1] = l.length;
  for (let k = 0; k < keys; k++) at[k + 1] = at[k + 1]! + at[k]!;
  const of = new Int32Array(at[keys]!);
  for (const [k, l] of lists) of.set(l, at[k]);
  return { at, of };
}

/** Words this long or longer share their triples' postings (the length is checked again). */
const LENGTHS = 64;

/**
 * The vocabulary words alike a payee token (tokenSimilarity above 0): those of the same sound, and
 * those of a near length within the allowed edits, which share all but four letter triples per
 * edit and differ in at most two letters per edit. Memoised per token; the words come in the order
 * of their first shared triple (the candidates, and so the hits, keep the order they always had).
 */
function alikeWords(index: Index, token: string): [number, number][] {
  let found = index.alike.get(token);
  if (found) return found;
  const { words, sounds } = index;
  const scratch = scratchOf(index);
  const { seen, shared, first, alike } = scratch;
  const pass = ++scratch.pass;
  const key = sound(token);
  const mask = letterMask(token);
  found = [];
  for (const w of token.length >= 4 ? (index.wordsWithSound.get(key) ?? []) : []) {
    seen[w] = pass;
    const s = compare(token, words[w]!, key, sounds[w]);
    if (s > 0) found.push([w, s]);
  }
  const ts = [...triples(token)].map((p) => index.tripleIds.get(p) ?? -1);
  const needed = Math.max(1, ts.length - 4 * allowedEdits(token.length, token.length));
  const lengths = new Set<number>();
  for (let n = 1; n <= 2 * token.length; n++) if (near(n, token.length)) lengths.add(Math.min(n, LENGTHS - 1));
  const { wordsWithTriple: byTriple } = index;
  const keys = (p: number) => (p < 0 ? [] : [...lengths].map((n) => p * LENGTHS + n));
  const touched: number[] = [];
  ts.forEach((p, position) => {
    for (const k of keys(p))
      for (let i = byTriple.at[k]!; i < byTriple.at[k + 1]!; i++) {
        const w = byTriple.of[i]!;
        if (!shared[w]) {
          touched.push(w);
          first[w] = position;
        }
        shared[w] = shared[w]! + 1;
      }
  });
  const within: number[] = [];
  for (const w of touched) {
    // Each edit adds or removes at most two letters: a word with more letters apart is not within the allowed edits.
    const alikeLength = shared[w]! >= needed && seen[w] !== pass && near(token.length, words[w]!.length);
    if (alikeLength && bitCount(mask ^ index.masks[w]!) <= 2 * allowedEdits(token.length, words[w]!.length)) {
      const s = compare(token, words[w]!, key, sounds[w]);
      if (s > 0) {
        alike[w] = s;
        within.push(w);
      }
    }
    shared[w] = 0;
  }
  within.sort((a, b) => first[a]! - first[b]! || a - b);
  for (const w of within) found.push([w, alike[w]!]);
  index.alike.set(token, found);
  return found;
}

/** Per listed name the alike letters and the payee's words found; per word, the triples it shares with a payee's word. */
interface Scratch {
  letters: Float64Array;
  words: Int32Array;
  seen: Int32Array;
  shared: Uint16Array;
  first: Int32Array;
  alike: Float64Array;
  pass: number;
}
const scratchOf = (index: Index) =>
  (index.scratch ??= {
    letters: new Float64Array(index.names.length),
    words: new Int32Array(index.names.length),
    seen: new Int32Array(index.words.length),
    shared: new Uint16Array(index.words.length),
    first: new Int32Array(index.words.length),
    alike: new Float64Array(index.words.length),
    pass: 0,
  });

/**
 * The listed names a payee's name may match: those holding an alike word for every word of the
 * payee's, or enough alike letters to reach the review band. An initial of the payee's counts as
 * found (it may stand for any word) but finds no name by itself: it would find too many.
 */
function candidates(index: Index, payee: string[], review: number): number[] {
  const letters = scratchOf(index);
  const touched: number[] = [];
  const initials = payee.reduce((mask, t, i) => (t.length === 1 ? mask | (1 << i) : mask), 0);
  // A word of the payee's may be two of the list's, and two of the payee's one of the list's.
  const words: [string, number][] = payee.flatMap((t, i) => {
    const bit = 1 << i;
    const out: [string, number][] = [[t, bit]];
    if (i > 0 && t.length > 1 && payee[i - 1]!.length > 1) out.push([payee[i - 1]! + t, bit | (bit >> 1)]);
    for (let k = 2; k + 2 <= t.length; k++)
      if (index.vocabulary.has(t.slice(0, k)) && index.vocabulary.has(t.slice(k))) out.push([t.slice(0, k), bit], [t.slice(k), bit]);
    return out;
  });
  for (const [t, bits] of words) {
    if (t.length === 1) continue;
    for (const [w, s] of alikeWords(index, t)) {
      const found = s * index.words[w]!.length;
      for (const name of index.namesOf[w]!) {
        if (!letters.words[name]) touched.push(name);
        letters.letters[name] = letters.letters[name]! + found;
        letters.words[name] = letters.words[name]! | bits;
      }
    }
  }
  const all = (1 << Math.min(payee.length, 30)) - 1;
  const out: number[] = [];
  for (const name of touched) {
    const covered = Math.min(1, letters.letters[name]! / index.names[name]!.letters);
    const whole = payee.length > 1 && ((letters.words[name]! | initials) & all) === all;
    if (whole || covered + (initials ? INITIAL * (1 - covered) : 0) >= 2 * review - 1) out.push(name);
    letters.letters[name] = 0;
    letters.words[name] = 0;
  }
  return out;
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
      const listed = ident(r.value);
      const same = listed.length === 8 || listed.endsWith('XXX') || listed === ident(payee.bic);
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
  for (const id of candidates(index, payeeTokens, thresholds.review)) {
    const name = index.names[id]!;
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
