// After `status` (or `listen`) moved rows forward, running the same batch again — a resume, or
// cron retrying the command — must write the latest status known, never the one seen at creation.
import { afterEach, describe, expect, it } from 'vitest';
import { readResults } from '../../src/results/results.ts';
import type { LocalSandbox } from '../../src/sandbox/start-sandbox.ts';
import { cleanEnv, paidBatch, runCli, runMain, setStatus, startSb } from './helpers.ts';

let sb: LocalSandbox | undefined;
afterEach(async () => {
  await sb?.close();
  sb = undefined;
});

describe('run again after status refreshed the results', () => {
  it('keeps SUCCESSFUL and ADDITIONAL_INFO_REQUIRED with its requests, and sends nothing', async () => {
    sb = await startSb();
    const { dir, file, results, ids } = await paidBatch(sb, { rows: 2 });
    await setStatus(sb, ids[0]!, 'PROCESSING');
    await setStatus(sb, ids[0]!, 'SUCCESSFUL');
    await setStatus(sb, ids[1]!, 'ADDITIONAL_INFO_REQUIRED', { informationRequests: [{ title: 'Invoice', type: 'FILE' }] });
    const env = cleanEnv(); // the test's state folder, whose ledger holds the batch paidBatch ran
    // (the status that moves them sets the scene: by main() in this process)
    const refreshed = await runMain(['status', results, '--base-url', sb.url, '--rate', '100'], { cwd: dir, env });
    expect(refreshed.code, refreshed.stderr).toBe(1); // a row waits for us

    const initiatesBefore = sb.requestLog().filter((r) => r.route === 'initiate').length;
    const again = await runCli(['run', file, '--yes', '--base-url', sb.url, '--rate', '100'], { cwd: dir, env });
    expect(again.code, again.stderr).toBe(1); // nothing sent; the waiting row needs someone (attach)
    expect(sb.requestLog().filter((r) => r.route === 'initiate').length).toBe(initiatesBefore);

    const rows = (await readResults(results)).rows.map((r) => r.result);
    expect(rows[0]!.status).toBe('SUCCESSFUL');
    expect(rows[1]!.status).toBe('ADDITIONAL_INFO_REQUIRED');
    expect(JSON.parse(rows[1]!.informationRequests!)).toEqual([{ title: 'Invoice', type: 'FILE' }]);
  });
});
