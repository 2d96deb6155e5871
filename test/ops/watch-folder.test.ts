// The folder mechanics of `watch`, without the service: configuration, which inbox files count,
// completeness, and the lock's stale recovery.
import { mkdirSync, mkdtempSync, readFileSync, utimesSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir, hostname } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { acquireLock, LockBusy } from '../../src/files/lock.ts';
import { writeOwner } from '../files/owner.ts';
import type { RunResult } from '../../src/engine/pipeline.ts';
import { companionsOf, completeIn, inboxCandidates } from '../../src/watch/inbox.ts';
import { readWatchConfig, WatchConfigError } from '../../src/watch/config.ts';
import { refusalText, wholeFileProblems } from '../../src/watch/checks.ts';
import { judgeRun, otherAccount, worstKind } from '../../src/watch/watcher.ts';

const tmp = () => mkdtempSync(join(tmpdir(), 'pb-watch-unit-'));

describe('watch configuration', () => {
  it('is validated with zod, with defaults, and names the field that is wrong', () => {
    const d = tmp();
    writeFileSync(join(d, 'payout-batch.json'), JSON.stringify({ environment: 'sandbox', maxTotals: ['USD:1000.00'] }));
    expect(readWatchConfig(d)).toMatchObject({
      environment: 'sandbox',
      settleSeconds: 5,
      requireReady: false,
      maxTotals: ['USD:1000.00'],
    });
    writeFileSync(join(d, 'payout-batch.json'), JSON.stringify({ environment: 'sandbox', expectTotals: ['12 dollars'] }));
    expect(() => readWatchConfig(d)).toThrow(/expectTotals\.0: CUR:AMOUNT/);
    writeFileSync(join(d, 'payout-batch.json'), JSON.stringify({ environment: 'sandbox', maxRequests: 1200 }));
    expect(readWatchConfig(d)).toMatchObject({ maxRequests: 1200 });
    writeFileSync(join(d, 'payout-batch.json'), JSON.stringify({ environment: 'sandbox', maxRequests: 12.5 }));
    expect(() => readWatchConfig(d)).toThrow(/maxRequests/);
    // another host would take a live claim over: its heartbeat is at most once a second
    writeFileSync(join(d, 'payout-batch.json'), JSON.stringify({ environment: 'sandbox', claimStaleSeconds: 1 }));
    expect(() => readWatchConfig(d)).toThrow(/claimStaleSeconds: at least 10 \(seconds\)/);
    writeFileSync(join(d, 'payout-batch.json'), JSON.stringify({ settleSeconds: 2 }));
    expect(() => readWatchConfig(d)).toThrow(/environment/);
    writeFileSync(join(d, 'payout-batch.json'), JSON.stringify({ environment: 'sandbox', apiKey: 'sk_x' }));
    expect(() => readWatchConfig(d)).toThrow(WatchConfigError);
    expect(() => readWatchConfig(tmp())).toThrow(/cannot read the configuration/);
  });

  it('names a team ledger by a postgres:// URL, never with its password (PGPASSWORD or ~/.pgpass give it)', () => {
    const d = tmp();
    const ledger = (url: string) => writeFileSync(join(d, 'payout-batch.json'), JSON.stringify({ environment: 'sandbox', ledger: url }));
    ledger('postgres://payout@db.example.com:5433/payouts');
    expect(readWatchConfig(d).ledger).toBe('postgres://payout@db.example.com:5433/payouts');
    for (const secret of ['postgres://payout:s3cret-pw@db/payouts', 'postgresql://db/payouts?user=payout&password=s3cret-pw']) {
      ledger(secret);
      expect(() => readWatchConfig(d)).toThrow(/ledger: no password in the configuration/);
      expect(() => readWatchConfig(d)).not.toThrow(/s3cret-pw/);
    }
    ledger('mysql://db/payouts');
    expect(() => readWatchConfig(d)).toThrow(/ledger: a postgres:\/\/ URL/);
  });
});

describe('inbox files', () => {
  it("ignores dotfiles, temporary files, Excel's owner files (a workbook open in Excel) and markers", () => {
    const d = tmp();
    for (const n of ['a.csv', '.hidden.csv', '.b.csv.1234.tmp', 'c.csv.tmp', 'a.csv.ready', 'd.xlsx', '~$d.xlsx', 'e.csv.part'])
      writeFileSync(join(d, n), 'x');
    expect(inboxCandidates(d)).toEqual(['a.csv', 'd.xlsx']);
  });

  it('a file is complete with a .ready marker at once, or when unchanged for settleSeconds', () => {
    const d = tmp();
    writeFileSync(join(d, 'a.csv'), 'reference\n');
    const now = Date.now();
    expect(completeIn(d, 'a.csv', { settleMs: 5000, requireReady: false, now })).toBeGreaterThan(4000);
    expect(completeIn(d, 'a.csv', { settleMs: 5000, requireReady: false, now: now + 6000 })).toBe(0);
    expect(completeIn(d, 'a.csv', { settleMs: 5000, requireReady: true, now: now + 6000 })).toBe(-1);
    writeFileSync(join(d, 'a.csv.ready'), '');
    expect(completeIn(d, 'a.csv', { settleMs: 5000, requireReady: true, now })).toBe(0);
    // a marker copied in after the file with its old times kept (Explorer, cp -p) still marks it
    utimesSync(join(d, 'a.csv.ready'), new Date(0), new Date(0));
    expect(completeIn(d, 'a.csv', { settleMs: 5000, requireReady: true, now })).toBe(0);
  });

  it('orders the kinds of runs by what needs attention most', () => {
    expect(worstKind(['ok', 'rows-failed', 'ok'])).toBe('rows-failed');
    expect(worstKind(['rows-failed', 'refused', 'unusable'])).toBe('refused');
    expect(worstKind(['refused', 'halted'])).toBe('halted');
    expect(worstKind([])).toBe('ok');
  });
});

