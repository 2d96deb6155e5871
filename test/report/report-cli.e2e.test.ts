// The HTML report from the command line: plan, run and reconcile write it beside their output and
// print its path unless --no-report; `report` makes it from a batch file offline (no key, no
// service) and refuses what it cannot read with one line, exit 2. The browser test
// (browser.e2e.test.ts) checks what the pages show; this one checks who writes them.
import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanEnv, runCli, runMain, tempDirs, writeBatch } from '../engine/helpers.ts';
import { startSandbox, type LocalSandbox } from '../../src/sandbox/start-sandbox.ts';
import { TEST_SHAPES } from '../shapes.ts';

const dirs = tempDirs('pb-report-cli-');
let sb: LocalSandbox;
let work: string;
let env: Record<string, string>;

beforeAll(async () => {
  sb = await startSandbox({ shapes: TEST_SHAPES, rateLimitPerSecond: null });
  work = await dirs.make();
  env = cleanEnv({ PAYOUT_BATCH_STATE_DIR: join(work, 'state') });
});
afterAll(async () => {
  await sb?.close();
  await dirs.remove();
});

const cli = (args: string[]) => runCli(args, { cwd: work, env });
const withService = (args: string[]) => [...args, '--base-url', sb.url, '--rate', '100'];

describe('the report beside each output', () => {
  it('plan, run and reconcile write it and say where; --no-report writes none', async () => {
    const batch = await writeBatch(work, 'payroll.csv', { rows: 3, currencies: ['GBP'] });
    const plan = join(work, 'payroll.plan.json');
    const p = await cli(withService(['plan', batch, '--out', plan]));
    expect(p.code, p.stderr).toBe(0);
    expect(p.stdout).toContain(`Report: ${join(work, 'payroll.plan.html')}`);
    const planPage = await readFile(join(work, 'payroll.plan.html'), 'utf8');
    expect(planPage).toMatch(/<body data-kind="plan">/);
    expect(planPage).toContain('data-field="toSend" data-value="3"');

    const r = await cli(withService(['run', '--plan', plan, '--yes', '--no-report']));
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).not.toContain('Report:');
    const results = join(work, 'payroll.results.csv');
    expect(existsSync(join(work, 'payroll.results.html'))).toBe(false);

    const rec = await cli(withService(['reconcile', results, '--json']));
    expect(rec.code, rec.stderr).toBe(0);
    const json = JSON.parse(rec.stdout) as { report?: string };
    expect(json.report).toBe(join(work, 'payroll.results.reconciliation.html')); // never the run's report
    expect(existsSync(join(work, 'payroll.results.html'))).toBe(false);
    const page = await readFile(json.report!, 'utf8');
    expect(page).toMatch(/<body data-kind="results">/);
    expect(page).toMatch(/<tr data-currency="GBP" data-wallet="[^"]+">.*data-field="ok" class="ok">yes</);

    // `report RESULTS` later reads the tie-out back from the reconciliation file: the same figures
    // (by main() in this process: plan, run and reconcile are the processes)
    const again = await runMain(['report', results, '--out', join(work, 'again.html')], { cwd: work, env });
    expect(again.code, again.stderr).toBe(0);
    const tieOut = (html: string) => /<table data-section="tieout">[\s\S]*?<\/table>/.exec(html)?.[0];
    const againPage = await readFile(join(work, 'again.html'), 'utf8');
    expect(tieOut(againPage)).toBe(tieOut(page));
    // both name the batch in their header, found by its journal in the state folder (issue 43, 15a)
    const { batchId } = JSON.parse(await readFile(plan, 'utf8')) as { batchId: string };
    expect(batchId).toMatch(/^[0-9a-f]{64}$/);
    for (const html of [page, againPage]) expect(html).toContain(`data-field="header-batchId">${batchId}</span>`);
  });

  it('report makes the offline report of a batch file with no key, and refuses a missing file with one line', async () => {
    const batch = await writeBatch(work, 'offline.csv', { rows: 2, currencies: ['EUR'] });
    const noKey = { ...env, PAYOUT_API_KEY: '' };
    const r = await runCli(['report', batch], { cwd: work, env: noKey });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(join(work, 'offline.plan.html'));
    expect(await readFile(join(work, 'offline.plan.html'), 'utf8')).toMatch(/<body data-kind="plan" data-offline="true">/);

    const missing = await runCli(['report', 'nowhere.csv'], { cwd: work, env: noKey });
    expect(missing.code).toBe(2);
    expect(missing.stderr.trim().split('\n')).toEqual(['payout-batch: nowhere.csv: no such file.']);

    await writeFile(join(work, 'broken.plan.json'), '{"kind":"payout-batch-plan","v":1}');
    // (by main() in this process: the one line of a refusal is the missing file's above)
    const broken = await runMain(['report', 'broken.plan.json'], { cwd: work, env: noKey });
    expect(broken.code).toBe(2);
    expect(broken.stderr).toMatch(/^payout-batch: broken\.plan\.json is not a plan file of payout-batch: /);
  });
});
