// Which answers are definitive (src/client/definitive.ts, issue 15): only the service's own refusal
// says it did not act; every other answer to a mutating route leaves the outcome unknown.
import { describe, expect, it } from 'vitest';
import { PayoutClient } from '../../src/client/client.ts';
import { describeForeignBody, errorOutcome, isServiceRefusal } from '../../src/client/definitive.ts';
import { INITIATE_BODY, failure, json, scriptedFetch } from './fake-fetch.ts';

const body = (o: unknown) => JSON.stringify(o);
const NGINX_408 =
  '<html>\r\n<head><title>408 Request Time-out</title></head>\r\n<body><center><h1>408 Request Time-out</h1></center></body></html>';
const NGINX_502 = '<html><head><title>502 Bad Gateway</title></head><body><h1>502 Bad Gateway</h1><hr>nginx</body></html>';

// [what, status, body, outcome on a mutating route of the service]
const TABLE: [string, number, string, 'definitive' | 'unknown'][] = [
  // the service's refusals (spec §7)
  ['400 VALIDATION_ERROR', 400, body({ statusCode: 400, message: 'documents.0 must be a URL', error: 'VALIDATION_ERROR' }), 'definitive'],
  ['400 INSUFFICIENT_FUNDS', 400, body({ statusCode: 400, message: 'Insufficient funds', error: 'INSUFFICIENT_FUNDS' }), 'definitive'],
  [
    '400 MISSING_REQUIRED_FIELDS, message array',
    400,
    body({ statusCode: 400, message: ['iban required'], error: 'MISSING_REQUIRED_FIELDS' }),
    'definitive',
  ],
  ['400 CORRIDOR_NOT_ENABLED', 400, body({ statusCode: 400, message: 'Pair not enabled', error: 'CORRIDOR_NOT_ENABLED' }), 'definitive'],
  ['400 statusCode as text', 400, body({ statusCode: '400', message: 'x', error: 'INSUFFICIENT_FUNDS' }), 'definitive'],
  ['400 a spec code without statusCode', 400, body({ message: 'x', error: 'INSUFFICIENT_FUNDS' }), 'definitive'],
  [
    "400 swap 'Invalid payout amount' (no code, spec §7)",
    400,
    body({ statusCode: 400, message: 'Invalid payout amount', error: 'Bad Request' }),
    'definitive',
  ],
  ['401 {statusCode, message}', 401, body({ statusCode: 401, message: 'Unauthorized' }), 'definitive'],
  ['403 {statusCode, message, error}', 403, body({ statusCode: 403, message: 'Forbidden', error: 'Forbidden' }), 'definitive'],
  ['404 PAYOUT_NOT_FOUND', 404, body({ statusCode: 404, message: 'Payout not found', error: 'PAYOUT_NOT_FOUND' }), 'definitive'],
  ['409 IDEMPOTENCY_KEY_CONFLICT', 409, body({ statusCode: 409, message: 'conflict', error: 'IDEMPOTENCY_KEY_CONFLICT' }), 'definitive'],
  ['429 with the error body', 429, body({ statusCode: 429, message: 'slow down', error: 'RATE_LIMIT_EXCEEDED' }), 'definitive'],
  ['429 from a rate limiter in front (HTML)', 429, '<html><title>429 Too Many Requests</title></html>', 'definitive'],
  // timeouts and gateways, whatever the body
  ['408 nginx HTML', 408, NGINX_408, 'unknown'],
  ['408 in the service shape', 408, body({ statusCode: 408, message: 'Request Timeout', error: 'REQUEST_TIMEOUT' }), 'unknown'],
  ['425 Too Early', 425, '', 'unknown'],
  ['499 client closed request', 499, '', 'unknown'],
  ['500 service error body', 500, body({ statusCode: 500, message: 'Internal Server Error' }), 'unknown'],
  ['502 nginx HTML', 502, NGINX_502, 'unknown'],
  ['503 text', 503, 'Service Unavailable', 'unknown'],
  ['504 empty', 504, '', 'unknown'],
  ['302 redirect', 302, '', 'unknown'],
  // a 4xx without the service's error body
  ['400 HTML of a WAF', 400, '<html><head><title>400 Bad Request</title></head><body>Request blocked</body></html>', 'unknown'],
  ['400 plain text', 400, 'Bad Request', 'unknown'],
  ['400 empty', 400, '', 'unknown'],
  ['400 JSON of a load balancer', 400, body({ message: 'Bad Request' }), 'unknown'],
  ['400 NestJS default (no spec code)', 400, body({ statusCode: 400, message: ['bad'], error: 'Bad Request' }), 'unknown'],
  ['400 statusCode not the status', 400, body({ statusCode: 502, message: 'x', error: 'UPSTREAM_ERROR' }), 'unknown'],
  ['400 no message', 400, body({ statusCode: 400, error: 'SOMETHING' }), 'unknown'],
  ['401 HTML', 401, '<html><title>401 Authorization Required</title></html>', 'unknown'],
  ['403 HTML of a WAF', 403, '<html><title>403 Forbidden</title></html>', 'unknown'],
  ['404 HTML', 404, '<html><title>404 Not Found</title></html>', 'unknown'],
  ['404 NestJS route not found', 404, body({ statusCode: 404, message: 'Cannot POST /x', error: 'Not Found' }), 'unknown'],
  ['409 JSON without a code', 409, body({ statusCode: 409, message: 'Conflict' }), 'unknown'],
  ['413 HTML of a proxy', 413, '<html><title>413 Request Entity Too Large</title></html>', 'unknown'],
  ['400 a JSON array', 400, '[]', 'unknown'],
  // the spec's shape, but a code its table does not list, or lists under another status (issue 39)
  ['400 a gateway in the service shape', 400, body({ statusCode: 400, message: 'Request blocked', error: 'RESPONSE_BLOCKED' }), 'unknown'],
  ['400 a code the spec does not list', 400, body({ statusCode: 400, message: 'Blocked', error: 'PROHIBITED_DESTINATION' }), 'unknown'],
  ['400 a table code of another status', 400, body({ statusCode: 400, message: 'x', error: 'IDEMPOTENCY_KEY_CONFLICT' }), 'unknown'],
  ['409 a table code of another status', 409, body({ statusCode: 409, message: 'x', error: 'INSUFFICIENT_FUNDS' }), 'unknown'],
  ['400 a table code, statusCode another', 400, body({ statusCode: 409, message: 'x', error: 'INSUFFICIENT_FUNDS' }), 'unknown'],
];