describe('where a run file goes', () => {
  const run = (r: Partial<RunResult>) =>
    ({ kind: 'ok', resultsPath: '/w/processing/c/pay.results.csv', summary: { created: 2, byStatus: { PENDING: 2 } }, ...r }) as RunResult;
  const at = (r: Partial<RunResult>, o: { changedAtPlan?: string; changedInRun?: string } = {}) =>
    judgeRun(run(r), { name: 'pay.csv', resumed: false, ...o });

  it('done, failed with the reason, or left in processing/ to resume, by what the engine says', () => {
    expect(at({})).toEqual({ resumed: false, outcome: 'done', kind: 'ok' });
    expect(at({ kind: 'rows-failed', summary: { created: 1, byStatus: { PENDING: 1, UNKNOWN_OUTCOME: 1 } } as never })).toMatchObject({
      outcome: 'failed',
      kind: 'rows-failed',
      reason: expect.stringMatching(/^1 created, 1 UNKNOWN_OUTCOME: see pay\.results\.csv; .*settled with their original key by retry\)$/),
    });
    expect(at({ kind: 'refused', refused: ['--max-total GBP:5'] })).toMatchObject({
      outcome: 'failed',
      kind: 'refused',
      reason: 'refused by the guards: --max-total GBP:5',
    });
    expect(at({ kind: 'halted', halted: 'unreachable' })).toMatchObject({ outcome: 'processing', kind: 'halted' });
    // a payout answered with another amount: never resumed on the next tick, where the next row would go the same way
    expect(at({ kind: 'halted', halted: 'row 2 (P-2): payout p1 of sourceAmount 3300', answerNotAsSent: true })).toMatchObject({
      outcome: 'failed',
      kind: 'halted',
      reason: expect.stringContaining('row 2 (P-2): payout p1 of sourceAmount 3300'),
    });
    expect(at({ kind: 'rows-failed', stopped: true })).toMatchObject({ outcome: 'processing', kind: 'ok' });
  });

  it('a file changed after its claim: refused before sending, or failed once rows were under way', () => {
    expect(at({ kind: 'halted' }, { changedAtPlan: 'its size went from 1 to 2 bytes' })).toMatchObject({
      outcome: 'failed',
      kind: 'refused',
      reason: expect.stringContaining('changed after it was claimed (its size went from 1 to 2 bytes). Nothing was sent.'),
    });
    expect(at({}, { changedInRun: 'it was modified' })).toMatchObject({
      outcome: 'failed',
      kind: 'rows-failed',
      reason: expect.stringContaining('anything written after was NOT processed'),
    });
  });
});

describe('lock files', () => {
  it('one holder at a time; the record names pid, host and start time', async () => {
    const d = tmp();
    const p = join(d, '.watch.lock');
    const a = await acquireLock(p);
    expect(JSON.parse(readFileSync(p, 'utf8'))).toMatchObject({ pid: process.pid, host: hostname() });
    await expect(acquireLock(p)).rejects.toBeInstanceOf(LockBusy);
    a.release();
    expect(existsSync(p)).toBe(false);
    (await acquireLock(p)).release();
  });

  it('a lock whose pid is dead is recovered; one older than the bound too; a live one is not', async () => {
    const d = tmp();
    const p = join(d, 'x.lock');
    writeOwner(p, { pid: 2 ** 22 + 12345, host: hostname(), startedAt: new Date().toISOString() });
    const a = await acquireLock(p, { staleMs: 60_000 });
    expect(a.owner.pid).toBe(process.pid);
    a.release();
    writeOwner(p, { pid: process.ppid, host: 'another-host', startedAt: new Date(0).toISOString() });
    await expect(acquireLock(p, { staleMs: 60_000 })).rejects.toBeInstanceOf(LockBusy);
    const old = new Date(Date.now() - 120_000);
    utimesSync(p, old, old);
    (await acquireLock(p, { staleMs: 60_000 })).release();
  });

  it('many concurrent takers of a stale lock: exactly one wins', async () => {
    const d = tmp();
    mkdirSync(join(d, 'l'));
    const p = join(d, 'l', 'x.lock');
    writeOwner(p, { pid: 2 ** 22 + 54321, host: hostname(), startedAt: new Date().toISOString() });
    const results = await Promise.allSettled(Array.from({ length: 8 }, () => acquireLock(p, { staleMs: 60_000 })));
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
  });
});

