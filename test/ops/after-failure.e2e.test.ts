// After a failure, a person has what they need (issue 31, item 5): `status` gives the service's
// reason and the currency of the refund; `attach` finds the payout by its payoutRef, or by the
// row's reference with its results file, as those files and commands print them (the first attach a
// process, as a user runs it; the others by main() in this process).
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { LocalSandbox } from '../../src/sandbox/start-sandbox.ts';
import { readResults } from '../../src/results/results.ts';
import { bare } from '../shapes.ts';
import { runMain } from '../engine/helpers.ts';
import { KEY, cleanEnv, paidBatch, runCli, sampleDoc, setStatus, startSb } from './helpers.ts';

let sb: LocalSandbox;
beforeAll(async () => {
  sb = await startSb({ monthlyQuota: null });
});
afterAll(() => sb?.close());

const gets = () => sb.requestLog().filter((r) => r.route === 'getPayout').length;

it("status shows a failed payout's reason and its refund with the currency, and logs only real moves", async () => {
  const { dir, results, ids } = await paidBatch(sb, { rows: 2, currencies: ['GBP'], prefix: 'FAIL' });
  await setStatus(sb, ids[0]!, 'FAILED', { reason: 'beneficiary bank closed the account' });
  const before = gets();
  const r = await runCli(['status', results, '--base-url', sb.url, '--log-level', 'info'], { cwd: dir, env: cleanEnv() });
  expect(r.code, r.stderr).toBe(1);
  expect(r.stdout).toMatch(
    /row 2 \S+ FAILED: refunded GBP [\d,]+\.\d\d — beneficiary bank closed the account; pay it again with: payout-batch retry /,
  );
  // the list shows FAILED without a reason: one get-payout for it, and none for the PENDING row
  expect(gets() - before).toBe(1);
  expect(r.stdout).toContain('1 payout status');
  expect(r.stderr.match(/status moved/g)).toHaveLength(1);
  expect((await readResults(results)).rows[0]!.result.statusReason).toBe('beneficiary bank closed the account');

  // the other payout asks for a text, and gets a document meanwhile: still ADDITIONAL_INFO_REQUIRED,
  // newer details; a refresh of the same status is no move, counted or logged
  await setStatus(sb, ids[1]!, 'ADDITIONAL_INFO_REQUIRED', { informationRequests: [{ title: 'Purpose', type: 'TEXT' }] });
  const status = (run = runCli) => run(['status', results, '--base-url', sb.url, '--log-level', 'info'], { cwd: dir, env: cleanEnv() });
  // (the read before the refresh by main() in this process: the refresh is the process)
  expect((await status(runMain)).stderr).toMatch(/"from":"PENDING","to":"ADDITIONAL_INFO_REQUIRED".*"msg":"status moved"/);
  // (the document attached in this process, the bin's main(): attach as a process is the next case's)
  expect((await runMain(['attach', ids[1]!, sampleDoc(), '--base-url', sb.url], { cwd: dir, env: cleanEnv() })).code).toBe(0);
  const same = await status();
  expect(same.stdout).toContain('0 moved forward');
  expect(same.stderr).not.toContain('status moved');
});

it('attach finds the payout by its payoutRef, and by the reference with the results file; hints work as printed', async () => {
  const { dir, results, ids } = await paidBatch(sb, { rows: 2, currencies: ['GBP'], prefix: 'ATT' });
  for (const id of ids) await setStatus(sb, id, 'ADDITIONAL_INFO_REQUIRED');
  const rows = (await readResults(results)).rows;
  const reference = rows[1]!.cells.reference!;
  const attach = (...args: string[]) => runMain(['attach', ...args, '--base-url', sb.url], { cwd: dir, env: cleanEnv() });

  const byRef = await runCli(['attach', rows[0]!.result.payoutRef!, sampleDoc(), '--base-url', sb.url], { cwd: dir, env: cleanEnv() });
  expect(byRef.code, byRef.stderr).toBe(0);
  expect(byRef.stdout).toContain(`to ${rows[0]!.result.payoutRef} (ADDITIONAL_INFO_REQUIRED); it now has 1 of 5`);

  const byReference = await attach(reference, sampleDoc(), '--results', results);
  expect(byReference.code, byReference.stderr).toBe(0);
  expect(byReference.stdout).toContain(`See the review later with \`payout-batch status ${results}\``);

  const unknown = await attach('NO-SUCH-ROW', sampleDoc(), '--results', results);
  expect(unknown.code).toBe(2);
  expect(unknown.stderr).toContain(`no row of ${results} has NO-SUCH-ROW as its payoutId, payoutRef or reference`);

  for (const id of ids) {
    const p = await fetch(`${sb.url}/v1/payout-api/payouts/${id}`, { headers: { 'x-api-key': KEY } });
    expect(bare<{ supportingDocuments: unknown[] }>(await p.json()).supportingDocuments).toHaveLength(1);
  }
});
