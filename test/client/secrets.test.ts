// The key scrubbed in every spelling a service or gateway could echo (issue 29, item 1): any 12
// characters of the key, in any case, hex, base64 and base64url at each offset, URL-encoded; and
// (issue 43, item 16) with U+200B between its characters, only its `_` encoded, or as JSON \u escapes.
import { describe, expect, it } from 'vitest';
import { ApiKey } from '../../src/client/api-key.ts';
import { REDACTED, scrubDeep, scrubText, secretMatcher } from '../../src/client/api-key.ts';
import { KEY } from '../engine/helpers.ts';
import { echoes, keyFormsIn } from './key-forms.ts';

// (the last: a "/" every 7 characters, so an echo with "\/" for each holds no 12 of them in a row)
const KEYS = [KEY, 'sk_live_Mixed/Case+Key=2025~x', 'plain_key_without_prefix_0123', 'QmFzZT/Y0S2V5/V2l0aF/BhZGRp/bmc0Ab'];

/** Where an echo may sit: a JSON error body, an HTML page of a gateway, a line of text. */
const CONTAINERS = {
  json: (echo: string) => [`{"statusCode":400,"message":"x-api-key `, echo, ` is not allowed","error":"VALIDATION_ERROR"}`],
  html: (echo: string) => [`<html><head><title>400 Bad Request</title></head><body><p>key: <code>`, echo, `</code></p></body></html>`],
  text: (echo: string) => ['Bad Request: header x-api-key=', echo, ' refused'],
};

describe('every form of the key, embedded anywhere, is scrubbed', () => {
  for (const key of KEYS) {
    const m = secretMatcher(key);
    for (const [form, echo] of Object.entries(echoes(key))) {
      it(`${key.slice(0, 8)}…: ${form} in JSON, HTML and text`, () => {
        expect(keyFormsIn(echo, key), 'the echo holds the key').not.toEqual([]);
        for (const [name, wrap] of Object.entries(CONTAINERS)) {
          const [before, , after] = wrap(echo);
          const out = scrubText(wrap(echo).join(''), m);
          expect(keyFormsIn(out, key), `${name}: ${out}`).toEqual([]);
          expect(out, name).toContain(REDACTED);
          // What surrounds the echo stays as it was (a JSON body stays JSON).
          expect(out.startsWith(before!) && out.endsWith(after!), `${name}: ${out}`).toBe(true);
          if (name === 'json') expect(JSON.parse(out).error).toBe('VALIDATION_ERROR');
        }
      });
    }
  }

  it('every stretch of the key is one [redacted], wherever it is in the text', () => {
    const m = secretMatcher(KEY);
    expect(scrubText(`${KEY} and ${KEY.toUpperCase()}, ${KEY}${KEY}`, m)).toBe(`${REDACTED} and ${REDACTED}, ${REDACTED}`);
    expect(scrubText(`x${KEY.slice(3, 15)}y`, m)).toBe(`x${REDACTED}y`);
  });

  it('scrubDeep: every string of a parsed body, keys of objects included', () => {
    const m = secretMatcher(KEY);
    const b64 = Buffer.from(`key=${KEY}`).toString('base64');
    const body = { errors: [{ field: `h ${echoes(KEY).hex}`, message: `m ${b64}` }], [KEY]: 1, n: 5, ok: true };
    const out = scrubDeep(body, m);
    expect(keyFormsIn(JSON.stringify(out), KEY)).toEqual([]);
    expect(out.n).toBe(5);
    expect(out.ok).toBe(true);
    expect(out).toHaveProperty([REDACTED], 1);
  });

  it('the ApiKey scrubs with its own forms', () => {
    const key = new ApiKey(KEYS[1]!);
    const text = `echo ${echoes(KEYS[1]!).percentEveryByte} and ${echoes(KEYS[1]!).base64AfterKeyEquals}`;
    expect(keyFormsIn(key.scrub(text), KEYS[1]!)).toEqual([]);
  });
});

describe('ordinary text is left alone', () => {
  it('fewer than 12 characters of a form, other keys of the same shape, ids, words', () => {
    const m = secretMatcher(KEY);
    const texts = [
      'box_acme_pr and sk_sandbox_', // 11 characters of the key each
      'sk_sandbox_globex',
      'Acme primary account, ACME_PRIM',
      'pb3-0f3c0c4e8b1a4f8e9d2b7c6a5e4f3d2c-1',
      '6a1f0e3c-1b2d-4e5f-8a9b-0c1d2e3f4a5b',
      'c2tfc2FuZGJ', // 11 characters of its base64
      '%73%6B%5F%7', // 11 characters of it percent-encoded
    ];
    for (const t of texts) expect(scrubText(t, m), t).toBe(t);
  });

  it('a key too short to look for is not looked for; a short one counts only whole', () => {
    expect(secretMatcher('abc')).toBeUndefined();
    const m = secretMatcher('k3y9zq');
    expect(scrubText('key k3y9zq and K3Y9ZQ, k3y9z', m)).toBe(`key ${REDACTED} and ${REDACTED}, k3y9z`);
  });
});