describe('four eyes in the configuration', () => {
  it('requireApprovals needs an approvers list, never one in the inbox; plans and approvals are not batches then', () => {
    const d = tmp();
    const write = (c: Record<string, unknown>) =>
      writeFileSync(join(d, 'payout-batch.json'), JSON.stringify({ environment: 'sandbox', ...c }));
    write({ requireApprovals: 2 });
    expect(() => readWatchConfig(d)).toThrow(/requireApprovals: name the approvers list too/);
    write({ requireApprovals: 2, approvers: 'inbox/approvers.json' });
    expect(() => readWatchConfig(d)).toThrow(/must not be in the inbox/);
    write({ requireApprovals: 2, approvers: 'approvers.json' });
    expect(readWatchConfig(d)).toMatchObject({ requireApprovals: 2, approvers: 'approvers.json' });

    const inbox = join(d, 'inbox');
    mkdirSync(inbox);
    for (const n of ['payroll.csv', 'payroll.plan.json', 'payroll.plan.json.approvals.json']) writeFileSync(join(inbox, n), 'x');
    expect(inboxCandidates(inbox, { companions: true })).toEqual(['payroll.csv']);
    expect(inboxCandidates(inbox)).toHaveLength(3);
    expect(companionsOf('payroll.csv')).toEqual({ plan: 'payroll.plan.json', approvals: 'payroll.plan.json.approvals.json' });
  });
});

describe('all or nothing, and plans across labels (issue 31)', () => {
  it('a file stopped at its plan for its problems is refused (failed/, exit 3), not left to resume', () => {
    const r = { kind: 'ok', stopped: true, resultsPath: '/w/p/c/pay.results.csv', summary: { created: 0, byStatus: {} } } as never;
    expect(judgeRun(r, { name: 'pay.csv', resumed: false, refusedWhole: 'refused: 1 invalid row (row 2)' })).toEqual({
      resumed: false,
      outcome: 'failed',
      kind: 'refused',
      reason: 'refused: 1 invalid row (row 2)',
    });
  });

  it("the problems that refuse a file: the validation's, and each row the preflight found invalid besides, in row order", () => {
    const found = [
      { severity: 'error' as const, code: 'INVALID_IBAN', file: 'pay.csv', row: 4, column: 'iban', message: 'checksum' },
      {
        severity: 'warning' as const,
        code: 'NUBAN_CHECK_DIGIT',
        file: 'pay.csv',
        row: 2,
        message: 'may be mistyped',
        risky: true as const,
      },
    ];
    const plan = {
      invalidRows: new Map([
        [4, { code: 'INVALID_IBAN', message: 'checksum' }],
        [3, { code: 'METHOD_NOT_AVAILABLE', message: 'NIP is not offered' }],
      ]),
    };
    const all = wholeFileProblems(found, plan, 'pay.csv');
    expect(all.map((p) => [p.row, p.code])).toEqual([
      [2, 'NUBAN_CHECK_DIGIT'],
      [3, 'METHOD_NOT_AVAILABLE'],
      [4, 'INVALID_IBAN'],
    ]);
    expect(refusalText({ problems: all }, '/w/failed/c/pay.summary.json', 'Nothing was sent.')).toBe(
      'refused: 2 invalid rows (rows 3, 4) and 1 row with a warning that may pay the wrong person (row 2): a watch pays a file whole ' +
        'or not at all. Every problem (row, column, what would be valid) is in /w/failed/c/pay.summary.json and the log: fix the rows, ' +
        'then drop the file again. Nothing was sent.',
    );
  });

  it('a plan is for the same account whatever its label: the base URL normalised decides (local by label)', () => {
    const watchEnv = { name: 'sandbox', baseUrl: 'http://127.0.0.1:4010' };
    expect(otherAccount({ env: 'custom', baseUrl: 'http://localhost:4010/' }, watchEnv)).toBeUndefined();
    expect(otherAccount({ env: 'sandbox', baseUrl: 'http://127.0.0.1:4011' }, watchEnv)).toBe(
      'was made for the service at http://127.0.0.1:4011, this watch pays at http://127.0.0.1:4010: make the plan with --env sandbox --base-url http://127.0.0.1:4010',
    );
    expect(otherAccount({ env: 'local', baseUrl: 'http://127.0.0.1:4010' }, watchEnv)).toMatch(/^was made for the local environment/);
    expect(otherAccount({ env: 'local', baseUrl: 'http://127.0.0.1:5555' }, { name: 'local' })).toBeUndefined();
  });
});
