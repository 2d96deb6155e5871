// `watch DIR --once` left alone with a bad file (issue 31, item 3), spawned as cron would against
// one sandbox over real HTTP: a file with an invalid row or a risky warning is refused whole,
// every problem listed; "allowPartial" pays the valid rows, and the retry command the refusal
// prints finds the documents in failed/<claim>/; refusals name where a claim is now; a plan made
// with --base-url is accepted by a watch of the same account.
import { mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addApproval, approvalsPathFor, newKeyPair } from '../../src/approvals/approvals-file.ts';
import { loadPlan, planPayload } from '../../src/approvals/payload.ts';
import { signPlan } from '../../src/approvals/sign.ts';
import type { LocalSandbox } from '../../src/sandbox/start-sandbox.ts';
import { generateCsv } from '../engine/helpers.ts';
import { cleanEnv, ROOT, runCli, runMain, startSb, workDir } from './helpers.ts';

let sb: LocalSandbox;
beforeAll(async () => {
  sb = await startSb({ monthlyQuota: null });
});
afterAll(() => sb.close());

const BROKEN = readFileSync(join(ROOT, 'samples/payroll-broken.csv'), 'utf8');
/** The broken sample with its two document cells that name no file in documents/ emptied (the finding). */
const BROKEN_EMPTIED = BROKEN.replace('documents/missing-invoice.pdf;documents/not-a-pdf.pdf', '').replace(
  'a.pdf;b.pdf;c.pdf;d.pdf;e.pdf;f.pdf',
  '',
);

/** A watch folder on the sandbox, its documents the samples' (DIR/documents may be a link the operator made). */
async function folder(extra: Record<string, unknown> = {}): Promise<string> {
  const dir = await workDir('pb-watch-safety-');
  mkdirSync(join(dir, 'inbox'));
  symlinkSync(join(ROOT, 'samples/documents'), join(dir, 'documents'), 'dir');
  writeFileSync(
    join(dir, 'payout-batch.json'),
    JSON.stringify({ environment: 'sandbox', baseUrl: sb.url, settleSeconds: 0, rate: 200, ...extra }),
  );
  return dir;
}
const env = (dir: string) => cleanEnv({ PAYOUT_BATCH_STATE_DIR: join(dir, 'usage') });
const watch = (dir: string) => runCli(['watch', dir, '--once'], { cwd: dir, env: env(dir), timeoutMs: 60_000 });
const drop = (dir: string, name: string, text: string) => writeFileSync(join(dir, 'inbox', name), text);
const routes = (route: string) => sb.requestLog().filter((r) => r.route === route).length;
const lineOf = (stdout: string, name: string) => stdout.split('\n').find((l) => l.startsWith(`${name}: `)) ?? '';
const summaryOf = (dir: string, sub: string, name: string) => {
  const claim = readdirSync(join(dir, sub)).find((c) => c.endsWith(`-${name}`))!;
  const stem = name.replace(/\.csv$/, '');
  return { claim, summary: JSON.parse(readFileSync(join(dir, sub, claim, `${stem}.summary.json`), 'utf8')) };
};
const rowsOf = (
  problems: { row: number; severity: string; risky?: boolean }[],
  which: (p: { severity: string; risky?: boolean }) => boolean,
) => [...new Set(problems.filter(which).map((p) => p.row))].sort((a, b) => a - b);

