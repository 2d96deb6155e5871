// `watch DIR --once` spawned as cron would, against the sandbox over real HTTP: files done and
// failed with reasons, content already sent not paid again, two concurrent runs on one folder,
// a half-written file, and a run killed mid-file then resumed with no duplicate.
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { LocalSandbox } from '../../src/sandbox/start-sandbox.ts';
import { generateCsv } from '../engine/helpers.ts';
import { allPayouts, cleanEnv, runCli, runMain, startSb, until, workDir } from './helpers.ts';

let sb: LocalSandbox | undefined;
afterEach(async () => {
  await sb?.close();
  sb = undefined;
});

async function folder(s: LocalSandbox, extra: Record<string, unknown> = {}): Promise<string> {
  const dir = await workDir('pb-watch-');
  writeFileSync(
    join(dir, 'payout-batch.json'),
    JSON.stringify({ environment: 'sandbox', baseUrl: s.url, settleSeconds: 1, rate: 200, ...extra }, null, 2),
  );
  return dir;
}
const drop = (dir: string, name: string, rows: number, prefix: string, ready = true, currency = 'GBP', amount?: (i: number) => string) => {
  const p = join(dir, 'inbox', name);
  mkdirSync(join(dir, 'inbox'), { recursive: true });
  writeFileSync(p, generateCsv({ rows, currencies: [currency], prefix, amount }));
  if (ready) writeFileSync(`${p}.ready`, '');
  return p;
};

const watch = (dir: string, extra: string[] = [], onSpawn?: Parameters<typeof runCli>[1]['onSpawn']) =>
  runCli(['watch', dir, '--once', ...extra], {
    cwd: dir,
    env: cleanEnv({ PAYOUT_BATCH_STATE_DIR: join(dir, 'usage') }),
    onSpawn,
    timeoutMs: 60_000,
  });
const claims = (dir: string, sub: string) => (existsSync(join(dir, sub)) ? readdirSync(join(dir, sub)) : []);
const summaryOf = (dir: string, sub: string, claim: string) => {
  const f = readdirSync(join(dir, sub, claim)).find((n) => n.endsWith('.summary.json'))!;
  return JSON.parse(readFileSync(join(dir, sub, claim, f), 'utf8'));
};

