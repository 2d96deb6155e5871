// A payee against the listed names and identifiers (README: Names, Identifiers, Speed).
import { createHash } from 'node:crypto';
import { jaroWinkler } from '@skyra/jaro-winkler';
import type { Entry, Hit, Payee, ReadList, Thresholds } from './sanctions-lists.ts';
import { unhomoglyph } from '../text.ts';

export function tokens(name: string): string[] {
  // invisible characters (a soft hyphen, a Hangul filler, which is a letter) and modifier letters (a transliteration's ʿ, ʾ, ʻ) are no part of a word
  const s = name
    .normalize('NFKD')
    .replace(/\p{M}|\p{Default_Ignorable_Code_Point}|[\u02B0-\u02FF]/gu, '')
    .replace(/[^\x20-\x7e]/gu, lookAlike);
  // The skeleton maps 0 to O and 1 to l (and m to "rn", kept as m).
  return s
    .toLowerCase()
    .replace(/0/g, 'o')
    .replace(/1/g, 'l')
    .replace(/rn/g, 'm')
    .replace(/ß/g, 'ss')
    .replace(/(?<![\p{L}\p{N}])\p{L}(\.\p{L})+(?![\p{L}\p{N}])/gu, dotted)
    .split(/[^\p{L}\p{N}]+/u) // a name in another script is its words (the UN list gives names so)
    .filter(Boolean);
}
/** Letters with dots: S.A. → sa, L.L.C. → llc (forms, dropped); else initials (Petrov I.S.), as is a letter dotted to a word (C.Okonkwo). */
const dotted = (m: string) => (DROPPED.has(m.replace(/\./g, '')) ? m.replace(/\./g, '') : m);
/** Russian, Ukrainian and Belarusian letters as the lists transliterate them (BGN/PCGN, the signs dropped). */
const LATIN = 'a b v g d e e zh z i y k l m n o p r s t u f kh ts ch sh shch  y  e yu ya i yi ye g u'.split(' ');
const CYRILLIC = new Map([...'абвгдеёжзийклмнопрстуфхцчшщъыьэюяіїєґў'].map((c, i) => [c, LATIN[i]!]));
/** A name with Cyrillic letters as the lists write it in Latin (Иван Петров: ivan petrov); their skeleton is only a look-alike. */
export const latinOf = (name: string): string[] =>
  /\p{Script=Cyrillic}/u.test(name)
    ? [
        name
          .normalize('NFC')
          .toLowerCase()
          .replace(/\p{Script=Cyrillic}/gu, (c) => CYRILLIC.get(c) ?? c),
      ]
    : [];
const lookAlikes = new Map<string, string>();
/**
 * A letter's TR39 skeleton as written, else as the other case is written, when that is Latin letters
 * (a Cyrillic К is a K, its small к like none; a Greek Ν an N, ν a v; an I-like capital an i, not l);
 * else its small letter's. Memoised.
 */
function lookAlike(c: string): string {
  let k = lookAlikes.get(c);
  if (k !== undefined) return k;
  const skeleton = (x: string) => unhomoglyph(x).normalize('NFKD').replace(/\p{M}/gu, '');
  const latin = (x: string) => /^[A-Za-z]+$/.test(x) && x !== 'l';
  const [written, other] = [c, c === c.toLowerCase() ? c.toUpperCase() : c.toLowerCase()].map(skeleton);
  k = latin(written!) ? written! : latin(other!) ? other! : skeleton(c.toLowerCase());
  lookAlikes.set(c, k);
  return k;
}

