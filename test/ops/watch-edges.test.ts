// Edge cases of a watch run in process against the sandbox over HTTP: a CSV whose rows are dated
// later (a ReqdExctnDt column) waits in the inbox, one of another date format is refused, a link is
// refused at once whatever its target's dates, one claimed with rows not due waits in processing/;
// a failure once payouts went out leaves the file in processing/ (exit 4), resumed by the next run;
// a stale .ready marker marks no new file; a link left in processing/ is never followed; a stop
// while --once waits for a file to settle ends it quietly, one while a file is read leaves it to
// resume. A claim folder with no file to resume (its watch stopped before writing its record, or
// before moving the file in) is removed once 10 s old or once its owner is gone; one holding a file
// but no record is kept, said. A folder set for production pays only with --env production; an
// --env other than the folder's is refused.
import {
  appendFileSync,
  existsSync,
  linkSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { hostname } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import type { LocalSandbox } from '../../src/sandbox/start-sandbox.ts';
import { myStart } from '../../src/files/lock.ts';
import { claimFile, readClaim, writeClaim } from '../../src/watch/claim-folder.ts';
import { WatchConfig } from '../../src/watch/config.ts';
import { watchFolder, type WatchOptions, type WatchResult } from '../../src/watch/watcher.ts';
import { generateCsv, tempDirs } from '../engine/helpers.ts';
import { allPayouts, cleanEnv, connectionTo, runMain, startSb, until } from './helpers.ts';

let sb: LocalSandbox;
const dirs = tempDirs('pb-watch-edges-');
beforeAll(async () => {
  sb = await startSb({ monthlyQuota: null });
});
afterAll(async () => {
  await sb?.close();
  await dirs.remove();
});

const watchOnce = (dir: string, o: Partial<WatchOptions> = {}) =>
  watchFolder({
    dir,
    config: WatchConfig.parse({ environment: 'sandbox', settleSeconds: 0 }),
    conn: connectionTo(sb),
    once: true,
    crashWaitMs: 0,
    ...o,
  });
const list = (dir: string, sub: string) => readdirSync(join(dir, sub));

/** A CSV of `dates.length` rows, with a ReqdExctnDt column holding these dates. */
function dated(dir: string, name: string, prefix: string, dates: string[], base: number): void {
  const amount = (i: number) => `${base + i}.00`;
  const [header, ...rows] = generateCsv({ rows: dates.length, currencies: ['GBP'], prefix, amount })
    .trim()
    .split('\n');
  const lines = [`${header},ReqdExctnDt`, ...rows.map((r, i) => `${r},${dates[i]}`)];
  mkdirSync(join(dir, 'inbox'), { recursive: true });
  writeFileSync(join(dir, 'inbox', name), lines.join('\n') + '\n');
}

describe('watch: rows dated later in a CSV (a ReqdExctnDt column)', () => {
  it('the file waits in the inbox until its latest date, none of its rows sent; one dated before is paid', async () => {
    const dir = await dirs.make();
    dated(dir, 'later.csv', 'LATER', ['2099-12-31', ''], 100);
    dated(dir, 'now.csv', 'NOW', ['2020-01-01', '2020-01-02'], 200);
    const before = (await allPayouts(sb)).length;
    const r = await watchOnce(dir);
    expect(r.files.map((f) => [f.name, f.outcome, f.kind])).toEqual([['now.csv', 'done', 'ok']]);
    expect(list(dir, 'inbox')).toEqual(['later.csv']);
    expect(list(dir, 'done')).toHaveLength(1);
    expect(await allPayouts(sb)).toHaveLength(before + 2);
  });

  it('a date not written YYYY-MM-DD does not hold the file: it is refused at once (failed/), nothing sent', async () => {
    const dir = await dirs.make();
    dated(dir, 'dmy.csv', 'DMY', ['31/12/2025'], 400);
    const before = (await allPayouts(sb)).length;
    const r = await watchOnce(dir);
    expect(r.files.map((f) => [f.name, f.outcome, f.kind])).toEqual([['dmy.csv', 'failed', 'refused']]);
    expect(r.files[0]!.reason).toContain('1 invalid row (row 2)');
    expect(list(dir, 'inbox')).toEqual([]);
    expect(await allPayouts(sb)).toHaveLength(before);
  });

  it('a link, or a file with a second name, dated later is refused at once (the watch ends), never read for its date', async () => {
    const dir = await dirs.make();
    dated(dir, 'target.csv', 'LINKED', ['2099-12-31'], 450);
    mkdirSync(join(dir, 'elsewhere'));
    renameSync(join(dir, 'inbox', 'target.csv'), join(dir, 'elsewhere', 'target.csv'));
    symlinkSync(join(dir, 'elsewhere', 'target.csv'), join(dir, 'inbox', 'linked.csv'));
    dated(dir, 'hard.csv', 'HARD', ['2099-12-31'], 460);
    linkSync(join(dir, 'inbox', 'hard.csv'), join(dir, 'elsewhere', 'hard.csv'));
    const r = await watchOnce(dir);
    expect(r.files.map((f) => [f.name, f.outcome, f.kind])).toEqual([
      ['hard.csv', 'failed', 'refused'],
      ['linked.csv', 'failed', 'refused'],
    ]);
    expect(r.files[0]!.reason).toMatch(/is a file with 2 hard links/);
    expect(r.files[1]!.reason).toMatch(/is a symbolic link .*links are never followed/);
    expect(list(dir, 'inbox')).toEqual([]);
  });
});

describe('watch: a claimed file with rows not due yet (replaced after its dates were read, or a host whose clock is behind)', () => {
  it('stays in processing/ (exit 5), its due rows paid once; not run again until its day, never moved to done/ unsent', async () => {
    const dir = await dirs.make();
    dated(dir, 'mixed.csv', 'MIXED', ['2020-01-01', '2099-12-31'], 480);
    // as a watch leaves it once claimed, its process gone
    const claimDir = join(dir, 'processing', '20260101T000000Z-000000-mixed.csv');
    mkdirSync(claimDir, { recursive: true });
    renameSync(join(dir, 'inbox', 'mixed.csv'), join(claimDir, 'mixed.csv'));
    writeClaim(claimDir, { name: 'mixed.csv', pid: process.pid, host: hostname(), pidStart: 'gone', claimedAt: new Date().toISOString() });
    const before = (await allPayouts(sb)).length;
    const r = await watchOnce(dir);
    expect(r.kind).toBe('not-finished'); // (exit 5)
    expect(r.files.map((f) => [f.name, f.outcome, f.kind])).toEqual([['mixed.csv', 'processing', 'not-finished']]);
    expect(r.files[0]!.reason).toMatch(/not due until 2099-12-31.*left in processing\//);
    expect(list(dir, 'done')).toEqual([]);
    expect(await allPayouts(sb)).toHaveLength(before + 1);
    // the next runs leave it be until that day
    writeClaim(claimDir, { ...readClaim(claimDir)!, pidStart: 'gone' });
    expect((await watchOnce(dir)).files).toEqual([]);
    expect(list(dir, 'processing')).toEqual(['20260101T000000Z-000000-mixed.csv']);
    expect(await allPayouts(sb)).toHaveLength(before + 1);
  });
});

describe('watch: a failure after payouts went out (the results file cannot be written)', () => {
  it('leaves the file in processing/, the tick halted (exit 4); the next tick resumes it, each row paid once', async () => {
    const dir = await dirs.make();
    mkdirSync(join(dir, 'inbox'));
    writeFileSync(
      join(dir, 'inbox', 'a.csv'),
      generateCsv({ rows: 2, currencies: ['GBP'], prefix: 'AFTER', amount: (i) => `${300 + i}.00` }),
    );
    // a folder where the results file goes, made as the first row is sent: the results' write fails after sending
    // (one there before is refused before anything is sent)
    let blockAt: string | undefined;
    const blocking = await startSb({
      onRequest: (e) => {
        if (e.route !== 'initiate' || !blockAt) return;
        mkdirSync(blockAt, { recursive: true });
        blockAt = undefined;
      },
    });
    onTestFinished(() => blocking.close());
    const before = (await allPayouts(blocking)).length;
    const stop = new AbortController();
    const ticks: WatchResult[] = [];
    const r = await watchOnce(dir, {
      once: false,
      stop: stop.signal,
      conn: connectionTo(blocking),
      config: WatchConfig.parse({ environment: 'sandbox', settleSeconds: 0, pollSeconds: 0.05 }),
      onClaim: (file) => void (blockAt = join(dirname(file), 'a.results.csv')),
      onTick: async (t) => {
        if (!t) return;
        ticks.push(t);
        if (ticks.length === 1) rmSync(join(dir, 'processing', list(dir, 'processing')[0]!, 'a.results.csv'), { recursive: true });
        else stop.abort();
      },
    });
    expect(ticks[0]!.kind).toBe('halted');
    expect(ticks[0]!.files[0]!.reason).toMatch(/cannot write the results file.*left in processing\/, resumed on the next run/);
    expect(r.files.map((f) => [f.name, f.outcome, f.kind, f.resumed])).toEqual([
      ['a.csv', 'processing', 'halted', false],
      ['a.csv', 'done', 'ok', true],
    ]);
    expect(await allPayouts(blocking)).toHaveLength(before + 2);
  });
});

describe('watch: a .ready marker left behind by an earlier file of the name', () => {
  it('does not make the next file of that name complete: it waits for a marker of its own', async () => {
    const dir = await dirs.make();
    const file = join(dir, 'inbox', 'payroll.csv');
    const [header, ...rows] = generateCsv({ rows: 2, currencies: ['GBP'], prefix: 'MARK', amount: (i) => `${500 + i}.00` }).split('\n');
    mkdirSync(join(dir, 'inbox'));
    // (yesterday's, left when its file was taken before the writer marked it)
    writeFileSync(`${file}.ready`, '');
    utimesSync(`${file}.ready`, new Date(Date.now() - 86_400_000), new Date(Date.now() - 86_400_000));
    // a writer still at work, one row of two so far, after the marker (its change time later too)
    const markerChanged = statSync(`${file}.ready`).ctimeMs;
    do writeFileSync(file, `${header}\n${rows[0]}\n`);
    while (statSync(file).ctimeMs <= markerChanged);
    const config = WatchConfig.parse({ environment: 'sandbox', requireReady: true });
    const before = (await allPayouts(sb)).length;
    const first = await watchOnce(dir, { config });
    expect(first.files).toEqual([]);
    expect(first.notComplete).toEqual(['payroll.csv']);
    appendFileSync(file, `${rows[1]}\n`);
    writeFileSync(`${file}.ready`, '');
    const r = await watchOnce(dir, { config });
    expect(r.files.map((f) => [f.name, f.outcome, f.summary?.created])).toEqual([['payroll.csv', 'done', 2]]);
    expect(await allPayouts(sb)).toHaveLength(before + 2);
  });
});

describe('watch: a link claimed from the inbox, left in processing/ by a watch that stopped before settling it', () => {
  it('is refused by the watch that takes the claim over, never followed: failed/, nothing sent', async () => {
    const dir = await dirs.make();
    const elsewhere = join(dir, 'elsewhere.csv');
    writeFileSync(elsewhere, generateCsv({ rows: 2, currencies: ['GBP'], prefix: 'LINKED', amount: (i) => `${600 + i}.00` }));
    const left = (id: string, name: string, make: (at: string) => void) => {
      const claimDir = join(dir, 'processing', id);
      mkdirSync(claimDir, { recursive: true });
      make(join(claimDir, name));
      // (its owner gone: this host, a process that started at another time than the one now under its pid)
      writeClaim(claimDir, { name, pid: process.pid, host: hostname(), pidStart: 'gone', claimedAt: new Date().toISOString() });
    };
    left('20250101T000000Z-aaaaaa-soft.csv', 'soft.csv', (at) => symlinkSync(elsewhere, at));
    left('20250101T000000Z-bbbbbb-hard.csv', 'hard.csv', (at) => linkSync(elsewhere, at));
    const before = (await allPayouts(sb)).length;
    const r = await watchOnce(dir);
    expect(r.files.map((f) => [f.name, f.outcome, f.kind])).toEqual([
      ['soft.csv', 'failed', 'refused'],
      ['hard.csv', 'failed', 'refused'],
    ]);
    expect(r.files[0]!.reason).toMatch(/^refused: soft\.csv is a symbolic link \(to .*elsewhere\.csv\): links are never followed/);
    expect(r.files[1]!.reason).toMatch(/^refused: hard\.csv is a file with 2 hard links: .* It was not read\. Nothing more was sent\.$/);
    expect(list(dir, 'failed')).toHaveLength(2);
    expect(await allPayouts(sb)).toHaveLength(before);
  });
});

describe('watch --once stopped (Ctrl-C, SIGTERM) while it waits for a file to settle', () => {
  it('ends quietly with nothing taken, not with an error', async () => {
    const dir = await dirs.make();
    mkdirSync(join(dir, 'inbox'));
    writeFileSync(join(dir, 'inbox', 'young.csv'), generateCsv({ rows: 1, currencies: ['GBP'], prefix: 'YOUNG' }));
    const stop = new AbortController();
    // (the wait for the file to settle is what listens to the signal: stopped once it does)
    const listen = stop.signal.addEventListener.bind(stop.signal);
    stop.signal.addEventListener = ((...a: Parameters<typeof listen>) => {
      listen(...a);
      queueMicrotask(() => stop.abort());
    }) as typeof listen;
    const r = await watchOnce(dir, { stop: stop.signal, config: WatchConfig.parse({ environment: 'sandbox', settleSeconds: 30 }) });
    expect(stop.signal.aborted).toBe(true);
    expect(r.files).toEqual([]);
    expect(list(dir, 'inbox')).toEqual(['young.csv']);
    expect(r.stopped).toBe(false); // (exit 0: nothing left half done)
  });
});

describe('watch: a file stopped part way, moved out of processing/ by hand and dropped again', () => {
  it('the results of the rows sent go to failed/ with their claim, never deleted; its retry, which both name, sends the rest', async () => {
    const dir = await dirs.make();
    mkdirSync(join(dir, 'inbox'));
    const rows = generateCsv({ rows: 6, currencies: ['GBP'], prefix: 'PART', amount: (i) => `${800 + i}.00` });
    writeFileSync(join(dir, 'inbox', 'part.csv'), rows);
    const stop = new AbortController();
    const stopping = await startSb({ onRequest: (e) => void (e.route === 'initiate' && stop.abort()) });
    onTestFinished(() => stopping.close());
    const config = WatchConfig.parse({ environment: 'sandbox', settleSeconds: 0, concurrency: 1 });
    const first = await watchOnce(dir, { stop: stop.signal, conn: connectionTo(stopping), config });
    expect(first.files).toMatchObject([{ name: 'part.csv', outcome: 'processing' }]);
    const id = list(dir, 'processing')[0]!;
    const claimDir = join(dir, 'processing', id);
    expect(list(dir, `processing/${id}`)).toContain('part.results.csv');
    // the next start: this process stands for one that is gone; someone put the file back into the inbox meanwhile
    writeClaim(claimDir, { ...readClaim(claimDir)!, pidStart: 'gone' });
    renameSync(join(claimDir, 'part.csv'), join(dir, 'inbox', 'part.csv'));
    const again = await watchOnce(dir, { conn: connectionTo(stopping), config });
    expect(list(dir, `failed/${id}`)).toContain('part.results.csv');
    const results = join(dir, 'failed', id, 'part.results.csv');
    expect(readFileSync(results, 'utf8')).toContain('PART-0001');
    // both the claim folder's reason and the copy's name its retry, which sends the rows not sent, each once
    const retries = again.files.map((f) => /`(payout-batch retry (\S+)[^`]*)`/.exec(f.reason ?? ''));
    expect(retries.map((m) => m?.[2])).toEqual([results, results]);
    const copy = again.files.find((f) => f.claim !== id)?.reason ?? '';
    expect(copy).toContain(`the same content as part.csv (moved out of ${join(dir, 'failed', id)})`);
    expect(notThere(copy, dir)).toEqual([]);
    const retried = await runMain([...retries[0]![1]!.split(' ').slice(1), '--yes'], { cwd: dir, env: cleanEnv() });
    expect(retried.code, retried.stderr.slice(-1500)).toBe(0);
    const paid = (await allPayouts(stopping)).map((p) => p.sourceAmount).sort();
    expect(paid).toEqual([800, 801, 802, 803, 804, 805]);
  });
});

/** The paths under `dir` a reason names that are not there, but one it says was removed. */
const notThere = (reason: string, dir: string) =>
  (reason.match(new RegExp(`${dir.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}/[^\\s,)\`]*`, 'g')) ?? []).filter(
    (p) => !existsSync(p) && !reason.includes(`${p}, since removed`),
  );

describe('watch: the same content dropped again once its claim folder was removed by hand', () => {
  it('is refused naming no folder that is not there: where it ran, said to be removed', async () => {
    const dir = await dirs.make();
    mkdirSync(join(dir, 'inbox'));
    const rows = generateCsv({ rows: 2, currencies: ['GBP'], prefix: 'GONE', amount: (i) => `${900 + i}.00` });
    writeFileSync(join(dir, 'inbox', 'gone.csv'), rows);
    expect((await watchOnce(dir)).files).toMatchObject([{ name: 'gone.csv', outcome: 'done' }]);
    const id = list(dir, 'done')[0]!;
    rmSync(join(dir, 'done', id), { recursive: true }); // (a person tidying done/)
    writeFileSync(join(dir, 'inbox', 'gone.csv'), rows);
    const again = await watchOnce(dir);
    const reason = again.files[0]?.reason ?? '';
    expect(reason).toContain(`already processed: the same content as gone.csv (from ${join(dir, 'processing', id)}, since removed)`);
    expect(notThere(reason, dir)).toEqual([]);
  });
});

describe('watch stopped (Ctrl-C, SIGTERM) while it reads a claimed file', () => {
  it('leaves the file in processing/, not failed/ as unusable; the next start resumes it', async () => {
    const dir = await dirs.make();
    mkdirSync(join(dir, 'inbox'));
    writeFileSync(
      join(dir, 'inbox', 'read.csv'),
      generateCsv({ rows: 2, currencies: ['GBP'], prefix: 'READ', amount: (i) => `${700 + i}.00` }),
    );
    const before = (await allPayouts(sb)).length;
    const stop = new AbortController();
    const r = await watchOnce(dir, { stop: stop.signal, onClaim: () => stop.abort() });
    expect(r.files.map((f) => [f.name, f.outcome, f.kind, f.reason])).toEqual([
      ['read.csv', 'processing', 'ok', 'stopped on request: resumed on the next start'],
    ]);
    expect(r.stopped).toBe(true); // (exit 130)
    expect(list(dir, 'failed')).toEqual([]);
    // the next start: this process stands for one that is gone
    const claimDir = join(dir, 'processing', list(dir, 'processing')[0]!);
    writeClaim(claimDir, { ...readClaim(claimDir)!, pidStart: 'gone' });
    const again = await watchOnce(dir);
    expect(again.files.map((f) => [f.name, f.outcome, f.kind, f.resumed])).toEqual([['read.csv', 'done', 'ok', true]]);
    expect(await allPayouts(sb)).toHaveLength(before + 2);
  });
});

describe('watch: claims taken over together, run one after another', () => {
  it('the one waiting its turn keeps its heartbeat, so that a watch on another host does not take it over too', async () => {
    const dir = await dirs.make();
    // two files a watch left in processing/ (its process gone), taken over by the next start at once
    const claimDirs = ['first', 'second'].map((stem, f) => {
      const name = `${stem}.csv`;
      const claimDir = join(dir, 'processing', `20260101T000000Z-00000${f}-${name}`);
      mkdirSync(claimDir, { recursive: true });
      writeFileSync(join(claimDir, name), generateCsv({ rows: 1, currencies: ['GBP'], prefix: `TURN${f}`, amount: () => `${900 + f}.00` }));
      writeClaim(claimDir, { name, pid: process.pid, host: hostname(), pidStart: 'gone', claimedAt: new Date().toISOString() });
      return claimDir;
    });
    // the first file's payout is held at the service until the second claim's heartbeat is seen
    let held: (() => void) | undefined;
    const release = new Promise<void>((r) => (held = r));
    let initiating = false;
    const slow: typeof fetch = async (input, init) => {
      if (new Headers(init?.headers).has('Idempotency-Key') && !initiating) {
        initiating = true;
        await release;
      }
      return fetch(input, init);
    };
    const before = (await allPayouts(sb)).length;
    const config = WatchConfig.parse({ environment: 'sandbox', settleSeconds: 0, claimStaleSeconds: 10 });
    const run = watchOnce(dir, { config, conn: connectionTo(sb, slow) });
    await until(() => initiating, 10_000, 'the first file under way');
    // another host judges a claim by its .claim.json's age (claimStaleSeconds)
    const since = Date.now();
    const touched = await until(() => statSync(join(claimDirs[1]!, '.claim.json')).mtimeMs > since, 10_000).then(
      () => true,
      () => false,
    );
    held!();
    const r = await run;
    expect(touched).toBe(true);
    expect(r.files.map((f) => [f.name, f.outcome, f.resumed])).toEqual([
      ['first.csv', 'done', true],
      ['second.csv', 'done', true],
    ]);
    expect(await allPayouts(sb)).toHaveLength(before + 2);
  });
});

describe('watch: a claim record torn by a power cut (.claim.json empty beside its file)', () => {
  it('keeps the claimed file in processing/, saying so, never deletes it; nothing sent', async () => {
    const dir = await dirs.make();
    const claimDir = join(dir, 'processing', '20260101T000000Z-000000-torn.csv');
    mkdirSync(claimDir, { recursive: true });
    const csv = generateCsv({ rows: 1, currencies: ['GBP'], prefix: 'TORN', amount: () => '930.00' });
    writeFileSync(join(claimDir, 'torn.csv'), csv);
    writeFileSync(join(claimDir, '.claim.json'), '');
    const old = new Date(Date.now() - 60_000);
    utimesSync(claimDir, old, old);
    const warned: string[] = [];
    const logger = {
      warn: (_: unknown, msg: string) => void warned.push(msg),
      info: () => {},
      debug: () => {},
      error: () => {},
    } as unknown as WatchOptions['logger'];
    const before = (await allPayouts(sb)).length;
    const r = await watchOnce(dir, { logger });
    expect(r.files).toEqual([]);
    expect(readFileSync(join(claimDir, 'torn.csv'), 'utf8')).toBe(csv);
    expect(warned).toEqual([expect.stringMatching(/no readable \.claim\.json.*left in processing/)]);
    expect(await allPayouts(sb)).toHaveLength(before);
  });
});

describe('watch: claim folders left in processing/ with no file to resume', () => {
  const secondsAgo = (s: number) => new Date(Date.now() - s * 1000);

  it('one a watch that crashed before writing its .claim.json left with no file is removed once 10 s old, not before', async () => {
    const dir = await dirs.make();
    // (empty; and one whose process died while writing the record: its temporary file, a dot file, is all there is)
    const ids = ['20260101T000000Z-000000-crashed.csv', '20260101T000000Z-000001-writing.csv'];
    const claimDirs = ids.map((id) => join(dir, 'processing', id));
    for (const d of claimDirs) mkdirSync(d, { recursive: true });
    writeFileSync(join(claimDirs[1]!, `.claim.json.${process.pid}.0a1b2c3d.tmp`), '{"name": "writing.csv", ');
    // younger: its process may still be at it
    for (const d of claimDirs) utimesSync(d, secondsAgo(8), secondsAgo(8));
    expect((await watchOnce(dir)).files).toEqual([]);
    expect(list(dir, 'processing').sort()).toEqual(ids);
    for (const d of claimDirs) utimesSync(d, secondsAgo(12), secondsAgo(12));
    expect((await watchOnce(dir)).files).toEqual([]);
    expect(list(dir, 'processing')).toEqual([]);
  });

  it('one with no .claim.json beside a file is kept however old, the warning naming the folder and the file', async () => {
    const dir = await dirs.make();
    const id = '20260101T000000Z-000002-kept.csv';
    const claimDir = join(dir, 'processing', id);
    mkdirSync(claimDir, { recursive: true });
    const csv = generateCsv({ rows: 1, currencies: ['GBP'], prefix: 'KEPT', amount: () => '940.00' });
    writeFileSync(join(claimDir, 'kept.csv'), csv);
    utimesSync(claimDir, secondsAgo(3600), secondsAgo(3600));
    const warned: [unknown, string][] = [];
    const logger = {
      warn: (fields: unknown, msg: string) => void warned.push([fields, msg]),
      info: () => {},
      debug: () => {},
      error: () => {},
    } as unknown as WatchOptions['logger'];
    const before = (await allPayouts(sb)).length;
    expect((await watchOnce(dir, { logger })).files).toEqual([]);
    expect(warned).toEqual([
      [{ claim: id, files: ['kept.csv'] }, expect.stringMatching(/^no readable \.claim\.json .*left in processing\/$/)],
    ]);
    expect(list(dir, 'processing')).toEqual([id]);
    expect(readFileSync(join(claimDir, 'kept.csv'), 'utf8')).toBe(csv);
    expect(await allPayouts(sb)).toHaveLength(before);
  });

  it('one whose .claim.json names a file gone from it, only dot files left, is removed once its owner is gone, kept while it lives', async () => {
    const dir = await dirs.make();
    const id = '20260101T000000Z-000003-gone.csv';
    const claimDir = join(dir, 'processing', id);
    mkdirSync(claimDir, { recursive: true });
    // (its owner stopped before moving the file in, and the file left the inbox since; a temporary file of a write it did not finish)
    writeClaim(claimDir, { name: 'gone.csv', pid: process.pid, host: hostname(), ...myStart(), claimedAt: new Date().toISOString() });
    writeFileSync(join(claimDir, `.gone.results.csv.${process.pid}.0a1b2c3d.tmp`), '');
    // its owner alive (this process): kept, however long since its heartbeat
    utimesSync(claimFile(claimDir), secondsAgo(3600), secondsAgo(3600));
    expect((await watchOnce(dir)).files).toEqual([]);
    expect(list(dir, 'processing')).toEqual([id]);
    // its owner gone (this host, another process now under its pid)
    writeClaim(claimDir, { ...readClaim(claimDir)!, pidStart: 'gone' });
    expect((await watchOnce(dir)).files).toEqual([]);
    expect(list(dir, 'processing')).toEqual([]);
    expect(list(dir, 'failed')).toEqual([]);
  });
});

describe('watch: a batch file named like the claim record', () => {
  it('inbox/claim.json is paid and kept whole, not overwritten by the record of its claim', async () => {
    const dir = await dirs.make();
    mkdirSync(join(dir, 'inbox'));
    const csv = generateCsv({ rows: 2, currencies: ['GBP'], prefix: 'CLAIMNAME', amount: (i) => `${310 + i}.00` });
    writeFileSync(join(dir, 'inbox', 'claim.json'), csv);
    const before = (await allPayouts(sb)).length;
    const r = await watchOnce(dir);
    expect(r.files.map((f) => [f.name, f.outcome, f.kind])).toEqual([['claim.json', 'done', 'ok']]);
    const [claim] = list(dir, 'done');
    expect(readFileSync(join(dir, 'done', claim!, 'claim.json'), 'utf8')).toBe(csv);
    // (its record names this process's pid namespace: a watch in a container bearing the host's name judges it by age)
    expect(readClaim(join(dir, 'done', claim!))).toMatchObject({ pid: process.pid, pidSpace: myStart().pidSpace });
    expect(await allPayouts(sb)).toHaveLength(before + 2);
  });
});

describe('the environment a watch pays in', () => {
  it.each([
    [
      { environment: 'production' },
      [],
      3,
      'payout-batch.json names production: name it on the command line too (--env production) to pay for real',
    ],
    [{ environment: 'sandbox' }, ['--env', 'production'], 2, '--env production but payout-batch.json says "environment": "sandbox"'],
  ])('%j with %j: refused before anything is read or sent', async (config, flags, code, said) => {
    const dir = await dirs.make();
    mkdirSync(join(dir, 'inbox'));
    writeFileSync(join(dir, 'payout-batch.json'), JSON.stringify(config));
    writeFileSync(join(dir, 'inbox', 'batch.csv'), generateCsv({ rows: 1, currencies: ['GBP'], prefix: 'ENV' }));
    const before = sb.requestLog().length;
    const r = await runMain(['watch', dir, '--once', ...flags, '--base-url', sb.url], { cwd: dir, env: cleanEnv() });
    expect([r.code, r.stderr.split('\n')[0]]).toEqual([code, `payout-batch: ${said}`]);
    expect(readdirSync(join(dir, 'inbox'))).toEqual(['batch.csv']);
    expect(sb.requestLog().length).toBe(before);
  });
});