describe('watch: all or nothing by default', () => {
  it('refuses the broken sample whole, with its documents cells emptied or not: nothing sent, every problem in summary.json and the log', async () => {
    const dir = await folder();
    drop(dir, 'emptied.csv', BROKEN_EMPTIED);
    drop(dir, 'broken.csv', BROKEN);
    const before = { initiates: routes('initiate'), uploads: routes('uploadUrl') };
    const r = await watch(dir);
    expect(r.code, r.stderr.slice(-2000)).toBe(3);
    expect({ initiates: routes('initiate'), uploads: routes('uploadUrl') }).toEqual(before);
    expect(readdirSync(join(dir, 'failed'))).toHaveLength(2);

    // (a) Today 4 were created; now 14 invalid rows (the preflight's METHOD_NOT_AVAILABLE of row 16
    // among them) and the two rows warned risky, the NGN 650,000 one whose NUBAN may be mistyped.
    const a = summaryOf(dir, 'failed', 'emptied.csv');
    expect(a.summary).toMatchObject({ outcome: 'failed', kind: 'refused' });
    expect(rowsOf(a.summary.problems, (p) => p.severity === 'error')).toEqual([3, 4, 5, 6, 7, 8, 9, 10, 13, 14, 16, 17, 18, 20]);
    expect(rowsOf(a.summary.problems, (p) => !!p.risky)).toEqual([15, 19]);
    expect(a.summary.problems).toContainEqual({
      severity: 'warning',
      code: 'NUBAN_CHECK_DIGIT',
      file: 'emptied.csv',
      row: 19,
      column: 'accountNumber',
      value: '******6789',
      message: expect.stringContaining('may be mistyped'),
      expected: 'the 10-digit NUBAN of an account at that bank',
      risky: true,
    });
    expect(a.summary.problems).toContainEqual(expect.objectContaining({ row: 16, code: 'METHOD_NOT_AVAILABLE', severity: 'error' }));
    const summaryPath = join(dir, 'failed', a.claim, 'emptied.summary.json');
    expect(lineOf(r.stdout, 'emptied.csv')).toBe(
      'emptied.csv: failed: refused: 14 invalid rows (rows 3, 4, 5, 6, 7, 8, 9, 10, 13, 14, 16, 17, 18, 20) and 2 rows with a ' +
        'warning that may pay the wrong person (rows 15, 19): a watch pays a file whole or not at all. Every problem (row, column, ' +
        `what would be valid) is in ${summaryPath} and the log: fix the rows, then drop the file again. Nothing was sent.`,
    );
    const logged = r.stderr
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l))
      .filter((l) => l.file === 'emptied.csv' && l.row !== undefined);
    expect(logged).toHaveLength(a.summary.problems.length);
    expect(logged).toContainEqual(
      expect.objectContaining({ row: 5, column: 'sortCode', code: 'INVALID_SORT_CODE', expected: expect.any(String) }),
    );

    // (b) Today refused only with "set allowDocumentsOutside" x5: now its rows first, the documents
    // last, and no safety setting to loosen.
    const b = summaryOf(dir, 'failed', 'broken.csv');
    expect(b.summary).toMatchObject({ outcome: 'failed', kind: 'refused' });
    expect(rowsOf(b.summary.problems, (p) => p.severity === 'error')).toEqual([3, 4, 5, 6, 7, 8, 9, 10, 13, 14, 15, 17, 18, 20]);
    const line = lineOf(r.stdout, 'broken.csv');
    expect(line).toMatch(
      /^broken\.csv: failed: refused: 14 invalid rows \(rows 3, .*\) and 1 row with a warning that may pay the wrong person \(row 19\)/,
    );
    expect(line.indexOf('fix the rows')).toBeLessThan(line.indexOf('Documents may only come from'));
    expect(line).toMatch(
      /"a\.pdf" is outside .*; and 1 more\. Copy each into .*documents and name it documents\/NAME in the file\. Nothing was sent\.$/,
    );
    expect(line).not.toContain('allowDocumentsOutside');
  });
});