/** Dropped from both sides before scoring: legal forms, titles, generational suffixes and filler words never make a name alike. */
const DROPPED = new Set(
  (
    'ltd limited llc llp lp inc incorporated corp corporation co company cie gmbh ag kg ohg sa sas sarl srl spa plc bv nv oy ab pvt private ' +
    'as asa pte pty jsc ojsc pjsc cjsc ooo oao zao pao fze fzco fzc bhd sdn kft zrt sro doo the and of et und ' +
    'mr mrs ms miss mx dr prof jr sr junior senior ii iii iv'
  ).split(' '),
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

/** Pairs of tokens already compared (lists and payees repeat their words). */
const compared = new Map<string, Map<string, number>>();
let comparedCount = 0;
function tokenSimilarity(a: string, b: string): number {
  if (a === b) return 1;
  if (comparedCount > 1_000_000) {
    compared.clear();
    comparedCount = 0;
  }
  let row = compared.get(a);
  if (!row) compared.set(a, (row = new Map<string, number>()));
  let s = row.get(b);
  if (s === undefined) {
    comparedCount++;
    row.set(b, (s = compare(a, b)));
  }
  return s;
}
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
/** Whether words of `m` and `n` letters are within the allowed edits in length. */
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

/** The score of two token sets, 0..1 (README "Names"): tokens aligned greedily, best pair first. */
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
  const score = (foundL / letterCount(listed) + foundP / letterCount(payee)) / 2;
  if (payee.length === 1 && listed.length === 1) return score;
  if (usedP.size > 1) return strong > 1 && usedP.size === Math.min(payee.length, listed.length) ? Math.max(score, review) : score;
  return listed.length === 1 && listed[0]!.length >= 5 && foundL === listed[0]!.length ? review : 0;
}

/** How alike a word must be to two neighbours of the other name to join them. */
const JOINED = 0.9;

