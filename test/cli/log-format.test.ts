// The human log line (src/log.ts): what a person at a terminal reads instead of pino's JSON.
import { describe, expect, it } from 'vitest';
import { Writable } from 'node:stream';
import { createLogger, humanLine } from '../../src/log.ts';
import { logRowDone, type RowOutcome } from '../../src/engine/outcome.ts';

describe('human log lines', () => {
  it('gives the level, the message and the plain fields a person needs, first the row, reference, status and request id', () => {
    const line = humanLine(
      JSON.stringify({
        level: 40,
        time: 1,
        command: 'run',
        msg: 'retrying initiate: 429',
        requestId: 'req-1',
        status: 429,
        reference: 'PAY-7',
        row: 3,
        idempotencyKey: 'k',
        currencies: [{ currency: 'USD' }],
        headers: { 'x-api-key': '[redacted]' },
      }),
    );
    expect(line).toBe('warn: retrying initiate: 429 (row=3 reference=PAY-7 status=429 requestId=req-1)\n');
    expect(humanLine('{"level":50,"msg":"account: request failed","err":{"message":"the service could not be reached"}}')).toBe(
      'error: account: request failed (error=the service could not be reached)\n',
    );
  });

  it('shows control and bidi characters of a cell or an answer as escapes, never raw (issue 43, item 16)', () => {
    const line = humanLine(JSON.stringify({ level: 40, msg: 'row refused: \u001b]0;x\u0007', reference: 'INV-\u202e2100', row: 3 }));
    expect(line).toBe('warn: row refused: \\u001B]0;x\\u0007 (row=3 reference=INV-\\u202E2100)\n');
    expect(humanLine('not json \u009b2J\n')).toBe('not json \\u009B2J\n');
  });

  it('is written from the redacted JSON: a key never reaches the line', () => {
    let text = '';
    const out = new Writable({ write: (c: Buffer, _e, done) => ((text += c.toString()), done()) });
    createLogger({ format: 'human', destination: out }).warn({ apiKey: 'sk_live_secret', route: 'wallets' }, 'connected');
    expect(text).toBe('warn: connected (route=wallets apiKey=[redacted])\n');
  });

  it("masks the account numbers a service's refusal quotes in the row's log line, and keeps its amounts", () => {
    let text = '';
    const out = new Writable({ write: (c: Buffer, _e, done) => ((text += c.toString()), done()) });
    const message =
      'initiate (POST /payouts): 400 beneficiary iban GB29 NWBK 6016 1331 9268 19 (or GB29NWBK60161331926819) and accountNumber 0123456789 refused for 12345678.50 [x-request-id r-1]';
    const outcome = { status: 'VALIDATION_ERROR', documents: [], error: { code: 'VALIDATION_ERROR', message } } as unknown as RowOutcome;
    logRowDone(createLogger({ destination: out }), { rowNumber: 4, reference: 'PAY-4', outcome }, {});
    expect(text).not.toMatch(/NWBK|6016|0123456/);
    expect(JSON.parse(text).message).toBe(
      'initiate (POST /payouts): 400 beneficiary iban ********6819 (or ********6819) and accountNumber ******6789 refused for 12345678.50 [x-request-id r-1]',
    );
  });
});
