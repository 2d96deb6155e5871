// Removing a secret (the API key) from text that came from outside: a service may echo the key it
// was sent, in any case, encoded, or cut short, anywhere in an error body. Whatever reaches a log,
// a journal, a results file or stderr goes through here first (http.ts, where an answer becomes a
// value or a PayoutApiError).

export const REDACTED = '[redacted]';

/** A cut-off key still identifies it: this many leading characters (of any form) are scrubbed. */
export const MIN_PREFIX = 12;

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * `form` or any prefix of it of at least `min` characters, the longest that is there:
 * "abcdef" with min 3 gives abc(?:d(?:e(?:f)?)?)?
 */
function prefixPattern(form: string, min: number): string {
  const head = escapeRegExp(form.slice(0, min));
  let tail = '';
  for (let i = form.length - 1; i >= min; i--) tail = `(?:${escapeRegExp(form[i]!)}${tail})?`;
  return head + tail;
}

/**
 * A matcher for the secret, case-insensitively, as itself, in base64 (padded or not), base64url
 * and URL-encoded, each also cut short to MIN_PREFIX characters or more. Undefined for a secret
 * too short to look for without mangling ordinary words.
 */
export function secretPattern(secret: string | undefined): RegExp | undefined {
  if (!secret || secret.length < 4) return undefined;
  const b64 = Buffer.from(secret, 'utf8').toString('base64');
  const forms = new Set([
    secret,
    b64,
    b64.replace(/=+$/, ''),
    Buffer.from(secret, 'utf8').toString('base64url'),
    encodeURIComponent(secret),
  ]);
  // Longest forms first: the alternation takes the first that matches at a position.
  const parts = [...forms].sort((a, b) => b.length - a.length).map((f) => prefixPattern(f, Math.min(MIN_PREFIX, f.length)));
  return new RegExp(parts.join('|'), 'gi');
}

export function scrubText(text: string, pattern: RegExp | undefined): string {
  return pattern ? text.replace(pattern, REDACTED) : text;
}

/** Every string in a JSON value (keys included), scrubbed; other values as they are. */
export function scrubDeep<T>(value: T, pattern: RegExp | undefined): T {
  if (!pattern) return value;
  const walk = (v: unknown): unknown => {
    if (typeof v === 'string') return scrubText(v, pattern);
    if (Array.isArray(v)) return v.map(walk);
    if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [scrubText(k, pattern), walk(x)]));
    return v;
  };
  return walk(value) as T;
}
