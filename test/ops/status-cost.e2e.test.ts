// What a status poll and a reconcile cost (issue 27), counted at the sandbox over real HTTP: a
// 250-payout batch is read from the payout list (spec §4.4, 100 a page), not one GET per payout;
// a GET only for a payout waiting for us or one the pages did not show; refunds from the
// transactions listing, not one look per failed payout. Also: a service that ignores `page` does
// not make the listing loop.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reconcile } from '../../src/follow-up/reconciliation.ts';
import { refreshStatus } from '../../src/follow-up/refresh-status.ts';
import { readResults } from '../../src/results/results.ts';
import type { LocalSandbox } from '../../src/sandbox/start-sandbox.ts';
import { cleanEnv, connectionTo, paidBatch, runCli, runMain, setStatus, startSb } from './helpers.ts';

const ROWS = 250;
const WAITING = [10, 120, 240];
const FAILED = [0, 1, 2, 3, 4];

let sb: LocalSandbox;
let batch: Awaited<ReturnType<typeof paidBatch>>;
let env: Record<string, string>;

beforeAll(async () => {
  sb = await startSb();
  batch = await paidBatch(sb, { rows: ROWS });
  // the ledger paidBatch wrote the journal in, for every CLI of this file
  env = cleanEnv({ PAYOUT_BATCH_STATE_DIR: process.env.PAYOUT_BATCH_STATE_DIR! });
  for (const i of WAITING)
    await setStatus(sb, batch.ids[i]!, 'ADDITIONAL_INFO_REQUIRED', { informationRequests: [{ title: 'Invoice', type: 'FILE' }] });
}, 180_000);
afterAll(async () => sb?.close());

/** Requests per route from here on. */
function counter() {
  const from = sb.requestLog().length;
  const n = (route: string) =>
    sb
      .requestLog()
      .slice(from)
      .filter((r) => r.route === route).length;
  return { lists: () => n('listPayouts'), gets: () => n('getPayout'), transactions: () => n('transactions') };
}

const cli = (...args: string[]) =>
  runCli([...args, batch.results, '--base-url', sb.url, '--rate', '100', '--json'], { cwd: batch.dir, env });
/** The same by main() in this process: what a status read costs is counted at the sandbox, not in a process. */
const inProcess = (...args: string[]) =>
  runMain([...args, batch.results, '--base-url', sb.url, '--rate', '100', '--json'], { cwd: batch.dir, env });

/** A fetch that rewrites the payout list's answers (or its URL) on their way to the client. */
function listRewriting(o: { hide?: string; ignorePage?: boolean }): typeof fetch {
  // (ignorePage: the transactions route too)
  return async (input, init) => {
    const url = new URL(typeof input === 'string' ? input : input instanceof URL ? input.href : input.url);
    if (o.ignorePage && /\/transactions$/.test(url.pathname)) url.searchParams.delete('page');
    if (!/\/payouts$/.test(url.pathname)) return fetch(url, init);
    if (o.ignorePage) url.searchParams.delete('page');
    const res = await fetch(url, init);
    const body = (await res.json()) as { data: { id: string }[] };
    body.data = body.data.filter((p) => p.id !== o.hide);
    return new Response(JSON.stringify(body), { status: res.status, headers: res.headers });
  };
}

