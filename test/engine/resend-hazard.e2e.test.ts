// Issue 25: a resend refused here, before it leaves, must not turn an unknown outcome into a
// refusal. The first attempt of each row reached the service, which created the payout, but the
// answer was lost (a gateway's 408). Its journalled body was written by a version whose request
// schema accepted it; this version's schema refuses it, so the client refuses the resend without
// sending anything. That says nothing about the first attempt: the row must stay UNKNOWN_OUTCOME
// under its journalled key, and `retry` must not send a new attempt under a new key (a second
// payout). The CLI against the sandbox over real HTTP, as a user runs it.
import { readFileSync, writeFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { startSandbox, type LocalSandbox } from '../../src/sandbox/start-sandbox.ts';
import { TEST_SHAPES } from '../shapes.ts';
import { allPayouts, cliIn, ledgerJournals, parseIdempotencyKey, tempDirs, writeBatch } from './helpers.ts';

let sb: LocalSandbox | undefined;
const dirs = tempDirs('pb-resend-hazard-');
afterEach(async () => {
  await sb?.close();
  sb = undefined;
  await dirs.remove();
});

const ROWS = 2;

/** Rewrites each journalled initiate body as an older version might have written it: a lower-case accountCurrency. */
function ageJournalledBodies(journal: string): number {
  let aged = 0;
  const lines = readFileSync(journal, 'utf8')
    .split('\n')
    .map((line) => {
      if (!line.includes('"t":"initiating"')) return line;
      const e = JSON.parse(line) as { body: string };
      const body = JSON.parse(e.body) as { beneficiary: { accountCurrency: string } };
      body.beneficiary.accountCurrency = body.beneficiary.accountCurrency.toLowerCase();
      e.body = JSON.stringify(body);
      aged++;
      return JSON.stringify(e);
    });
  writeFileSync(journal, lines.join('\n'));
  return aged;
}

describe('a resend of an unknown outcome that this version refuses to send', () => {
  it('leaves the row UNKNOWN_OUTCOME under its key and sends no new attempt: one payout per reference', async () => {
    sb = await startSandbox({ shapes: TEST_SHAPES, rateLimitPerSecond: null });
    const dir = await dirs.make();
    await writeBatch(dir, 'payroll.csv', { rows: ROWS, currencies: ['GBP'], prefix: 'RH' });
    const { state, cli, results } = cliIn(dir, sb.url);

    // The service creates each payout; the client only ever sees the gateway's 408.
    sb.setFaults({ gatewayAfterCreate: { probability: 1, status: 408, body: 'html' }, routes: ['initiate'] });
    const first = await cli('run', 'payroll.csv', '--yes');
    expect(first.code, first.stdout + first.stderr).toBe(1);
    const afterRun = await results('payroll.results.csv');
    expect(afterRun.map((r) => r.status)).toEqual(Array(ROWS).fill('UNKNOWN_OUTCOME'));
    expect(await allPayouts(sb)).toHaveLength(ROWS);

    const journals = ledgerJournals(state);
    expect(journals).toHaveLength(1);
    expect(ageJournalledBodies(journals[0]!)).toBe(ROWS);

    sb.setFaults({});
    const retry = await cli('retry', 'payroll.results.csv', '--yes');
    expect(retry.code, retry.stdout + retry.stderr).toBe(1);
    const after = await results('payroll.results.retry-1.csv');
    expect(after.map((r) => r.status)).toEqual(Array(ROWS).fill('UNKNOWN_OUTCOME'));
    // The same key as the unknown attempt, never attempt 2; and the row says why it was not resent.
    expect(after.map((r) => r.idempotencyKey)).toEqual(afterRun.map((r) => r.idempotencyKey));
    for (const r of after) {
      expect(parseIdempotencyKey(r.idempotencyKey!)?.attempt).toBe(1);
      expect(r.errorCode).toBe('NOT_RESENT');
      expect(r.errorMessage).toMatch(/not resent/i);
    }
    // Still one payout per reference: no second payout under a new key.
    expect(await allPayouts(sb)).toHaveLength(ROWS);
  }, 60_000);
});
