// The forms in which a service or a gateway could echo an API key, and a check that a text holds
// none of them: written apart from src/client/api-key.ts (a test that shared its table would pass
// whatever the table missed).

/** Complete echoes of the key, as a service or gateway could send them back. */
export function echoes(key: string): Record<string, string> {
  const bytes = Buffer.from(key);
  const everyByte = (hex: (b: number) => string) => [...bytes].map((b) => `%${hex(b)}`).join('');
  return {
    raw: key,
    upper: key.toUpperCase(),
    lower: key.toLowerCase(),
    truncated: key.slice(0, 14),
    withoutPrefix: key.replace(/^[a-z]+_[a-z]+_/i, ''),
    hex: bytes.toString('hex'),
    hexUpper: bytes.toString('hex').toUpperCase(),
    base64: bytes.toString('base64'),
    base64url: bytes.toString('base64url'),
    base64AfterKeyEquals: Buffer.from(`key=${key}`).toString('base64'),
    base64AfterOneByte: Buffer.from(`k${key}`).toString('base64'),
    base64urlAfterTwoBytes: Buffer.from(`k=${key};`).toString('base64url'),
    urlEncoded: encodeURIComponent(key),
    percentEveryByte: everyByte((b) => b.toString(16).toUpperCase()),
    percentEveryByteLower: everyByte((b) => b.toString(16)),
    // issue 43, item 16: disguises that kept the key whole
    zeroWidthBetween: [...key].join('\u200b'),
    underscoreOnlyEncoded: key.replace(/_/g, '%5F'),
    jsonEscapes: [...key].map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`).join(''),
    // JSON text quoted as text (a gateway's log line in a message; PHP's json_encode also escapes "/")
    jsonEscapedSlashes: key.replace(/[\\/"]/g, '\\$&'),
    // an HTML encoder's (OWASP's: every character but letters, digits, "," "." "-" "_" and space)
    htmlEntities: key.replace(/[^\w,.\- ]/g, (c) => `&#x${c.charCodeAt(0).toString(16).toUpperCase()};`),
    htmlDecimalEntities: key.replace(/[^\w,.\- ]/g, (c) => `&#${c.charCodeAt(0)};`),
  };
}

/**
 * The key's forms to look for, each compared without case: as itself, hex, percent-encoded byte
 * by byte, and base64/base64url at each of the three offsets in a group of three bytes (the
 * characters after those the bytes before the key share).
 */
function forms(key: string): Record<string, string> {
  const forms: Record<string, string> = {
    raw: key,
    hex: Buffer.from(key).toString('hex'),
    urlEncoded: encodeURIComponent(key),
    percentEveryByte: Buffer.from(key).toString('hex').replace(/../g, '%$&'),
  };
  for (const encoding of ['base64', 'base64url'] as const)
    for (const before of [0, 1, 2]) {
      const text = Buffer.from('\0'.repeat(before) + key).toString(encoding);
      forms[`${encoding}+${before}`] = text.replace(/=/g, '').slice(before === 0 ? 0 : before + 1);
    }
  return forms;
}

/** The names of the key's forms of which some 12 consecutive characters are in the text (case ignored). */
export function keyFormsIn(text: string, key: string): string[] {
  // what a reader sees once invisible characters are dropped and %XX and \uXXXX escapes decoded
  const decoded = text
    .replace(/\u200b|\u200c|\u200d|\u2060|\ufeff/g, '')
    .replace(/%([0-9a-f]{2})|\\u([0-9a-f]{4})/gi, (_, p: string | undefined, u: string | undefined) =>
      String.fromCharCode(parseInt(p ?? u!, 16)),
    )
    .replace(/\\([/"\\])/g, '$1')
    .replace(/&#x([0-9a-f]+);/gi, (_, h: string) => String.fromCharCode(parseInt(h, 16)))
    .replace(/&#(\d+);/g, (_, d: string) => String.fromCharCode(Number(d)));
  const lower = `${text}\n${decoded}`.toLowerCase();
  return Object.entries(forms(key))
    .filter(([, form]) => {
      const f = form.toLowerCase();
      for (let i = 0; i + 12 <= f.length; i++) if (lower.includes(f.slice(i, i + 12))) return true;
      return false;
    })
    .map(([name]) => name);
}