describe('status and reconcile of 250 payouts read pages, not payouts', () => {
  it('a status poll makes at most 3 list requests plus one GET per payout waiting for us', async () => {
    const n = counter();
    const r = await inProcess('status');
    expect(r.code, r.stderr).toBe(1); // rows wait for us
    const j = JSON.parse(r.stdout);
    expect(j.outcomes).toEqual({ paid: 0, inProgress: ROWS - WAITING.length, waiting: WAITING.length, failed: 0, notCreated: 0 });
    expect(j.waiting.map((w: { payoutId: string }) => w.payoutId).sort()).toEqual(WAITING.map((i) => batch.ids[i]).sort());
    expect(n.lists()).toBeLessThanOrEqual(3);
    expect(n.gets()).toBe(WAITING.length);
    expect(n.transactions()).toBe(0);
    expect(j.requests).toEqual({
      payoutPages: n.lists(),
      getPayout: WAITING.length,
      transactionPages: 0,
      total: n.lists() + WAITING.length,
    });
  });

  it('failed payouts are settled, their reasons read once each, and their refunds found in the transactions listing', async () => {
    for (const i of FAILED) await setStatus(sb, batch.ids[i]!, 'FAILED', { reason: 'bank closed the account' });
    const n = counter();
    const r = await inProcess('status');
    expect(r.code, r.stderr).toBe(1);
    const j = JSON.parse(r.stdout);
    expect(j.outcomes).toMatchObject({ failed: FAILED.length, waiting: WAITING.length });
    expect(j.failed).toHaveLength(FAILED.length);
    for (const f of j.failed)
      expect(f).toMatchObject({ refunded: expect.stringMatching(/^\d+\.\d{2}$/), reason: 'bank closed the account' });
    expect(n.lists()).toBeLessThanOrEqual(3);
    // the list gives no reason: one get-payout per payout newly failed, none per refund
    expect(n.gets()).toBe(WAITING.length + FAILED.length);
    expect(n.transactions()).toBe(1); // the refunds are the newest movements: one page finds all five
  });

  it('a reconcile makes a few list requests, no GET per payout, and ties out', async () => {
    const n = counter();
    const r = await cli('reconcile');
    expect(r.code, r.stderr + r.stdout).toBe(0);
    const j = JSON.parse(r.stdout);
    expect(j.counts).toMatchObject({ rows: ROWS, created: ROWS, tiedOut: ROWS });
    expect(n.gets()).toBe(0);
    expect(n.lists()).toBeLessThanOrEqual(3);
    expect(n.transactions()).toBeLessThanOrEqual(3); // 250 debits and 5 refunds, 100 a page
    expect(j.requests.total).toBe(n.lists() + n.transactions());
  });

  it('a payout the pages do not show is still settled, by one GET', async () => {
    const hidden = batch.ids[100]!;
    await setStatus(sb, hidden, 'PROCESSING');
    await setStatus(sb, hidden, 'SUCCESSFUL');
    const n = counter();
    const r = await refreshStatus({ client: connectionTo(sb, listRewriting({ hide: hidden })).client, resultsFile: batch.results });
    expect(r.requests).toMatchObject({ payoutPages: 3, getPayout: WAITING.length + 1 });
    expect(n.gets()).toBe(WAITING.length + 1);
    const row = (await readResults(batch.results)).rows.find((x) => x.result.payoutId === hidden)!;
    expect(row.result.status).toBe('SUCCESSFUL');
  });

  it('a service that ignores page does not loop: the listing stops at the repeated page and the rest are asked one by one', async () => {
    const late = batch.ids[200]!; // created late, so on the first (newest) page
    const early = batch.ids[50]!; // on the last page, which a service ignoring page never shows
    for (const id of [late, early]) {
      await setStatus(sb, id, 'PROCESSING');
      await setStatus(sb, id, 'SUCCESSFUL');
    }
    const asked = (await readResults(batch.results)).rows.filter((x) => !['SUCCESSFUL', 'FAILED'].includes(x.result.status!)).length;
    const n = counter();
    const r = await refreshStatus({ client: connectionTo(sb, listRewriting({ ignorePage: true })).client, resultsFile: batch.results });
    expect(r.kind).toBe('rows-failed');
    expect(n.lists()).toBe(2); // page 1, and page "2" answered as page 1 again
    expect(r.asked).toBe(asked);
    // the first page settled 100 payouts; every other one was asked by itself, the waiting ones too
    expect(n.gets()).toBe(asked - 100 + WAITING.filter((i) => i >= ROWS - 100).length);
    const rows = (await readResults(batch.results)).rows;
    for (const id of [late, early]) expect(rows.find((x) => x.result.payoutId === id)!.result.status).toBe('SUCCESSFUL');
  });

  it('a transactions listing cut short by a service that ignores page writes no statement and is not called tied out', async () => {
    const statement = join(batch.dir, 'cut.camt053.xml');
    const client = connectionTo(sb, listRewriting({ ignorePage: true })).client;
    const r = await reconcile({ client, resultsFile: batch.results, statement });
    expect(r.listing.ended).toBe('repeated page');
    expect(r.statement).toBeUndefined();
    expect(existsSync(statement)).toBe(false);
    expect(r.kind).not.toBe('ok');
    expect(r.report!.problems.join('\n')).toMatch(/same page twice.*no statement was written/);
  });
});