describe('watch: "allowPartial": true, then recovery as printed', () => {
  it('pays the valid rows; the printed retry of failed/<claim>/X.results.csv finds the documents there; refusals name where claims are now', async () => {
    const dir = await folder({ allowPartial: true });
    drop(dir, 'emptied.csv', BROKEN_EMPTIED);
    const before = routes('initiate');
    const r = await watch(dir);
    expect(r.code, r.stderr.slice(-2000)).toBe(1);
    expect(routes('initiate') - before).toBe(4);
    const { claim, summary } = summaryOf(dir, 'failed', 'emptied.csv');
    expect(summary.summary).toMatchObject({ created: 4, byStatus: { INVALID: 14 } });
    const results = join(dir, 'failed', claim, 'emptied.results.csv');
    const command = /`(payout-batch retry [^`]+)`/.exec(lineOf(r.stdout, 'emptied.csv'))?.[1];
    expect(command).toBe(`payout-batch retry ${results} --state-dir ${join(dir, '.state')} --env sandbox --base-url ${sb.url}`);

    // BRK-004 fixed (sort code and account number as in its IBAN), then the command as printed.
    const text = readFileSync(results, 'utf8');
    const fixed = text.replace(/^(BRK-004,.*),3192681,(.*),60161,/m, '$1,31926819,$2,601613,');
    expect(fixed).not.toBe(text);
    writeFileSync(results, fixed);
    const uploads = routes('uploadUrl');
    const retry = await runCli([...command!.split(' ').slice(1), '--yes', '--rate', '200', '--no-report'], {
      cwd: dir,
      env: env(dir),
      timeoutMs: 60_000,
    });
    expect(retry.code, retry.stderr.slice(-2000)).toBe(1); // the rows not edited are still invalid
    const out = readdirSync(join(dir, 'failed', claim)).find((n) => /\.retry-1\.csv$/.test(n))!;
    const rows = parse<Record<string, string>>(readFileSync(join(dir, 'failed', claim, out), 'utf8'), { columns: true, bom: true });
    const row = (ref: string) => rows.find((x) => x.reference === ref)!;
    expect(row('BRK-004')).toMatchObject({ status: 'PENDING', errorCode: '' });
    expect(routes('uploadUrl')).toBeGreaterThan(uploads);
    // Not edited: its verdict is the original file's (found beside it), not DOCUMENT_NOT_FOUND.
    expect(row('BRK-011')).toMatchObject({ status: 'INVALID', errorCode: 'PROBABLE_DUPLICATE' });
    expect(rows.filter((x) => x.errorCode === 'DOCUMENT_NOT_FOUND')).toEqual([]);

    // The same content again, and a row of it in a new file: both refused, naming failed/<claim>/.
    drop(dir, 'again.csv', BROKEN_EMPTIED);
    drop(dir, 'one.csv', BROKEN_EMPTIED.split('\n').slice(0, 2).join('\n') + '\n');
    const refused = await watch(dir);
    expect(refused.code, refused.stderr.slice(-2000)).toBe(3);
    const again = lineOf(refused.stdout, 'again.csv');
    expect(again).toContain(`already processed: the same content as emptied.csv (in ${join(dir, 'failed', claim)})`);
    expect(again).toContain(`\`payout-batch retry ${results} --state-dir`);
    const one = lineOf(refused.stdout, 'one.csv');
    expect(one).toMatch(/1 reference of this file \(BRK-\d+\) was already sent by another batch, /);
    expect(one).toContain(`already sent by another batch, ${join(dir, 'failed', claim, 'emptied.csv')}`);
    for (const l of [again, one]) {
      expect(l).not.toContain('/processing/');
      expect(l).not.toContain('--batch-id');
    }
  });
});

describe('watch: four eyes across labels', () => {
  it('a plan made with --base-url ("custom") runs in a watch of the same account ("sandbox")', async () => {
    const dir = await folder({ requireApprovals: 1, approvers: 'approvers.json' });
    const alice = newKeyPair();
    writeFileSync(join(dir, 'approvers.json'), JSON.stringify([{ name: 'Alice', publicKey: alice.publicKey }]));
    const staging = join(dir, 'staging');
    mkdirSync(staging);
    writeFileSync(join(staging, 'payroll.csv'), generateCsv({ rows: 2, currencies: ['GBP'], prefix: 'LBL' }));
    const plan = join(staging, 'payroll.plan.json');
    // (the plan by main() in this process: the watch is the process)
    const made = await runMain(
      ['plan', 'payroll.csv', '--out', plan, '--base-url', sb.url, '--prepared-by', 'Dan', '--no-quote', '--no-report', '--rate', '200'],
      {
        cwd: staging,
        env: env(dir),
      },
    );
    expect(made.code, made.stderr.slice(-1500)).toBe(0);
    expect(loadPlan(plan).plan.env).toBe('custom');
    await addApproval(approvalsPathFor(plan), signPlan(planPayload(loadPlan(plan)), 'Alice', alice.privatePem, 'alice.pem'));
    for (const n of ['payroll.plan.json', 'payroll.plan.json.approvals.json', 'payroll.csv'])
      writeFileSync(join(dir, 'inbox', n), readFileSync(join(staging, n)));
    const before = routes('initiate');
    const r = await watch(dir);
    expect(r.code, r.stdout + r.stderr.slice(-1500)).toBe(0);
    expect(r.stdout).toBe('payroll.csv: done\n');
    expect(routes('initiate') - before).toBe(2);
    expect(summaryOf(dir, 'done', 'payroll.csv').summary).toMatchObject({ environment: 'sandbox', approvedBy: ['Alice'] });
  });
});
