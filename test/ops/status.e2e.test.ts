// `status RESULTS` against the sandbox over real HTTP: refreshes the non-final rows, writes
// statusDetail and informationRequests, tells the quota first, and never moves a row back (a refresh
// as users run it, a process; how its text is laid out by main() in this process).
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { applyStatus } from '../../src/follow-up/apply-status.ts';
import { refreshStatus } from '../../src/follow-up/refresh-status.ts';
import { readResults } from '../../src/results/results.ts';
import type { LocalSandbox } from '../../src/sandbox/start-sandbox.ts';
import { cleanEnv, ledgerJournals, connectionTo, paidBatch, runCli, runMain, setStatus, startSb, until } from './helpers.ts';

let sb: LocalSandbox | undefined;
afterEach(async () => {
  await sb?.close();
  sb = undefined;
});

const gets = (s: LocalSandbox) => s.requestLog().filter((r) => r.route === 'getPayout').length;

describe('payout-batch status', () => {
  it('condenses many moved rows (the first 10 and a count) and prints its summary last (issue 43, item 9)', async () => {
    sb = await startSb();
    const { dir, results, ids } = await paidBatch(sb, { rows: 25 });
    for (const id of ids) await setStatus(sb, id, 'PROCESSING');
    const r = await runMain(['status', results, '--base-url', sb.url, '--rate', '100'], { cwd: dir, env: cleanEnv() });
    expect(r.code, r.stderr).toBe(5); // PROCESSING: not final yet
    const lines = r.stdout.trimEnd().split('\n');
    expect(lines.filter((l) => /^ {2}row \d+/.test(l))).toHaveLength(10);
    const more = lines.findIndex((l) => l.includes('… 15 more moved forward'));
    expect(more).toBeGreaterThan(0);
    const summary = lines.findIndex((l) => l.startsWith('Asked about 25 payouts'));
    expect(summary).toBeGreaterThan(more);
    expect(lines.slice(summary).some((l) => /^ {2}row \d+/.test(l))).toBe(false);
  });

  it('refreshes every non-final row from the list, forward, with statusDetail and informationRequests; final rows are not asked again', async () => {
    sb = await startSb();
    const { dir, results, ids } = await paidBatch(sb, { rows: 4 });
    await setStatus(sb, ids[0]!, 'PROCESSING');
    await setStatus(sb, ids[0]!, 'SUCCESSFUL');
    await setStatus(sb, ids[1]!, 'ADDITIONAL_INFO_REQUIRED', {
      informationRequests: [{ title: 'Invoice', type: 'FILE', description: 'the signed invoice' }],
    });
    await setStatus(sb, ids[2]!, 'ADDITIONAL_INFO_REQUIRED');
    const env = cleanEnv(); // the test's state folder: the ledger paidBatch wrote the journal in;
    const before = gets(sb);

    const r = await runCli(['status', results, '--base-url', sb.url, '--rate', '100'], { cwd: dir, env });
    expect(r.code, r.stderr).toBe(1); // rows wait for us (ADDITIONAL_INFO_REQUIRED): not finished, needs someone
    expect(r.stdout).toMatch(/this refresh needs about 1 request; this key has used \d+ of 10,000 this month/);
    expect(r.stdout).toContain('3 moved forward');
    expect(r.stdout).toContain('Used 3 requests (1 payout page, 2 payout status, 0 transaction pages)');
    expect(gets(sb) - before).toBe(2); // the list settles the rest; a GET only for the information requests

    // The service takes the answer of row 4 under review: the list says PENDING, only a GET says under review.
    await setStatus(sb, ids[2]!, 'PENDING');
    // (the second read, by main() in this process: a status read is not about a process)
    const reviewed = await runMain(['status', results, '--base-url', sb.url, '--rate', '100', '--json'], { cwd: dir, env });
    expect(reviewed.code, reviewed.stderr).toBe(1);
    expect(JSON.parse(reviewed.stdout)).toMatchObject({
      asked: 3,
      final: 1,
      requests: { payoutPages: 1, getPayout: 2, transactionPages: 0, total: 3 },
      moved: [{ row: 4, from: 'ADDITIONAL_INFO_REQUIRED', to: 'PENDING', statusDetail: 'ADDITIONAL_INFO_UNDER_REVIEW' }],
    });

    const t = await readResults(results);
    const row = (i: number) => t.rows[i]!.result;
    expect(row(0).status).toBe('SUCCESSFUL');
    expect(row(1).status).toBe('ADDITIONAL_INFO_REQUIRED');
    expect(JSON.parse(row(1).informationRequests!)).toEqual([{ title: 'Invoice', type: 'FILE', description: 'the signed invoice' }]);
    expect(row(2)).toMatchObject({ status: 'PENDING', statusDetail: 'ADDITIONAL_INFO_UNDER_REVIEW' });
    expect(row(2).informationRequests).toBeUndefined();
    expect(row(3).status).toBe('PENDING');
    expect(t.rows.every((x) => x.result.idempotencyKey && x.result.payoutRef)).toBe(true); // the rest of the row is kept

    // The changes are recorded in the batch's journal, where the engine folds them forward only.
    const journal = ledgerJournals()[0]!;
    const lines = (await import('node:fs'))
      .readFileSync(journal, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(
      lines
        .filter((l) => l.t === 'status')
        .map((l) => l.status)
        .sort(),
    ).toEqual(['ADDITIONAL_INFO_REQUIRED', 'ADDITIONAL_INFO_REQUIRED', 'PENDING', 'SUCCESSFUL']);

    // Once more: the SUCCESSFUL row is final and not asked; nothing moved.
    const again = await runMain(['status', results, '--base-url', sb.url, '--rate', '100', '--json'], { cwd: dir, env });
    expect(again.code, again.stderr).toBe(1);
    expect(JSON.parse(again.stdout)).toMatchObject({ asked: 3, final: 1, moved: [] });
  });

  it('a late GET answer (older than what a webhook already applied) never moves the row back', async () => {
    sb = await startSb();
    const { results, ids } = await paidBatch(sb, { rows: 1 });
    // Hold the GET answer until the newer change has been applied to the file.
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    let answered = false;
    const slow: typeof fetch = async (input, init) => {
      const res = await fetch(input, init);
      const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
      if (/\/payouts\/[0-9a-f-]{36}$/.test(url)) {
        const body = await res.text();
        answered = true;
        await held;
        return new Response(body, { status: res.status, headers: res.headers });
      }
      return res;
    };
    await setStatus(sb, ids[0]!, 'ADDITIONAL_INFO_REQUIRED'); // the list cannot answer it: a GET asks
    const refreshing = refreshStatus({ client: connectionTo(sb, slow).client, resultsFile: results });
    await until(() => answered, 5000, 'the GET answer (ADDITIONAL_INFO_REQUIRED)');
    await setStatus(sb, ids[0]!, 'PENDING');
    await setStatus(sb, ids[0]!, 'PROCESSING');
    await applyStatus(
      [{ file: results }],
      [{ payoutId: ids[0]!, status: 'PROCESSING', at: new Date(Date.now() + 1000).toISOString(), source: 'webhook' }],
    );
    release();
    const r = await refreshing;
    expect(r.kind).toBe('not-finished'); // in progress: not finished, poll again
    expect(r.apply.applied).toHaveLength(0);
    expect(r.apply.ignored[0]!.decision.why).toBe('older');
    expect((await readResults(results)).rows[0]!.result.status).toBe('PROCESSING');
  });

  it('a payout unknown to the service is reported with its request id (exit 1)', async () => {
    sb = await startSb();
    const { dir, results } = await paidBatch(sb, { rows: 2 });
    const t = await readResults(results);
    const text = (await import('node:fs'))
      .readFileSync(results, 'utf8')
      .replace(t.rows[1]!.result.payoutId!, '00000000-0000-4000-8000-000000000000');
    (await import('node:fs')).writeFileSync(results, text);
    const env = cleanEnv({ PAYOUT_BATCH_STATE_DIR: join(dir, 'state') });
    const r = await runMain(['status', results, '--base-url', sb.url], { cwd: dir, env });
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/row 3: PAYOUT_NOT_FOUND: .*request id [0-9a-f-]{36}/);
  });

  it('a batch file given instead of a results file is refused (exit 2)', async () => {
    sb = await startSb();
    const { dir, file } = await paidBatch(sb, { rows: 2 });
    const env = cleanEnv({ PAYOUT_BATCH_STATE_DIR: join(dir, 'state') });
    const bad = await runMain(['status', file, '--base-url', sb.url], { cwd: dir, env });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('not a results file');
  });
});
