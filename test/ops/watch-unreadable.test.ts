// A file dropped that the watch's user cannot read (a writer's umask 077, another user's file): it is
// refused to failed/ naming why, and the rest of the inbox is paid. It used to end the run with an
// unexpected error, its claim left in processing/, and every later run ended on it again: nothing
// more was paid from the folder; so did one left in processing/ with no hash recorded, and one it may
// not move (a sticky inbox). (root reads and moves any file: both are refused here as they would be.)
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, onTestFinished, vi } from 'vitest';

vi.mock('../../src/engine/identity.ts', async (importOriginal) => {
  const real = await importOriginal<typeof import('../../src/engine/identity.ts')>();
  return {
    ...real,
    fileSha256: async (path: string) => {
      if (path.endsWith('locked.csv')) throw Object.assign(new Error(`EACCES: permission denied, open '${path}'`), { code: 'EACCES' });
      return real.fileSha256(path);
    },
  };
});

const denied = vi.hoisted(() => ({ list: '', io: '', read: '' }));
// (a sticky inbox, as /tmp: another user's file cannot be renamed by the watch's user)
vi.mock('node:fs', async (importOriginal) => {
  const real = await importOriginal<typeof import('node:fs')>();
  const renameSync: typeof real.renameSync = (from, to) => {
    if (String(from).endsWith('theirs.csv'))
      throw Object.assign(new Error(`EPERM: operation not permitted, rename '${String(from)}'`), { code: 'EPERM' });
    return real.renameSync(from, to);
  };
  // (another user's claim folder, mode 0700: not even listed; or the inbox named in `denied`)
  const readdirSync = ((path: string, ...o: never[]) => {
    if (String(path).endsWith('-private.csv') || String(path) === denied.list)
      throw Object.assign(new Error(`EACCES: permission denied, scandir '${path}'`), { code: 'EACCES' });
    return real.readdirSync(path, ...o);
  }) as typeof real.readdirSync;
  // (a disk failing under the file named in `denied.io`: existsSync says no, lstat says why)
  const existsSync: typeof real.existsSync = (path) => String(path) !== denied.io && real.existsSync(path);
  const lstatSync = ((path: string, ...o: never[]) => {
    if (String(path) === denied.io) throw Object.assign(new Error(`EIO: i/o error, lstat '${path}'`), { code: 'EIO' });
    return real.lstatSync(path, ...o);
  }) as typeof real.lstatSync;
  const readFileSync = ((path: string, ...o: never[]) => {
    if (String(path) === denied.read) throw Object.assign(new Error(`EIO: i/o error, open '${path}'`), { code: 'EIO' });
    return real.readFileSync(path, ...o);
  }) as typeof real.readFileSync;
  const mocked = { renameSync, readdirSync, existsSync, lstatSync, readFileSync };
  return { ...real, ...mocked, default: { ...real, ...mocked } };
});

const { WatchConfig } = await import('../../src/watch/config.ts');
const { watchFolder } = await import('../../src/watch/watcher.ts');
const { claimFile, writeClaim } = await import('../../src/watch/claim-folder.ts');
const { generateCsv, tempDirs } = await import('../engine/helpers.ts');
const { allPayouts, connectionTo, startSb } = await import('./helpers.ts');

let sb: Awaited<ReturnType<typeof startSb>>;
const dirs = tempDirs('pb-watch-unreadable-');
beforeAll(async () => {
  sb = await startSb({ monthlyQuota: null });
});
afterAll(async () => {
  await sb?.close();
  await dirs.remove();
});

