// Removing a secret (the API key) from text that came from outside: a service, or a gateway in
// front of it, may echo the key it was sent, in any case, encoded, cut short or inside a longer
// encoded text, anywhere in an error body. Whatever reaches a log, a journal, a results file, a
// report or stderr goes through here first (http.ts, where an answer becomes a value or a
// PayoutApiError).

export const REDACTED = '[redacted]';

/**
 * Fewer characters of a form could be an ordinary word or an identifier; this many consecutive
 * characters of one of the key's forms identify the key (a form shorter than this counts whole).
 */
const MIN_RUN = 12;

/**
 * base64 (or base64url) of the secret as it reads inside a longer encoded text, where it starts
 * `offset` bytes into a group of three ("key=" + key): the characters that encode the secret's
 * bits only, without those shared with the bytes before it.
 */
function base64At(secret: Buffer, offset: number, encoding: 'base64' | 'base64url'): string {
  const text = Buffer.concat([Buffer.alloc(offset), secret]).toString(encoding);
  return text.replace(/=+$/, '').slice(Math.ceil((offset * 8) / 6));
}

/**
 * The forms in which a service or a gateway might echo the secret, compared without case (so
 * upper, lower and mixed case of each count). Any MIN_RUN characters of one of them are
 * scrubbed: that covers a key cut short and the key without its `sk_sandbox_` style prefix
 * (api-key.ts), whose forms are parts of these.
 */
const FORMS: ((secret: Buffer) => string)[] = [
  (s) => s.toString('utf8'), // as sent
  (s) => s.toString('hex'), // hex
  (s) => base64At(s, 0, 'base64'), // base64, the secret alone or at the start of a group of 3 bytes
  (s) => base64At(s, 1, 'base64'), // base64, one byte into a group ("key=" + key)
  (s) => base64At(s, 2, 'base64'), // base64, two bytes into a group
  (s) => base64At(s, 0, 'base64url'), // base64url, at each offset likewise
  (s) => base64At(s, 1, 'base64url'),
  (s) => base64At(s, 2, 'base64url'),
];
// (URL-encoded, whole or in part, and JSON \u escapes: read through by `undisguised`, so any form above is found under them)

/** ASCII letters in lower case, nothing else: the string keeps its length (the forms are ASCII). */
const lowerAscii = (s: string): string => s.replace(/[A-Z]+/g, (c) => c.toLowerCase());

/** The secret's forms as their runs of MIN_RUN characters (or whole, when shorter), by length: built once per key. */
export type SecretMatcher = ReadonlyMap<number, ReadonlySet<string>>;

/** The matcher of a secret; undefined for one too short to look for without mangling ordinary words. */
export function secretMatcher(secret: string | undefined): SecretMatcher | undefined {
  if (!secret || secret.length < 4) return undefined;
  const runs = new Map<number, Set<string>>();
  for (const form of FORMS.map((f) => lowerAscii(f(Buffer.from(secret, 'utf8'))))) {
    const width = Math.min(MIN_RUN, form.length);
    const set = runs.get(width) ?? runs.set(width, new Set()).get(width)!;
    for (let i = 0; i + width <= form.length; i++) set.add(form.slice(i, i + width));
  }
  return runs;
}

const HIDDEN = /[\u00ad\u180e\u200b-\u200f\u2060-\u2064\ufeff]/;
const ESCAPE = /%([0-9a-f]{2})|\\u([0-9a-f]{4})/iy;

/**
 * The text as a gateway may have disguised the key in it, undone: %XX and \uXXXX decoded (`sk%5Fsandbox`,
 * JSON's `\u0073k_`), invisible characters dropped (U+200B between characters); each character of
 * the view with the span of the text it came from.
 */
function undisguised(text: string): { view: string; start: number[]; end: number[] } {
  let view = '';
  const start: number[] = [];
  const end: number[] = [];
  for (let i = 0; i < text.length;) {
    ESCAPE.lastIndex = i;
    const esc = ESCAPE.exec(text);
    const c = esc ? String.fromCharCode(parseInt(esc[1] ?? esc[2]!, 16)) : text[i]!;
    const next = i + (esc ? esc[0].length : 1);
    if (!HIDDEN.test(c)) {
      view += c;
      start.push(i);
      end.push(next);
    }
    i = next;
  }
  return { view, start, end };
}

/** The text with every character that lies in a run of one of the secret's forms, as written or undisguised, replaced; each stretch by one REDACTED. */
export function scrubText(text: string, matcher: SecretMatcher | undefined): string {
  if (!matcher) return text;
  const hit = new Uint8Array(text.length);
  // `s` is the text itself, or its undisguised view with the span of the text each character came from
  const mark = (s: string, start?: number[], end?: number[]) => {
    const lower = lowerAscii(s);
    for (const [width, runs] of matcher)
      for (let i = 0; i + width <= s.length; i++)
        if (runs.has(lower.slice(i, i + width))) hit.fill(1, start?.[i] ?? i, end?.[i + width - 1] ?? i + width);
  };
  mark(text);
  const u = undisguised(text);
  if (u.view !== text) mark(u.view, u.start, u.end);
  if (!hit.includes(1)) return text;
  let out = '';
  for (let i = 0; i < text.length; i++)
    if (!hit[i]) out += text[i];
    else if (!hit[i - 1]) out += REDACTED; // one for each stretch
  return out;
}

/** Every string in a JSON value (keys included), scrubbed; other values as they are. */
export function scrubDeep<T>(value: T, matcher: SecretMatcher | undefined): T {
  if (!matcher) return value;
  const walk = (v: unknown): unknown => {
    if (typeof v === 'string') return scrubText(v, matcher);
    if (Array.isArray(v)) return v.map(walk);
    if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [scrubText(k, matcher), walk(x)]));
    return v;
  };
  return walk(value) as T;
}
