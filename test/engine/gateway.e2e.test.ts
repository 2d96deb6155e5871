// Issue 15, item 4: a gateway in front of the service answers 408 (an nginx HTML page) to an
// initiate the service acted on. That answer is not the service's: the rows are UNKNOWN_OUTCOME,
// not FAILED_TO_SEND, and `retry` settles them by resending the same key and bytes, never under
// a new attempt. Exactly one payout per reference at the sandbox. The CLI against the sandbox over
// real HTTP, as a user runs it; the retry that settles, not about a process, by main() in this process.
import { afterEach, describe, expect, it } from 'vitest';
import { idempotencyKey } from '../../src/engine/identity.ts';
import { startSandbox, type LocalSandbox } from '../../src/sandbox/start-sandbox.ts';
import { TEST_SHAPES } from '../shapes.ts';
import { startFront, refusal, type Front } from './front.ts';
import { allPayouts, cliIn, initiates, parseIdempotencyKey, tempDirs, writeBatch } from './helpers.ts';

let sb: LocalSandbox | undefined;
let front: Front | undefined;
const dirs = tempDirs('pb-gateway-');
afterEach(async () => {
  await front?.close();
  front = undefined;
  await sb?.close();
  sb = undefined;
  await dirs.remove();
});

const ROWS = 4;

describe('a gateway answering 408 after the service created the payout', () => {
  it('leaves the rows UNKNOWN_OUTCOME; retry settles them with the same keys: one payout per reference', async () => {
    sb = await startSandbox({ shapes: TEST_SHAPES, rateLimitPerSecond: null });
    const dir = await dirs.make();
    await writeBatch(dir, 'payroll.csv', { rows: ROWS, currencies: ['GBP'], prefix: 'GW' });
    const { cli, inProcess, results } = cliIn(dir, sb.url);

    // Every success of initiate (new payout or replay) reaches the client as the gateway's 408.
    sb.setFaults({ gatewayAfterCreate: { probability: 1, status: 408, body: 'html' }, routes: ['initiate'] });
    const first = await cli('run', 'payroll.csv', '--yes');
    expect(first.code, first.stdout + first.stderr).toBe(1);
    const afterRun = await results('payroll.results.csv');
    expect(afterRun.map((r) => r.status)).toEqual(Array(ROWS).fill('UNKNOWN_OUTCOME'));
    for (const r of afterRun) {
      expect(r.errorCode).toBe('HTTP_408');
      expect(r.errorMessage).toMatch(/HTML page.*may or may not have acted/);
      expect(r.idempotencyKey).not.toBe('');
    }
    // The service did act: one payout per row already, the 408s notwithstanding; the run's settle
    // passes resent the same keys (replays), which created nothing more.
    expect(await allPayouts(sb)).toHaveLength(ROWS);
    expect(initiates(sb).length).toBeGreaterThan(ROWS);

    sb.setFaults({});
    const retry = await inProcess('retry', 'payroll.results.csv', '--yes');
    expect(retry.code, retry.stdout + retry.stderr).toBe(0);
    const after = await results('payroll.results.retry-1.csv');
    expect(after.map((r) => r.status)).toEqual(Array(ROWS).fill('PENDING'));
    // The same key as the unknown attempt: attempt 1, never a new one.
    expect(after.map((r) => r.idempotencyKey)).toEqual(afterRun.map((r) => r.idempotencyKey));
    for (const r of after) expect(parseIdempotencyKey(r.idempotencyKey!)?.attempt).toBe(1);

    const payouts = await allPayouts(sb);
    expect(payouts).toHaveLength(ROWS);
    expect(new Set(after.map((r) => r.payoutId))).toEqual(new Set(payouts.map((p) => p.id)));
  }, 60_000);
});

describe("a gateway answering in the service's own shape with a code the spec does not have (issue 39)", () => {
  it('400 RESPONSE_BLOCKED after the payout was made is an unknown outcome; retry resends the same key: one payout', async () => {
    sb = await startSandbox({ shapes: TEST_SHAPES, rateLimitPerSecond: null });
    const dir = await dirs.make();
    await writeBatch(dir, 'payroll.csv', { rows: 3, currencies: ['GBP'], prefix: 'RB' });
    // Row 2's initiate goes through to the service (its payout is made), and the gateway answers
    // in its place, while `blocking`: every send of that key, the run's settle passes included.
    let blocking = true;
    const row2 = idempotencyKey('RB-0002', 1);
    front = await startFront(sb.url, async (req, forward) => {
      const answer = await forward();
      const blocked = blocking && req.path.endsWith('/initiate') && req.headers['idempotency-key'] === row2;
      return blocked ? refusal(400, 'Request blocked', 'RESPONSE_BLOCKED') : answer;
    });
    const { cli, inProcess, results } = cliIn(dir, front.url);

    const first = await cli('run', 'payroll.csv', '--yes');
    expect(first.code, first.stdout + first.stderr).toBe(1);
    const afterRun = await results('payroll.results.csv');
    expect(afterRun.map((r) => r.status)).toEqual(['PENDING', 'UNKNOWN_OUTCOME', 'PENDING']);
    expect(afterRun[1]!.errorMessage).toMatch(/may or may not have acted/);
    expect(await allPayouts(sb)).toHaveLength(3);

    blocking = false;
    const retry = await inProcess('retry', 'payroll.results.csv', '--yes');
    expect(retry.code, retry.stdout + retry.stderr).toBe(0);
    const after = await results('payroll.results.retry-1.csv');
    expect(after.map((r) => r.status)).toEqual(['PENDING', 'PENDING', 'PENDING']);
    expect(after[1]!.idempotencyKey).toBe(row2);
    const payouts = await allPayouts(sb);
    expect(payouts).toHaveLength(3);
    expect(new Set(after.map((r) => r.payoutId))).toEqual(new Set(payouts.map((p) => p.id)));
  }, 60_000);
});
