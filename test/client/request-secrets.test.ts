// What a request carries besides the key (a webhook's secret, its URL's password or token) never
// comes back through the service's answer: scrubbed like the key from errors, as every form of it
// (key-forms.ts); and a URL a message quotes shows neither its password nor its query.
import { describe, expect, it } from 'vitest';
import { ApiKey, ClientConfigError } from '../../src/client/api-key.ts';
import { PayoutClient } from '../../src/client/client.ts';
import { resolveEnvironment } from '../../src/client/environment.ts';
import { PayoutApiError } from '../../src/client/errors.ts';
import { maskUrl } from '../../src/mask.ts';
import { json, scriptedFetch } from './fake-fetch.ts';
import { echoes, keyFormsIn } from './key-forms.ts';

const SECRET = 'whsec_Registered/Secret+2025';
const URL_PASSWORD = 'UrlPassword123';
const TOKEN = 'QueryToken4567';
const HOOK = `https://hooks:${URL_PASSWORD}@hooks.example.com/in?token=${TOKEN}`;

/** Every form of each secret the request carried, echoed in the message, field errors and a text page. */
function echoed(): string {
  return [SECRET, URL_PASSWORD, TOKEN].flatMap((s) => Object.values(echoes(s))).join(' ');
}

async function failure(answer: Response, call: (c: PayoutClient) => Promise<unknown>): Promise<PayoutApiError> {
  const { fetch } = scriptedFetch([answer]);
  const c = new PayoutClient({
    baseUrl: 'https://x.test',
    apiKey: new ApiKey('sk_sandbox_request_secrets'),
    fetch,
    retry: { maxAttempts: 1 },
  });
  const e = await call(c).then(
    () => undefined,
    (x: unknown) => x,
  );
  expect(e).toBeInstanceOf(PayoutApiError);
  return e as PayoutApiError;
}

function expectNone(e: PayoutApiError, quoted: boolean) {
  const text = JSON.stringify(e.toJSON()) + e.message + String(e.stack);
  for (const s of [SECRET, URL_PASSWORD, TOKEN]) expect(keyFormsIn(text, s), `${s} in ${text}`).toEqual([]);
  // (an HTML page is named, not quoted)
  if (quoted) expect(e.message).toContain('[redacted]');
}

describe("a webhook's secret and URL echoed by the service", () => {
  const answers = {
    '400 body': () =>
      json(400, {
        statusCode: 400,
        error: 'VALIDATION_ERROR',
        message: [`refused ${echoed()}`],
        errors: [{ field: 'secret', message: echoed() }],
      }),
    '500 text': () => new Response(`upstream said: ${echoed()}`, { status: 500, headers: { 'content-type': 'text/plain' } }),
    '502 html': () => new Response(`<html><body>${echoed()}</body></html>`, { status: 502, headers: { 'content-type': 'text/html' } }),
  };
  for (const [name, answer] of Object.entries(answers)) {
    it(`registerWebhook, ${name}: in no error`, async () => {
      expectNone(await failure(answer(), (c) => c.registerWebhook({ url: HOOK, secret: SECRET })), !name.includes('html'));
    });
    it(`updateWebhook, ${name}: in no error`, async () => {
      expectNone(await failure(answer(), (c) => c.updateWebhook('wh_1', { url: HOOK, secret: SECRET })), !name.includes('html'));
    });
  }

  it('a success answer that repeats the secret keeps it out of the record read', async () => {
    const { fetch } = scriptedFetch([json(201, { id: 'wh_1', url: 'https://hooks.example.com/in', note: `stored ${SECRET}` })]);
    const c = new PayoutClient({ baseUrl: 'https://x.test', apiKey: new ApiKey('sk_sandbox_request_secrets'), fetch });
    const r = await c.registerWebhook({ url: HOOK, secret: SECRET });
    expect(keyFormsIn(JSON.stringify(r), SECRET)).toEqual([]);
    expect(r.id).toBe('wh_1');
  });
});

describe('maskUrl: a URL as a message quotes it', () => {
  it('without user, password, query or fragment; the rest as given', () => {
    expect(maskUrl(HOOK)).toBe('https://***@hooks.example.com/in?***');
    expect(maskUrl('http://127.0.0.1:4010/v1')).toBe('http://127.0.0.1:4010/v1');
    expect(maskUrl('ftp://u:pw@127.0.0.1/x#frag')).toBe('ftp://***@127.0.0.1/x?***');
    // also a text that does not parse, and one without a scheme
    expect(maskUrl('http://user:p@ss:word@127.0.0.1:1:99999/?token=abc')).toBe('http://***@127.0.0.1:1:99999/?***');
    expect(maskUrl('u:Secret9@gateway.example.com')).toBe('***@gateway.example.com');
  });
});

describe('a base URL or gateway host refused: its password and query never quoted', () => {
  const refused = (o: { baseUrl?: string; gatewayHost?: string }) => {
    try {
      resolveEnvironment({ ...o, vars: {} });
    } catch (e) {
      expect(e).toBeInstanceOf(ClientConfigError);
      return (e as Error).message;
    }
    throw new Error('not refused');
  };
  for (const o of [
    { baseUrl: `ftp://u:${URL_PASSWORD}@127.0.0.1/?token=${TOKEN}` },
    { baseUrl: `http://u:${URL_PASSWORD}@127.0.0.1:1:99999/?token=${TOKEN}` },
    { baseUrl: `http://u:${URL_PASSWORD}@127.0.0.1:4010/` },
    { baseUrl: `http://127.0.0.1:4010/?token=${TOKEN}` },
    { gatewayHost: `https://u:${URL_PASSWORD}@gateway.example.com/?token=${TOKEN}` },
  ]) {
    it(JSON.stringify(o), () => {
      const m = refused(o);
      expect(m).not.toContain(URL_PASSWORD);
      expect(m).not.toContain(TOKEN);
    });
  }
});
