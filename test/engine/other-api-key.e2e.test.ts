// The spec does not say whether the service keeps an Idempotency-Key per business or per API key
// (§4.2, §5: a business holds several keys, rotated). In the per-key reading (the sandbox's variant)
// a row of unknown outcome resent under ANOTHER API key of the business is a new request: if the
// first one created the payout, the resend creates a second. So a journalled attempt is resent only
// by the API key that sent it; under another the row stays UNKNOWN_OUTCOME, naming that key's
// fingerprint (never the key). The CLI against the sandbox over real HTTP, as a user runs it.
import { afterEach, describe, expect, it } from 'vitest';
import { keyFingerprint } from '../../src/client/api-key.ts';
import { startSandbox, type LocalSandbox } from '../../src/sandbox/start-sandbox.ts';
import { allPayouts, cliIn, KEY, tempDirs, writeBatch } from './helpers.ts';

let sb: LocalSandbox | undefined;
const dirs = tempDirs('pb-other-api-key-');
afterEach(async () => {
  await sb?.close();
  sb = undefined;
  await dirs.remove();
});

const SECONDARY = 'sk_sandbox_acme_secondary';

describe('a row of unknown outcome retried under another API key of the business', () => {
  it('is not resent: one payout, and the command names the fingerprint of the key that sent it', async () => {
    sb = await startSandbox({ shapes: 'variant', rateLimitPerSecond: null });
    const dir = await dirs.make();
    await writeBatch(dir, 'payroll.csv', { rows: 1, currencies: ['GBP'], prefix: 'OAK' });
    const primary = cliIn(dir, sb.url);
    // the service creates the payout; the client only sees a gateway's 408
    sb.setFaults({ gatewayAfterCreate: { probability: 1, status: 408, body: 'html' }, routes: ['initiate'] });
    // (the run that leaves it unknown, and the settling retry below, by main() in this process)
    const run = await primary.inProcess('run', 'payroll.csv', '--yes');
    expect(run.code, run.stdout + run.stderr).toBe(1);
    expect((await primary.results('payroll.results.csv'))[0]!.status).toBe('UNKNOWN_OUTCOME');
    expect(await allPayouts(sb)).toHaveLength(1);

    sb.setFaults({});
    const secondary = cliIn(dir, sb.url, { PAYOUT_API_KEY: SECONDARY });
    const retry = await secondary.cli('retry', 'payroll.results.csv', '--yes');
    expect(await allPayouts(sb)).toHaveLength(1);
    expect(retry.code, retry.stdout + retry.stderr).toBe(1);
    const [row] = await secondary.results('payroll.results.retry-1.csv');
    expect(row!.status).toBe('UNKNOWN_OUTCOME');
    expect(row!.errorCode).toBe('OTHER_API_KEY');
    for (const told of [row!.errorMessage!, retry.stderr]) {
      expect(told).toContain(keyFingerprint(KEY));
      expect(told).not.toContain(SECONDARY);
    }

    // the key that sent it settles it: the same payout, still one
    const again = await primary.inProcess('retry', 'payroll.results.retry-1.csv', '--yes');
    expect(again.code, again.stdout + again.stderr).toBe(0);
    expect(await allPayouts(sb)).toHaveLength(1);
  }, 60_000);
});
