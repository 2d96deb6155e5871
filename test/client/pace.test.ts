// One request pace and one monthly count per key across processes (issue 15). Each SharedPace or
// UsageCounter here stands for a process: they share nothing but the files in the state folder.
import { readFileSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { PENDING_MS, SharedPace, SlidingWindowLimiter, pacePath, wallNow } from '../../src/client/pace.ts';
import { UsageCounter, monthOf } from '../../src/client/quota.ts';
import { mostInWindow, startThrough } from './starts.ts';
import { until } from '../ops/helpers.ts';
import { openConnection } from '../../src/cli/options.ts';
import { createLogger } from '../../src/log.ts';
import type { CliIO } from '../../src/cli/command.ts';

const dirs: string[] = [];
const tempDir = async () => {
  const d = await mkdtemp(join(tmpdir(), 'pb-pace-'));
  dirs.push(d);
  return d;
};
afterEach(async () => {
  for (const d of dirs.splice(0)) await rm(d, { recursive: true, force: true });
});

describe('the shared pace of a key (pace.ts)', () => {
  it('names the file by the service and the key fingerprint, never the key', () => {
    const a = pacePath('/s', 'https://gw.example', 'fp1');
    expect(a).toMatch(/^\/s\/pace\/[0-9a-f]{24}\.json$/);
    expect(pacePath('/s', 'https://gw.example/', 'fp1')).toBe(a);
    expect(pacePath('/s', 'https://other.example', 'fp1')).not.toBe(a);
    expect(pacePath('/s', 'https://gw.example', 'fp2')).not.toBe(a);
  });

  it('two processes: the second waits for the first one’s starts, and a start marked sent is written so', async () => {
    const path = pacePath(await tempDir(), 'http://127.0.0.1:1', 'fp');
    const a = new SharedPace(path);
    const b = new SharedPace(path);
    const ids = [a.take(2, 1000), a.take(2, 1000)];
    expect(ids.every((t) => t.ok)).toBe(true);
    const refused = b.take(2, 1000);
    expect(refused.ok).toBe(false);
    expect(!refused.ok && refused.waitMs).toBeGreaterThan(900);
    for (const t of ids) if (t.ok) a.markSent(t.id);
    a.flush();
    const file = JSON.parse(await readFile(path, 'utf8')) as { starts: { p?: 1 }[] };
    expect(file.starts).toHaveLength(2);
    expect(file.starts.filter((s) => s.p)).toHaveLength(0);
  });

  it('a start not sent yet counts as starting now (for PENDING_MS at most); a sent one from when it left', async () => {
    const path = pacePath(await tempDir(), 'http://127.0.0.1:4', 'fp');
    const now = wallNow();
    // a fixed clock: what is asserted is the arithmetic, not how fast this machine gets there
    const pace = new SharedPace(path, undefined, () => now);
    await mkdir(dirname(path), { recursive: true });
    const at = async (starts: object[] | string) => {
      await writeFile(path, typeof starts === 'string' ? starts : JSON.stringify({ v: 1, starts }));
      return pace.take(1, 1000);
    };
    const pending = await at([{ id: 'other-1', t: now - 600, p: 1 }]);
    expect(!pending.ok && pending.waitMs).toBe(1001);
    const sent = await at([{ id: 'other-1', t: now - 600 }]);
    expect(!sent.ok && sent.waitMs).toBe(401);
    // a pending start left by a process that died before sending: it stops counting as now after PENDING_MS
    const abandoned = await at([{ id: 'other-1', t: now - PENDING_MS - 1100, p: 1 }]);
    expect(abandoned.ok).toBe(true);
    // a damaged file is read as empty
    expect((await at('{"v":1,"starts":[')).ok).toBe(true);
  });

  it('a process that ran across a suspend and one started after it share one clock', async () => {
    const path = pacePath(await tempDir(), 'http://127.0.0.1:5', 'fp');
    const fresh = new SharedPace(path, undefined, () => Date.now());
    const hour = 3_600_000;
    const monotonic = performance.now.bind(performance);
    // (Linux: the monotonic clock stands still while the machine sleeps, the wall clock does not)
    const spy = vi.spyOn(performance, 'now').mockImplementation(() => monotonic() - hour);
    try {
      const slept = new SharedPace(path);
      expect([fresh.take(2, 1000), fresh.take(2, 1000)].every((t) => t.ok)).toBe(true);
      const refused = slept.take(2, 1000);
      // waits for the fresh one's starts to leave the second, not for an hour
      expect(!refused.ok && refused.waitMs).toBeLessThanOrEqual(1001);
    } finally {
      spy.mockRestore();
    }
  });

  it('a start dated after now (the clock stepped back) counts as now, not until the clock gets there', async () => {
    const path = pacePath(await tempDir(), 'http://127.0.0.1:6', 'fp');
    const t = Date.now();
    let now = t;
    const pace = new SharedPace(path, undefined, () => now);
    for (const x of [pace.take(2, 1000), pace.take(2, 1000)]) pace.markSent(x.ok ? x.id : 'refused');
    now = t - 3_600_000;
    const refused = pace.take(2, 1000);
    expect(!refused.ok && refused.waitMs).toBeLessThanOrEqual(1001);
    now += 1001;
    expect(pace.take(2, 1000).ok).toBe(true);
  });

  it('two limiters sharing the file keep their combined starts within N per window + margin', async () => {
    const path = pacePath(await tempDir(), 'http://127.0.0.1:2', 'fp');
    const windowMs = 200;
    const paces = [new SharedPace(path), new SharedPace(path)];
    const limiters = paces.map((shared) => new SlidingWindowLimiter({ perWindow: 3, windowMs, safetyMarginMs: 10, shared }));
    const sent = await startThrough(limiters, 6);
    expect(sent).toHaveLength(12);
    // the promise, on the times the pace counts (marked sent): at most 3 in any 200 ms
    expect(mostInWindow(sent, windowMs)).toBeLessThanOrEqual(3);
    // every start written as sent, so that no deferred write lands in the folder while it is removed
    const pending = () => (JSON.parse(readFileSync(path, 'utf8')) as { starts: { p?: 1 }[] }).starts.some((x) => x.p);
    await until(() => (paces.forEach((p) => p.flush()), !pending()), 5000, 'the starts written as sent');
  });

  it('a state folder that cannot be used: told once, and this process paces alone', async () => {
    const dir = await tempDir();
    await writeFile(join(dir, 'pace'), 'a file where the folder should be');
    const errors: Error[] = [];
    const pace = new SharedPace(pacePath(dir, 'http://127.0.0.1:3', 'fp'), (e) => errors.push(e));
    expect(pace.take(1, 1000).ok).toBe(true);
    expect(pace.take(1, 1000).ok).toBe(true);
    expect(errors).toHaveLength(1);
    expect(pace.failed).toBeDefined();
  });
});

describe('the monthly count of a key across processes (quota.ts)', () => {
  it('two counters on one usage file, flushing at once, add up exactly', async () => {
    const dir = await tempDir();
    const a = new UsageCounter({ stateDir: dir, flushMs: 0 });
    const b = new UsageCounter({ stateDir: dir, flushMs: 0 });
    const rounds = 40;
    await Promise.all(
      [a, b].map(async (c, k) => {
        for (let i = 0; i < rounds; i++) {
          c.count('fp', k + 1);
          await c.flush();
        }
      }),
    );
    const month = monthOf(new Date());
    const file = JSON.parse(await readFile(join(dir, 'usage.json'), 'utf8')) as {
      keys: Record<string, { months: Record<string, number> }>;
    };
    expect(file.keys.fp!.months[month]).toBe(rounds * 3);
    expect((await new UsageCounter({ stateDir: dir }).usage('fp')).used).toBe(rounds * 3);
  });

  it("a watch folder's state and a person's run on this host: one count and one pace for the key", async () => {
    const io = { cwd: await tempDir(), env: { PAYOUT_BATCH_STATE_DIR: await tempDir(), PAYOUT_API_KEY: 'sk_sandbox_one_key_1' } };
    const open = (stateRoot?: string) =>
      openConnection({ 'base-url': 'http://127.0.0.1:9' }, io as unknown as CliIO, createLogger({ level: 'silent' }), {
        stateRoot,
      });
    const watch = await open(join(await tempDir(), '.state'));
    const person = await open();
    const fp = watch.client.apiKey.fingerprint;
    watch.usage!.count(fp, 3);
    await watch.close();
    expect((await person.client.quotaUsage())!.used).toBe(3);
    expect(person.usage!.stateDir).toBe(watch.usage!.stateDir);
    await person.close();
    // a user with no per-user folder to write (a service account's HOME): the ledger's folder, as before
    const file = join(await tempDir(), 'a-file');
    await writeFile(file, '');
    const stateRoot = await tempDir();
    const homeless = { ...io, env: { ...io.env, PAYOUT_BATCH_STATE_DIR: join(file, 'state') } };
    const conn = await openConnection(
      { 'base-url': 'http://127.0.0.1:9' },
      homeless as unknown as CliIO,
      createLogger({ level: 'silent' }),
      {
        stateRoot,
      },
    );
    expect(conn.usage!.stateDir).toBe(stateRoot);
    await conn.close();
  });
});
