// Removing the API key from text from outside: a service or gateway may echo it in any case, encoded,
// cut short or inside a longer encoded text. Every answer goes through here first (http.ts).
export const REDACTED = '[redacted]';

/** Fewer characters of a form could be an ordinary word; a shorter form counts whole. */
const MIN_RUN = 12;

/** base64 of the secret starting `offset` bytes into a group of three ("key=" + key): only the characters of its own bits. */
function base64At(secret: Buffer, offset: number, encoding: 'base64' | 'base64url'): string {
  const text = Buffer.concat([Buffer.alloc(offset), secret]).toString(encoding);
  return text.replace(/=+$/, '').slice(Math.ceil((offset * 8) / 6));
}

/** Compared without case; any MIN_RUN characters of one also cover a key cut short or without its prefix. %XX and \u: `undisguised`. */
const FORMS: ((secret: Buffer) => string)[] = [
  (s) => s.toString('utf8'),
  (s) => s.toString('hex'),
  ...[0, 1, 2].flatMap((offset) => [(s: Buffer) => base64At(s, offset, 'base64'), (s: Buffer) => base64At(s, offset, 'base64url')]),
];

/** Keeps the string's length (the forms are ASCII). */
const lowerAscii = (s: string): string => s.replace(/[A-Z]+/g, (c) => c.toLowerCase());

/** The forms' runs of MIN_RUN characters (or whole, when shorter), by length: built once per key. */
export type SecretMatcher = ReadonlyMap<number, ReadonlySet<string>>;

/** Undefined for a secret too short to look for without mangling ordinary words. */
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

/** %XX and \uXXXX decoded, invisible characters dropped; each character with the span of the text it came from. */
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

/** Every character in a run of a form, as written or undisguised, replaced; each stretch by one REDACTED. */
export function scrubText(text: string, matcher: SecretMatcher | undefined): string {
  if (!matcher) return text;
  const hit = new Uint8Array(text.length);
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

/** Every string in a JSON value, keys included. */
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