describe('payout-batch watch --once', () => {
  it('processes complete files into done/ with results and summary; the same content under another name goes to failed/, not paid again', async () => {
    sb = await startSb();
    const dir = await folder(sb);
    drop(dir, 'payroll-a.csv', 3, 'WA');
    const r = await watch(dir);
    expect(r.code, r.stderr.slice(-2000)).toBe(0);
    expect(r.stdout).toContain('payroll-a.csv: done');
    const [claim] = claims(dir, 'done');
    expect(readdirSync(join(dir, 'done', claim!)).sort()).toEqual([
      '.claim.json',
      'payroll-a.csv',
      'payroll-a.results.csv',
      'payroll-a.summary.json',
    ]);
    expect(summaryOf(dir, 'done', claim!)).toMatchObject({ file: 'payroll-a.csv', outcome: 'done', kind: 'ok', summary: { created: 3 } });
    expect(claims(dir, 'processing')).toEqual([]);
    expect(readdirSync(join(dir, 'inbox'))).toEqual([]);
    // JSON logs with batch id, row number and request id; never the key.
    const rowLog = r.stderr
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l))
      // rows run in parallel: the first row's line, wherever it is in the log
      .find((l) => l.msg === 'row done' && l.row === 2);
    expect(rowLog).toMatchObject({ command: 'watch', file: 'payroll-a.csv', row: 2 });
    expect(rowLog.batchId).toMatch(/^[0-9a-f]{16}$/);
    expect(r.stdout + r.stderr).not.toContain('sk_sandbox_acme_primary');

    // The same bytes dropped again under another name.
    writeFileSync(join(dir, 'inbox', 'payroll-a-copy.csv'), readFileSync(join(dir, 'done', claim!, 'payroll-a.csv')));
    writeFileSync(join(dir, 'inbox', 'payroll-a-copy.csv.ready'), '');
    const again = await watch(dir);
    expect(again.code).toBe(3);
    expect(again.stdout).toMatch(
      /payroll-a-copy\.csv: failed: already processed: the same content as payroll-a\.csv .* 3 rows sent\. Not paid again/,
    );
    const [failed] = claims(dir, 'failed');
    expect(summaryOf(dir, 'failed', failed!)).toMatchObject({ outcome: 'failed', kind: 'refused' });
    expect(await allPayouts(sb)).toHaveLength(3);
  });

  it('an empty inbox, one whose file is not due yet, or a folder a writer stages in, is a quiet cron tick: nothing on stdout or stderr, exit 0; --verbose says so', async () => {
    sb = await startSb();
    const dir = await folder(sb);
    const quiet = await watch(dir);
    expect({ code: quiet.code, stdout: quiet.stdout, stderr: quiet.stderr }).toEqual({ code: 0, stdout: '', stderr: '' });
    // (cron mails every run that prints: a file waiting for its day needs no one)
    const [header, ...rows] = generateCsv({ rows: 1, currencies: ['GBP'], prefix: 'LATER' })
      .trim()
      .split('\n');
    writeFileSync(join(dir, 'inbox', 'later.csv'), [`${header},ReqdExctnDt`, ...rows.map((r) => `${r},2099-12-31`)].join('\n') + '\n');
    writeFileSync(join(dir, 'inbox', 'later.csv.ready'), '');
    mkdirSync(join(dir, 'inbox', 'staging')); // (a folder is left alone: a writer may stage files in one)
    const waiting = await watch(dir);
    expect({ code: waiting.code, stdout: waiting.stdout, stderr: waiting.stderr }).toEqual({ code: 0, stdout: '', stderr: '' });
    expect(readdirSync(join(dir, 'inbox')).sort()).toEqual(['later.csv', 'later.csv.ready', 'staging']);
    const verbose = await watch(dir, ['--verbose']);
    expect(verbose.code, verbose.stderr).toBe(0);
    expect(verbose.stdout).toBe('Nothing to process.\n');
  });

  it('refuses a file outside the allowed currencies: failed/ with the reason, exit 3, nothing sent; -q prints only that file', async () => {
    sb = await startSb();
    const dir = await folder(sb, { allowedCurrencies: ['USD'] });
    drop(dir, 'gbp.csv', 2, 'WG');
    drop(dir, 'usd.csv', 1, 'WU', true, 'USD');
    const r = await watch(dir, ['-q']);
    expect(r.code, r.stderr.slice(-1500)).toBe(3);
    // Quiet: the file that needs attention, not the one done.
    expect(r.stdout).toBe(
      'gbp.csv: failed: refused: source currencies not allowed by payout-batch.json: GBP (2 rows) (allowed: USD). Nothing was sent.\n',
    );
    expect(claims(dir, 'failed')).toHaveLength(1);
    expect(claims(dir, 'done')).toHaveLength(1);
    expect((await allPayouts(sb)).map((p) => p.sourceCurrency)).toEqual(['USD']);
  });

  it('refuses a file over a max total of the configuration: failed/ with the reason, exit 3, nothing sent', async () => {
    sb = await startSb();
    const dir = await folder(sb, { maxTotals: ['GBP:5.00'] });
    drop(dir, 'gbp2.csv', 2, 'WH');
    const r2 = await watch(dir);
    expect(r2.code).toBe(3);
    expect(r2.stdout).toMatch(/gbp2\.csv: failed: refused by the guards: --max-total GBP:5/);
    expect(claims(dir, 'failed')).toHaveLength(1);
    expect(await allPayouts(sb)).toHaveLength(0);
  });

  it('refuses a file whose plan needs more requests than maxRequests: failed/ with the reason, exit 3, nothing sent', async () => {
    sb = await startSb();
    const dir = await folder(sb, { maxRequests: 3 });
    drop(dir, 'gbp3.csv', 2, 'WR');
    const r = await watch(dir);
    expect(r.code).toBe(3);
    expect(r.stdout).toMatch(/gbp3\.csv: failed: refused by the guards: --max-requests 3, but this batch needs about \d+ requests/);
    expect(claims(dir, 'failed')).toHaveLength(1);
    expect(sb.requestLog().filter((e) => e.route === 'initiate')).toHaveLength(0);
  });

  it('refuses an invalid payout-batch.json: exit 2, naming the setting', async () => {
    sb = await startSb();
    const dir = await folder(sb);
    writeFileSync(join(dir, 'payout-batch.json'), '{"environment": "sandbox", "settleSeconds": "soon"}');
    const bad = await watch(dir);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('payout-batch.json: settleSeconds:');
  });

  it('two concurrent runs on the same folder: each file processed exactly once', async () => {
    sb = await startSb({ faults: { latencyMs: [5, 15] } });
    const dir = await folder(sb);
    const files = ['f1.csv', 'f2.csv', 'f3.csv', 'f4.csv'];
    // (amounts of their own: one payee paid the same amount by two files is a probable duplicate)
    files.forEach((f, i) => drop(dir, f, 3, `WC${i}`, true, 'GBP', (r) => `${20 + 10 * i + r}.00`));
    const [a, b] = await Promise.all([watch(dir), watch(dir)]);
    expect(a.code, a.stderr.slice(-1500)).toBe(0);
    expect(b.code, b.stderr.slice(-1500)).toBe(0);
    const done = claims(dir, 'done');
    expect(done).toHaveLength(4);
    expect(
      done
        .map((c) => readFileSync(join(dir, 'done', c, '.claim.json'), 'utf8'))
        .map((t) => JSON.parse(t).name)
        .sort(),
    ).toEqual(files);
    expect(claims(dir, 'failed')).toEqual([]);
    // Between them the two runs reported each file once.
    const reported = (a.stdout + b.stdout)
      .split('\n')
      .filter((l) => / done$/.test(l))
      .map((l) => l.split(':')[0])
      .sort();
    expect(reported).toEqual(files);
    expect(await allPayouts(sb)).toHaveLength(12);
    expect(sb.requestLog().filter((x) => x.route === 'initiate')).toHaveLength(12);
  });

  it('a half-written file, still changing, is not taken', async () => {
    sb = await startSb();
    // settleSeconds 3: --once looks again once the file would have settled (up to 3 s later); the
    // writer below changes it every 200 ms, so it has changed by then even if this test's timers
    // are held up for most of those 3 s on a loaded machine.
    const dir = await folder(sb, { settleSeconds: 3 });
    const text = generateCsv({ rows: 6, currencies: ['GBP'], prefix: 'WHALF' });
    const lines = text.split('\n');
    const path = join(dir, 'inbox', 'slow.csv');
    mkdirSync(join(dir, 'inbox'), { recursive: true });
    writeFileSync(path, lines.slice(0, 3).join('\n') + '\n' + lines[3]!.slice(0, 20)); // cut mid-row
    // A slow writer still at work: the file changes every 200 ms.
    const writer = setInterval(() => {
      const t = new Date();
      utimesSync(path, t, t);
    }, 200);
    const first = await watch(dir, ['--verbose']).finally(() => clearInterval(writer));
    expect(first.code, first.stderr.slice(-1500)).toBe(0);
    expect(first.stdout).toContain('Nothing to process (1 file not complete yet)');
    expect(readdirSync(join(dir, 'inbox'))).toEqual(['slow.csv']);
    expect(await allPayouts(sb)).toHaveLength(0);
  });

  it('a file written in two goes is taken whole once unchanged for settleSeconds', async () => {
    sb = await startSb();
    const dir = await folder(sb);
    const text = generateCsv({ rows: 6, currencies: ['GBP'], prefix: 'WHALF' });
    const lines = text.split('\n');
    const path = join(dir, 'inbox', 'slow.csv');
    mkdirSync(join(dir, 'inbox'), { recursive: true });
    writeFileSync(path, lines.slice(0, 3).join('\n') + '\n' + lines[3]!.slice(0, 20)); // cut mid-row
    writeFileSync(path, text); // the writer finishes
    // No waiting here: the file has not settled yet, and --once looks at it again once it would
    // have (settleSeconds 1), finds it unchanged and takes it.
    const second = await watch(dir);
    expect(second.code, second.stderr.slice(-1500)).toBe(0);
    expect(second.stdout).toContain('slow.csv: done');
    expect(await allPayouts(sb)).toHaveLength(6);
  });

  it('a run killed mid-file is resumed by the next run: one payout per row, no duplicate', async () => {
    sb = await startSb({ faults: { latencyMs: [30, 60] } });
    const dir = await folder(sb, { rate: 20, concurrency: 2 });
    const ROWS = 30;
    drop(dir, 'big.csv', ROWS, 'WK');
    const killed = await watch(dir, [], (child) => {
      void until(() => initiatesSeen(sb!) >= 4, 30_000, 'rows under way').then(
        () => child.kill('SIGKILL'),
        () => child.kill('SIGKILL'),
      );
    });
    expect(killed.signal).toBe('SIGKILL');
    const sentBeforeKill = initiatesSeen(sb);
    expect(sentBeforeKill).toBeLessThan(ROWS);
    expect(claims(dir, 'processing')).toHaveLength(1);
    expect(claims(dir, 'done')).toEqual([]);

    const resumed = await watch(dir);
    expect(resumed.code, resumed.stderr.slice(-2000)).toBe(0);
    expect(resumed.stdout).toContain('big.csv: done (resumed)');
    const payouts = await allPayouts(sb);
    expect(payouts).toHaveLength(ROWS);
    expect(new Set(payouts.map((p) => p.sourceAmount)).size).toBe(ROWS);
    const [claim] = claims(dir, 'done');
    expect(summaryOf(dir, 'done', claim!)).toMatchObject({ outcome: 'done', summary: { created: ROWS } });
    expect(claims(dir, 'processing')).toEqual([]);
  });

  it('--once stopped (SIGTERM) with a file half done exits 130 as `run` does, not 0: cron reads no success; the next run finishes it', async () => {
    sb = await startSb({ faults: { latencyMs: [30, 60] } });
    const dir = await folder(sb, { rate: 20, concurrency: 2 });
    const ROWS = 30;
    drop(dir, 'half.csv', ROWS, 'WS');
    const stopped = await watch(dir, ['--json'], (child) => {
      void until(() => initiatesSeen(sb!) >= 4, 30_000, 'rows under way').then(
        () => child.kill('SIGTERM'),
        () => child.kill('SIGKILL'),
      );
    });
    expect(stopped.code, stopped.stderr.slice(-2000)).toBe(130);
    expect(JSON.parse(stopped.stdout)).toMatchObject({ exitCode: 130, files: [{ name: 'half.csv', outcome: 'processing' }] });
    expect(claims(dir, 'processing')).toHaveLength(1);
    expect(initiatesSeen(sb)).toBeLessThan(ROWS);

    const resumed = await watch(dir);
    expect(resumed.code, resumed.stderr.slice(-2000)).toBe(0);
    expect(resumed.stdout).toContain('half.csv: done (resumed)');
    expect(await allPayouts(sb)).toHaveLength(ROWS);
  });

  it('content a manual run was killed part way through: refused, naming the command that finishes it, which pays each row once', async () => {
    sb = await startSb({ faults: { latencyMs: [30, 60] } });
    const dir = await folder(sb, { rate: 20, concurrency: 2 });
    const ROWS = 20;
    const file = join(dir, 'manual', 'pay.csv');
    mkdirSync(join(dir, 'manual'));
    mkdirSync(join(dir, 'inbox'));
    writeFileSync(file, generateCsv({ rows: ROWS, currencies: ['GBP'], prefix: 'MK' }));
    const env = cleanEnv({ PAYOUT_BATCH_STATE_DIR: join(dir, 'usage') });
    // run by hand on the watch's own ledger, killed once rows are under way (slowly enough that a
    // busy machine's late kill still lands before the last row)
    const args = ['run', file, '--yes', '--base-url', sb.url, '--state-dir', join(dir, '.state'), '--rate', '2'];
    const killed = await runCli(args, {
      cwd: dir,
      env,
      onSpawn: (child) =>
        void until(() => initiatesSeen(sb!) >= 4, 30_000, 'rows under way').then(
          () => child.kill('SIGKILL'),
          () => child.kill('SIGKILL'),
        ),
    });
    expect(killed.signal).toBe('SIGKILL');
    expect(initiatesSeen(sb)).toBeLessThan(ROWS);

    writeFileSync(join(dir, 'inbox', 'pay.csv'), readFileSync(file));
    writeFileSync(join(dir, 'inbox', 'pay.csv.ready'), '');
    const refused = await watch(dir);
    expect(refused.code, refused.stderr.slice(-2000)).toBe(3);
    const finish = /to finish it, run `(payout-batch run [^`]+)` again/.exec(refused.stdout)?.[1];
    expect(finish, refused.stdout).toContain(file);
    // (the command as printed, by main() in this process: the watch is what this case tests)
    const finished = await runMain([...finish!.split(' ').slice(1), '--yes'], { cwd: dir, env });
    expect(finished.code, finished.stderr.slice(-2000)).toBe(0);
    const payouts = await allPayouts(sb);
    expect(payouts).toHaveLength(ROWS);
    expect(new Set(payouts.map((p) => p.sourceAmount)).size).toBe(ROWS);
  });

  it('a file a killed tick left in processing/, moved back into the inbox by hand: refused, naming a command on a file that is there', async () => {
    sb = await startSb({ faults: { latencyMs: [30, 60] } });
    const dir = await folder(sb, { rate: 20, concurrency: 2 });
    const ROWS = 20;
    drop(dir, 'moved.csv', ROWS, 'WM');
    const killed = await watch(dir, [], (child) => {
      void until(() => initiatesSeen(sb!) >= 4, 30_000, 'rows under way').then(
        () => child.kill('SIGKILL'),
        () => child.kill('SIGKILL'),
      );
    });
    expect(killed.signal).toBe('SIGKILL');
    expect(initiatesSeen(sb)).toBeLessThan(ROWS);
    const [claim] = claims(dir, 'processing');
    renameSync(join(dir, 'processing', claim!, 'moved.csv'), join(dir, 'inbox', 'moved.csv'));
    writeFileSync(join(dir, 'inbox', 'moved.csv.ready'), '');

    // (the watch's refusal, by main() in this process: the killed tick is the process this case needs)
    const env = cleanEnv({ PAYOUT_BATCH_STATE_DIR: join(dir, 'usage') });
    const refused = await runMain(['watch', dir, '--once'], { cwd: dir, env });
    expect(refused.code, refused.stderr.slice(-2000)).toBe(3);
    const finish = /to finish it, run `(payout-batch run [^`]+)` again/.exec(refused.stdout)?.[1];
    const file = finish?.split(' ')[2];
    expect(file && existsSync(file), refused.stdout).toBe(true);
    const finished = await runMain([...finish!.split(' ').slice(1), '--yes'], { cwd: dir, env });
    expect(finished.code, finished.stderr.slice(-2000)).toBe(0);
    const payouts = await allPayouts(sb);
    expect(payouts).toHaveLength(ROWS);
    expect(new Set(payouts.map((p) => p.sourceAmount)).size).toBe(ROWS);
  });
});

const initiatesSeen = (s: LocalSandbox) => s.requestLog().filter((r) => r.route === 'initiate').length;