describe('watch: a file its user cannot read', () => {
  it('is refused to failed/, naming why; the rest of the inbox is paid, and the next run is not stopped by it', async () => {
    const dir = await dirs.make();
    mkdirSync(join(dir, 'inbox'));
    const csv = (prefix: string, base: number) => generateCsv({ rows: 2, currencies: ['GBP'], prefix, amount: (i) => `${base + i}.00` });
    writeFileSync(join(dir, 'inbox', 'a-locked.csv'), csv('LOCKED', 610));
    writeFileSync(join(dir, 'inbox', 'b-open.csv'), csv('OPEN', 620));
    const before = (await allPayouts(sb)).length;
    const once = () =>
      watchFolder({
        dir,
        config: WatchConfig.parse({ environment: 'sandbox', settleSeconds: 0 }),
        conn: connectionTo(sb),
        once: true,
        crashWaitMs: 0,
      });
    const r = await once();
    expect(r.files.map((f) => [f.name, f.outcome, f.kind])).toEqual([
      ['a-locked.csv', 'failed', 'refused'],
      ['b-open.csv', 'done', 'ok'],
    ]);
    expect(r.files[0]!.reason).toBe(
      'refused: inbox/a-locked.csv cannot be read (EACCES): make it readable by the user this watch runs as, then drop it again. Nothing was sent.',
    );
    expect(readdirSync(join(dir, 'processing'))).toEqual([]);
    expect(await allPayouts(sb)).toHaveLength(before + 2);
    expect((await once()).files).toEqual([]);
  });

  it("one it may not move out of the inbox (a sticky inbox, another user's file) is left there, said; the rest is paid", async () => {
    const dir = await dirs.make();
    mkdirSync(join(dir, 'inbox'));
    writeFileSync(
      join(dir, 'inbox', 'a-theirs.csv'),
      generateCsv({ rows: 1, currencies: ['GBP'], prefix: 'THEIRS', amount: () => '640.00' }),
    );
    writeFileSync(join(dir, 'inbox', 'b-ours.csv'), generateCsv({ rows: 1, currencies: ['GBP'], prefix: 'OURS', amount: () => '650.00' }));
    const warned: string[] = [];
    const logger = { warn: (_: unknown, m: string) => void warned.push(m), info: () => {}, debug: () => {}, error: () => {} };
    const before = (await allPayouts(sb)).length;
    const config = WatchConfig.parse({ environment: 'sandbox', settleSeconds: 0 });
    const once = () => watchFolder({ dir, config, conn: connectionTo(sb), once: true, crashWaitMs: 0, logger: logger as never });
    const r = await once();
    expect(r.files.map((f) => [f.name, f.outcome])).toEqual([['b-ours.csv', 'done']]);
    expect(readdirSync(join(dir, 'inbox'))).toEqual(['a-theirs.csv']);
    expect(warned).toEqual([expect.stringMatching(/^a-theirs\.csv cannot be moved out of the inbox \(EPERM\)/)]);
    expect(readdirSync(join(dir, 'processing'))).toEqual([]);
    expect(await allPayouts(sb)).toHaveLength(before + 1);
    expect((await once()).files).toEqual([]);
  });

  it("another user's claim folder it cannot list or read is left as it is, said; not a crash of this run", async () => {
    const dir = await dirs.make();
    const claimDir = join(dir, 'processing', '20260101T000000Z-000000-private.csv');
    mkdirSync(claimDir, { recursive: true });
    writeFileSync(join(claimDir, 'private.csv'), generateCsv({ rows: 1, currencies: ['GBP'], prefix: 'PRIVATE' }));
    writeFileSync(join(claimDir, '.claim.json'), ''); // (unreadable, as it would be)
    const warned: string[] = [];
    const logger = { warn: (_: unknown, m: string) => void warned.push(m), info: () => {}, debug: () => {}, error: () => {} };
    const config = WatchConfig.parse({ environment: 'sandbox', settleSeconds: 0 });
    const r = await watchFolder({ dir, config, conn: connectionTo(sb), once: true, crashWaitMs: 0, logger: logger as never });
    expect(r.files).toEqual([]);
    expect(warned).toEqual([expect.stringMatching(/no readable \.claim\.json/)]);
    expect(existsSync(join(claimDir, 'private.csv'))).toBe(true);
  });

  it('an inbox it cannot list is refused, naming it: not read as an empty inbox, the payroll silently left unpaid', async () => {
    const dir = await dirs.make();
    const inbox = join(dir, 'inbox');
    mkdirSync(inbox);
    writeFileSync(join(inbox, 'payroll.csv'), generateCsv({ rows: 1, currencies: ['GBP'], prefix: 'UNLISTED', amount: () => '660.00' }));
    const config = WatchConfig.parse({ environment: 'sandbox', settleSeconds: 0 });
    const once = () => watchFolder({ dir, config, conn: connectionTo(sb), once: true, crashWaitMs: 0 });
    const before = (await allPayouts(sb)).length;
    denied.list = inbox;
    try {
      await expect(once()).rejects.toMatchObject({
        name: 'WatchConfigError',
        message: expect.stringContaining(`cannot list ${inbox} (EACCES)`),
      });
    } finally {
      denied.list = '';
    }
    expect(readdirSync(inbox)).toEqual(['payroll.csv']);
    expect((await once()).files.map((f) => [f.name, f.outcome])).toEqual([['payroll.csv', 'done']]);
    expect(await allPayouts(sb)).toHaveLength(before + 1);
  });

  it('a claimed file it cannot look at (EIO) is left in processing/, said: not taken for one never moved there and deleted', async () => {
    const dir = await dirs.make();
    const claimDir = join(dir, 'processing', '20260101T000000Z-000000-d-failing.csv');
    mkdirSync(claimDir, { recursive: true });
    const file = join(claimDir, 'd-failing.csv');
    writeFileSync(file, generateCsv({ rows: 1, currencies: ['GBP'], prefix: 'FAILING' }));
    // (its owner gone: taken over, were its file there)
    writeClaim(claimDir, {
      name: 'd-failing.csv',
      pid: process.pid,
      host: hostname(),
      pidStart: 'gone',
      claimedAt: new Date().toISOString(),
    });
    const warned: string[] = [];
    const logger = { warn: (_: unknown, m: string) => void warned.push(m), info: () => {}, debug: () => {}, error: () => {} };
    const config = WatchConfig.parse({ environment: 'sandbox', settleSeconds: 0 });
    const before = (await allPayouts(sb)).length;
    denied.io = file;
    try {
      const r = await watchFolder({ dir, config, conn: connectionTo(sb), once: true, crashWaitMs: 0, logger: logger as never });
      expect(r.files).toEqual([]);
    } finally {
      denied.io = '';
    }
    expect(warned).toEqual([expect.stringMatching(/d-failing\.csv cannot be looked at \(EIO\): left in processing/)]);
    expect(existsSync(file)).toBe(true);
    expect(await allPayouts(sb)).toHaveLength(before);
  });

  it('left in processing/ with no hash recorded (a crash before it): refused to failed/, not a crash of every later run', async () => {
    const dir = await dirs.make();
    const claimDir = join(dir, 'processing', '20260101T000000Z-000000-c-locked.csv');
    mkdirSync(claimDir, { recursive: true });
    writeFileSync(join(claimDir, 'c-locked.csv'), generateCsv({ rows: 1, currencies: ['GBP'], prefix: 'NOHASH' }));
    writeClaim(claimDir, {
      name: 'c-locked.csv',
      pid: process.pid,
      host: hostname(),
      pidStart: 'gone',
      claimedAt: new Date().toISOString(),
    });
    const before = (await allPayouts(sb)).length;
    const config = WatchConfig.parse({ environment: 'sandbox', settleSeconds: 0 });
    const r = await watchFolder({ dir, config, conn: connectionTo(sb), once: true, crashWaitMs: 0 });
    expect(r.files.map((f) => [f.name, f.outcome, f.kind, f.resumed])).toEqual([['c-locked.csv', 'failed', 'refused', true]]);
    expect(r.files[0]!.reason).toMatch(/^refused: c-locked\.csv cannot be read \(EACCES\): make it readable .* Nothing more was sent\.$/);
    expect(readdirSync(join(dir, 'processing'))).toEqual([]);
    expect(await allPayouts(sb)).toHaveLength(before);
  });
  it('a halted claim of its own whose .claim.json it cannot read (EIO) is left in processing/, said: not a crash of the watch', async () => {
    const dir = await dirs.make();
    mkdirSync(join(dir, 'inbox'));
    writeFileSync(
      join(dir, 'inbox', 'a.csv'),
      generateCsv({ rows: 2, currencies: ['GBP'], prefix: 'HALTEDIO', amount: (i) => `${670 + i}.00` }),
    );
    const warned: string[] = [];
    const logger = { warn: (_: unknown, m: string) => void warned.push(m), info: () => {}, debug: () => {}, error: () => {} };
    // a folder where the results file goes, made as the first row is sent: the write fails after sending, the tick halts
    // (one there before is refused before anything is sent)
    let claimDir = '';
    let blocked = false;
    const blocking = await startSb({
      onRequest: (e) => {
        if (e.route !== 'initiate' || !claimDir || blocked) return;
        mkdirSync(join(claimDir, 'a.results.csv'));
        blocked = true;
      },
    });
    onTestFinished(() => blocking.close());
    const before = (await allPayouts(blocking)).length;
    const stop = new AbortController();
    let ticks = 0;
    try {
      const r = await watchFolder({
        dir,
        config: WatchConfig.parse({ environment: 'sandbox', settleSeconds: 0, pollSeconds: 0.05 }),
        conn: connectionTo(blocking),
        once: false,
        stop: stop.signal,
        crashWaitMs: 0,
        logger: logger as never,
        onClaim: (file) => void (claimDir = dirname(file)),
        onTick: async (t) => {
          if (!t) return;
          if (++ticks === 1) denied.read = claimFile(claimDir);
          else stop.abort();
        },
      });
      expect(r.files.map((f) => [f.name, f.outcome, f.kind])).toEqual([['a.csv', 'processing', 'halted']]);
    } finally {
      denied.read = '';
    }
    expect(warned).toContain('no readable .claim.json: left in processing/, resumed on the next start');
    expect(existsSync(join(claimDir, 'a.csv'))).toBe(true);
    expect(await allPayouts(blocking)).toHaveLength(before + 2);
  });
});