describe('the classification table (a mutating route of the service)', () => {
  it.each(TABLE)('%s -> %s', (_what, status, text, outcome) => {
    expect(errorOutcome({ status, text, mutating: true, fromService: true })).toBe(outcome);
    // (a 429 is definitive whoever answered it: it refuses before processing)
    if (status !== 429) expect(isServiceRefusal(status, text)).toBe(outcome === 'definitive');
  });

  it('a read-only route is definitive whatever answered (no effect to be unsure about)', () => {
    for (const [, status, text] of TABLE) expect(errorOutcome({ status, text, mutating: false, fromService: true })).toBe('definitive');
  });

  it('the document storage (not the service): a 4xx is definitive, a 5xx unknown', () => {
    const xml = '<?xml version="1.0"?><Error><Code>AccessDenied</Code></Error>';
    expect(errorOutcome({ status: 403, text: xml, mutating: true, fromService: false })).toBe('definitive');
    expect(errorOutcome({ status: 503, text: xml, mutating: true, fromService: false })).toBe('unknown');
  });

  it('describes a body that is not the service error body in a few words', () => {
    expect(describeForeignBody(NGINX_408, 'text/html')).toBe('an HTML page "408 Request Time-out"');
    expect(describeForeignBody('', null)).toBe('an empty body');
    expect(describeForeignBody('{"message":"x"}', 'application/json')).toBe('JSON that is not the service error body');
    expect(describeForeignBody('upstream   timed out', 'text/plain')).toBe('text "upstream timed out"');
  });
});

describe('through the client: initiate', () => {
  let n = 0;
  const client = (response: Response) => {
    const f = scriptedFetch([response]);
    const c = new PayoutClient({
      baseUrl: 'https://gateway.staging.example.test',
      apiKey: `sk_sandbox_definitive_${n++}`,
      requestsPerSecond: 1000,
      fetch: f.fetch,
      sleep: async () => undefined,
      random: () => 0.5,
    });
    return { c, seen: f.seen };
  };

  it('a gateway 408 with an HTML page: unknown, no code taken from it, sent once (the engine settles it)', async () => {
    const { c, seen } = client(new Response(NGINX_408, { status: 408, headers: { 'content-type': 'text/html' } }));
    const e = await failure(c.initiate(INITIATE_BODY, { idempotencyKey: 'k-408' }));
    expect(e).toMatchObject({ kind: 'http', status: 408, code: undefined, outcome: 'unknown', attempts: 1 });
    expect(e.message).toContain('an HTML page "408 Request Time-out"');
    expect(e.message).toMatch(/may or may not have acted/);
    expect(e.message).not.toContain('<html>');
    expect(seen).toHaveLength(1);
  });

  it('a 400 of a proxy in JSON of its own: unknown; the service refusal: definitive with its code', async () => {
    const proxy = await failure(client(json(400, { message: 'Bad Request' })).c.initiate(INITIATE_BODY, { idempotencyKey: 'k-p' }));
    expect(proxy).toMatchObject({ status: 400, outcome: 'unknown', code: undefined });
    const service = await failure(
      client(json(400, { statusCode: 400, message: 'Insufficient funds', error: 'INSUFFICIENT_FUNDS' })).c.initiate(INITIATE_BODY, {
        idempotencyKey: 'k-s',
      }),
    );
    expect(service).toMatchObject({ status: 400, outcome: 'definitive', code: 'INSUFFICIENT_FUNDS' });
  });

  it('a read (get-payout) answered 404 by a proxy stays definitive', async () => {
    const e = await failure(client(new Response('<html>404</html>', { status: 404 })).c.getPayout('abc'));
    expect(e).toMatchObject({ status: 404, outcome: 'definitive' });
  });
});