/** `tokens` with two neighbours joined where `other` writes them as one word (Northstar, North Star; Weiming, Wei Ming). */
function joined(other: string[], tokens: string[]): string[] {
  for (let j = 0; j + 1 < tokens.length; j++) {
    if (tokens[j]!.length < 2 || tokens[j + 1]!.length < 2) continue; // an initial stays one
    const both = tokens[j]! + tokens[j + 1]!;
    if (other.some((o) => o.length > 2 && tokenSimilarity(o, both) >= JOINED))
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
const ident = (s: string) => s.replace(/[\s-]/g, '').toUpperCase();
/** A BIC's bank, country and location (its first 8 characters): a listed head-office BIC covers every branch. */
const bank = (bic: string) => ident(bic).slice(0, 8);
const triples = (token: string) => {
  const padded = `^^${token}$$`;
  return new Set(Array.from({ length: padded.length - 2 }, (_, i) => padded.slice(i, i + 3)));
};
const push = <K, V>(map: Map<K, V[]>, key: K, value: V) => void (map.get(key) ?? map.set(key, []).get(key)!).push(value);
const letterCount = (ts: string[]) => ts.reduce((n, t) => n + t.length, 0);

/** The lists indexed (README "Speed"): the vocabulary, its SymSpell deletions and sounds, postings both ways. */
export type Index = ReturnType<typeof buildIndex>;

export function buildIndex(lists: ReadList[]) {
  const index = {
    lists,
    names: [] as ListedName[],
    vocabulary: new Map<string, number>(),
    words: [] as string[],
    sounds: [] as string[],
    /** Per word the names holding it; a common word's with the names most made of common words first. */
    namesOf: none,
    wordsOf: none,
    letters: new Int32Array(0),
    commonShare: new Float64Array(0),
    masks: [] as number[],
    /** Hash bucket of a deletion variant → the words of four letters or more leaving it. */
    deletions: none,
    longest: 0,
    byLength: none,
    wordsWithSound: new Map<string, number[]>(),
    alike: new Map<string, [number, number][]>(),
    scratch: undefined as Scratch | undefined,
    /** Identifier (BIC bank part, IBAN, account) → the entries carrying it. */
    identifiers: new Map<string, Identified[]>(),
    /** Two neighbouring words of a name written as one (filled once the names are read). */
    joined: joinedIndex([], new Map()),
  };
  const { vocabulary, words } = index;
  const wordsOf: number[][] = [];
  lists.forEach(({ entries }, list) => {
    for (const entry of entries) {
      for (const [text, on] of [[entry.name, 'name'] as const, ...entry.aliases.map((a) => [a, 'alias'] as const)]) {
        const ts = nameTokens(text);
        if (!ts.length) continue;
        const id = index.names.push({ list, entry, text, on, tokens: ts, letters: letterCount(ts) }) - 1;
        for (const t of ts) {
          let word = vocabulary.get(t);
          if (word === undefined) {
            word = words.push(t) - 1;
            vocabulary.set(t, word);
            const key = sound(t);
            index.sounds.push(key);
            index.masks.push(letterMask(t));
            index.longest = Math.max(index.longest, t.length);
            if (key.length >= 3) push(index.wordsWithSound, key, word);
          }
          (wordsOf[id] ??= []).push(word);
        }
      }
      for (const value of entry.bics) push(index.identifiers, `bic:${bank(value)}`, { list, entry, on: 'bic', value });
      // (one key for both: a SWIFT transfer's account number is often an IBAN, and a list's account column too)
      for (const value of entry.ibans) push(index.identifiers, `account:${ident(value)}`, { list, entry, on: 'iban', value });
      for (const value of entry.accounts) push(index.identifiers, `account:${ident(value)}`, { list, entry, on: 'account', value });
    }
  });
  index.joined = joinedIndex(index.names, vocabulary);
  index.deletions = deletionIndex(words);
  index.byLength = postings({ length: index.longest + 1 }, (add) => words.forEach((w, id) => add(w.length, id)));
  index.wordsOf = postings(wordsOf, (add) => wordsOf.forEach((ws, name) => ws.forEach((w) => add(name, w))));
  index.namesOf = postings(words, (add) => wordsOf.forEach((ws, name) => ws.forEach((w) => add(w, name))));
  const { namesOf } = index;
  index.letters = Int32Array.from(index.names, (n) => n.letters);
  index.commonShare = Float64Array.from(index.names, (n, name) => {
    const of = wordsOf[name]!.filter((w) => common(namesOf, w));
    return of.reduce((l, w) => l + words[w]!.length, 0) / n.letters;
  });
  for (let w = 0; w < words.length; w++)
    if (common(namesOf, w)) {
      const list = namesOf.of.subarray(namesOf.at[w], namesOf.at[w + 1]);
      list.set([...list].sort((a, b) => index.commonShare[b]! - index.commonShare[a]! || a - b));
    }
  return index;
}

/** Lengths of two words written as one are told apart up to this (longer ones share a bucket: it only lets more through). */
const LONGEST = 64;

/**
 * Two neighbouring words of each listed name written as one (README "Names": Weiming, Wei Ming), as nameScore joins them
 * for a payee's word alike: by their first word, their second word (`vocabulary` ids), and their sound.
 */
function joinedIndex(names: ListedName[], vocabulary: Map<string, number>) {
  const words: string[] = [];
  const ids = new Map<string, number>();
  const namesOf: number[][] = [];
  /** By a word's `vocabulary` id and the length of the two: first, its id × 2 × LONGEST + length; second, + LONGEST. */
  const byWord = new Map<number, number[]>();
  const withSound = new Map<string, number[]>();
  /** Each one's two words (`vocabulary` ids), in turn. */
  const parts: number[] = [];
  for (const [name, { tokens: ts }] of names.entries())
    for (let j = 0; j + 1 < ts.length; j++) {
      const [a, b] = [ts[j]!, ts[j + 1]!];
      if (a.length < 2 || b.length < 2) continue; // (an initial stays one)
      let id = ids.get(a + b);
      if (id === undefined) {
        ids.set(a + b, (id = words.push(a + b) - 1));
        parts.push(vocabulary.get(a)!, vocabulary.get(b)!);
        const length = Math.min(a.length + b.length, LONGEST - 1);
        push(byWord, vocabulary.get(a)! * 2 * LONGEST + length, id);
        push(byWord, vocabulary.get(b)! * 2 * LONGEST + LONGEST + length, id);
        const key = sound(a + b);
        if (key.length >= 3) push(withSound, key, id);
      }
      (namesOf[id] ??= []).push(name);
    }
  /** `found`: joinsOf, memoised. */
  return { words, parts, namesOf, byWord, withSound, found: new Map<string, [number, number][]>() };
}

/**
 * The neighbouring words written as one (`joined` ids) that `token` is alike enough for nameScore to join, and how alike:
 * of the same sound, or one word whole at its end of `token` (the other within the edits left; the first also after a
 * transposition across the two). Two words both misspelt and not of the same sound are not found. Memoised.
 */
function joinsOf(index: Index, token: string): [number, number][] {
  const { joined: j, vocabulary } = index;
  let found = j.found.get(token);
  if (found) return found;
  const alike = new Map<number, number>();
  const n = token.length;
  const key = sound(token);
  const take = (id: number) => {
    const s = alike.has(id) ? 0 : compare(token, j.words[id]!, key);
    if (s >= JOINED) alike.set(id, s);
  };
  /** Those whose word at the other end is in reach of `rest`, the rest of `token` (as alikeWords: an edit changes two letters at most). */
  const ofWord = (word: string, second: 0 | 1, rest: string, length: number) => {
    const at = (vocabulary.get(word) ?? -1) * 2 * LONGEST + second * LONGEST + Math.min(length, LONGEST - 1);
    const within = 2 * allowedEdits(n, length);
    const letters = letterMask(rest);
    for (const id of j.byWord.get(at) ?? []) if (bitCount(letters ^ index.masks[j.parts[2 * id + 1 - second]!]!) <= within) take(id);
  };
  if (n > 2) {
    for (const id of j.withSound.get(key) ?? []) take(id);
    for (let length = 4; length <= n + allowedEdits(n, n); length++)
      if (near(n, length))
        for (let i = 1; i < n; i++) {
          ofWord(token.slice(0, i), 0, token.slice(i), length);
          ofWord(token.slice(i), 1, token.slice(0, i), length);
          // (the first's last letter and the second's first swapped)
          if (i > 1) ofWord(token.slice(0, i - 1) + token[i]!, 0, token[i - 1]! + token.slice(i + 1), length);
        }
  }
  found = [...alike];
  j.found.set(token, found);
  return found;
}

/** Words of four letters or more by the hash of each deletion variant, in buckets (a shared bucket only lets more words through). */
function deletionIndex(words: string[]): Postings {
  let total = 0;
  for (const w of words) if (w.length >= 4) total += variantCount(w.length, allowedEdits(w.length, w.length));
  const bits = Math.max(4, Math.ceil(Math.log2(total + 1)) - 1);
  return postings({ length: 1 << bits }, (add) =>
    words.forEach((w, id) => w.length >= 4 && variants(w, allowedEdits(w.length, w.length), (h) => add(h >>> (32 - bits), id))),
  );
}
/** At most how many strings deleting up to `depth` of `length` letters leaves. */
function variantCount(length: number, depth: number): number {
  let n = 0;
  for (let d = 0, c = 1; d <= depth; c = (c * (length - d)) / (d + 1), d++) n += c;
  return n;
}
/**
 * Calls `each` with the hash of every string left by deleting at most `depth` letters of `word`,
 * once per run of equal letters; the polynomial hash is built from its parts without the string.
 */
function variants(word: string, depth: number, each: (hash: number) => void): void {
  const n = word.length;
  while (POWERS.length <= n) POWERS.push(Math.imul(POWERS.at(-1)!, 0x01000193));
  const prefix = new Int32Array(n + 1);
  for (let i = 0; i < n; i++) prefix[i + 1] = (Math.imul(prefix[i]!, 0x01000193) + word.charCodeAt(i)) | 0;
  const part = (from: number, to: number) => (prefix[to]! - Math.imul(prefix[from]!, POWERS[to - from]!)) | 0;
  const walk = (kept: number, from: number, left: number) => {
    let h = (Math.imul(kept, POWERS[n - from]!) + part(from, n)) | 0;
    h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
    h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
    each(h ^ (h >>> 16));
    if (left > 0)
      for (let i = from; i < n; i++)
        if (i === from || word[i] !== word[i - 1]) walk((Math.imul(kept, POWERS[i - from]!) + part(from, i)) | 0, i + 1, left - 1);
  };
  walk(0, 0, depth);
}
const POWERS = [1];

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
const none: Postings = { at: new Int32Array(1), of: new Int32Array(0) };
/** `keys.length` lists, filled by `each` (called twice: to count, then to fill) in the order it adds. */
function postings(keys: { length: number }, each: (add: (key: number, value: number) => void) => void): Postings {
  const at = new Int32Array(keys.length + 1);
  each((k) => at[k + 1]!++);
  for (let k = 0; k < keys.length; k++) at[k + 1]! += at[k]!;
  const of = new Int32Array(at[keys.length]!);
  const next = at.slice(0, -1);
  each((k, v) => (of[next[k]!++] = v));
  return { at, of };
}

/** The words alike a payee token (README "Speed"), memoised; by the first of its letter triples they hold, then as listed (stable). */
function alikeWords(index: Index, token: string): [number, number][] {
  let found = index.alike.get(token);
  if (found) return found;
  const { words, sounds } = index;
  const scratch = scratchOf(index);
  const { seen } = scratch;
  const pass = ++scratch.pass;
  const key = sound(token);
  const mask = letterMask(token);
  found = [];
  for (const w of token.length >= 4 ? (index.wordsWithSound.get(key) ?? []) : []) {
    seen[w] = pass;
    const s = compare(token, words[w]!, key, sounds[w]);
    if (s > 0) found.push([w, s]);
  }
  const within: [number, number][] = [];
  const exact = index.vocabulary.get(token);
  if (token.length < 4) {
    if (exact !== undefined) within.push([exact, 1]);
    const initial = token.length === 2 ? index.vocabulary.get(token[0]!) : undefined;
    if (initial !== undefined) within.push([initial, INITIAL]);
  } else {
    const check = (w: number) => {
      if (seen[w] === pass) return;
      seen[w] = pass;
      const word = words[w]!;
      // Each edit adds or removes at most two letters: a word with more letters apart is not within the allowed edits.
      if (!near(token.length, word.length) || bitCount(mask ^ index.masks[w]!) > 2 * allowedEdits(token.length, word.length)) return;
      const s = compare(token, word, key, sounds[w]);
      if (s > 0) within.push([w, s]);
    };
    // A long token has more deletions than there are words of a near length (none past the longest): those are fewer to try.
    const { at, of } = index.deletions;
    const bits = Math.log2(at.length - 1);
    const depth = Math.min(allowedEdits(token.length, token.length), allowedEdits(index.longest, index.longest));
    const lengths = Array.from({ length: index.longest + 1 }, (_, n) => n).filter((n) => n >= 4 && near(n, token.length));
    const { at: from, of: ofLength } = index.byLength;
    if (lengths.reduce((sum, n) => sum + sizeOf(index.byLength, n), 0) < variantCount(token.length, depth))
      for (const n of lengths) for (let i = from[n]!; i < from[n + 1]!; i++) check(ofLength[i]!);
    else
      variants(token, depth, (h) => {
        for (let i = at[h >>> (32 - bits)]!, end = at[(h >>> (32 - bits)) + 1]!; i < end; i++) check(of[i]!);
      });
  }
  const ts = [...triples(token)];
  const first = new Map(within.map(([w]) => [w, ts.findIndex((t) => triples(words[w]!).has(t))]));
  within.sort(([a], [b]) => first.get(a)! - first.get(b)! || a - b);
  found.push(...within);
  index.alike.set(token, found);
  return found;
}

interface Scratch {
  seen: Int32Array;
  visited: Int32Array;
  pass: number;
}
const scratchOf = (index: Index) =>
  (index.scratch ??= { seen: new Int32Array(index.words.length), visited: new Int32Array(index.names.length), pass: 0 });

/** A word on more names than this is common: its names are visited only where the words found may be most of them. */
const COMMON = 64;
const sizeOf = (p: Postings, k: number) => p.at[k + 1]! - p.at[k]!;
const common = (namesOf: Postings, w: number) => sizeOf(namesOf, w) > COMMON;

/** The listed names a payee's name may reach review with; a payee's initial counts as found but finds no name by itself. */
function candidates(index: Index, payee: string[], review: number): number[] {
  const { namesOf, wordsOf } = index;
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
  const pairs: [number, number, number][] = [];
  for (const [t, bits] of words)
    if (t.length > 1) for (const [w, s] of alikeWords(index, t)) pairs.push([w, s * index.words[w]!.length, bits]);
  const all = (1 << Math.min(payee.length, 30)) - 1;
  const reach = 2 * review - 1;
  // A name holding no rare word found is a candidate only when its common words found are most of
  // it (the letters found reach `least` of it), or when common words stand for every payee's word.
  const least = initials ? (reach - INITIAL) / (1 - INITIAL) : reach;
  const credit = new Map<number, number>();
  for (const [w, found] of pairs) if (common(namesOf, w)) credit.set(w, (credit.get(w) ?? 0) + found);
  const most = Math.max(0, ...[...credit].map(([w, c]) => c / index.words[w]!.length));
  const whole = (bits: number) => payee.length > 1 && ((bits | initials) & all) === all;
  const everyName = new Set<number>();
  if (least <= 0) credit.forEach((_, w) => everyName.add(w));
  else if (whole(pairs.reduce((b, [w, , bits]) => (common(namesOf, w) ? b | bits : b), 0))) {
    // Names of common words only may hold a word for each of the payee's: visit all of one payee word's.
    let cheapest = Infinity;
    for (let i = 0; i < Math.min(payee.length, 30); i++) {
      if (initials & (1 << i)) continue;
      const of = [...credit.keys()].filter((w) => pairs.some(([v, , bits]) => v === w && bits & (1 << i)));
      const cost = of.reduce((n, w) => n + sizeOf(namesOf, w), 0);
      if (cost < cheapest) {
        cheapest = cost;
        everyName.clear();
        for (const w of of) everyName.add(w);
      }
    }
  }
  const scratch = scratchOf(index);
  const pass = ++scratch.pass;
  const visited: number[] = [];
  // the letters of two neighbouring words of a name that a payee's word writes as one, found (nameScore joins them)
  const joins = new Map<number, [number, number]>();
  for (const [i, t] of payee.entries())
    for (const [id, s] of joinsOf(index, t))
      for (const name of index.joined.namesOf[id]!) {
        const [letters, b] = joins.get(name) ?? [0, 0];
        joins.set(name, [letters + s * index.joined.words[id]!.length, b | (1 << i)]);
        if (scratch.visited[name] !== pass) visited.push(name);
        scratch.visited[name] = pass;
      }
  for (const [w] of pairs)
    for (let i = namesOf.at[w]!, every = !common(namesOf, w) || everyName.has(w); i < namesOf.at[w + 1]!; i++) {
      const name = namesOf.of[i]!;
      if (!every && index.commonShare[name]! * most < least - 1e-9) break;
      if (scratch.visited[name] !== pass) visited.push(name);
      scratch.visited[name] = pass;
    }
  const out: [number, number][] = [];
  for (const name of visited) {
    let [letters, bits] = joins.get(name) ?? [0, 0];
    let first = -1;
    pairs.forEach(([w, found, b], p) => {
      for (let i = wordsOf.at[name]!; i < wordsOf.at[name + 1]!; i++)
        if (wordsOf.of[i] === w) {
          letters += found;
          bits |= b;
          if (first < 0) first = p;
        }
    });
    const covered = Math.min(1, letters / index.letters[name]!);
    if (whole(bits) || covered + (initials ? INITIAL * (1 - covered) : 0) >= reach) out.push([first < 0 ? pairs.length : first, name]);
  }
  return out.sort(([p, a], [q, b]) => p - q || a - b).map(([, name]) => name);
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
      entryDigest: createHash('sha256').update(JSON.stringify(entry)).digest('hex'),
      ...h,
      ...(entry.programme ? { programme: entry.programme } : {}),
      score: (Math.floor(h.score * 100) / 100).toFixed(2),
    });
  };
  for (const [whose, bic] of [
    [payee.party ?? 'payee', payee.bic],
    ['intermediary bank', payee.intermediaryBic],
  ] as const)
    for (const r of bic ? (index.identifiers.get(`bic:${bank(bic)}`) ?? []) : []) {
      const listed = ident(r.value);
      const same = listed.length === 8 || listed.endsWith('XXX') || listed === ident(bic!);
      hit(r.list, r.entry, {
        matched: r.value,
        on: 'bic',
        band: same ? 'hit' : 'review',
        score: same ? 1 : thresholds.review,
        why: same ? `the ${whose}'s BIC ${bic} is listed` : `the ${whose}'s BIC ${bic} is another branch of the listed bank ${r.value}`,
      });
    }
  // (a wallet id, FPS id, phone or email on a list's account column is a hit as an account number is)
  const accounts: [on: 'iban' | 'account', value: string | undefined, label: string][] = [
    ['iban', payee.iban, 'IBAN'],
    ['account', payee.accountNumber, 'account'],
    ...(payee.otherAccounts ?? []).map(([field, value]): [on: 'account', value: string, label: string] => ['account', value, field]),
  ];
  for (const [on, value, label] of accounts)
    if (value && !(on === 'account' && ident(value) === ident(payee.iban ?? '')))
      for (const r of index.identifiers.get(`account:${ident(value)}`) ?? [])
        hit(r.list, r.entry, { matched: r.value, on, band: 'hit', score: 1, why: `the ${payee.party ?? 'payee'}'s ${label} is listed` });
  const best = new Map<Entry, { name: ListedName; score: number }>();
  for (const payeeTokens of [payee.name, ...latinOf(payee.name)].map(nameTokens))
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
