// `listen` holds <state>/listen.lock for its whole life, marked every 10 s; another host breaks it
// after 60 s unmarked. Its heartbeat used to ignore a failed mark and mark whatever record held the
// lock: after a minute of failed marks another host's listen took the state folder while this one
// still applied statuses to the same results files. Now, the lock gone, another's or not marked, it
// takes no more deliveries (503: the service sends them again), applies nothing more, says why and
// what to do, and the CLI exits 4 (README, exit codes: as for a team ledger lost).
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { Failure } from '../files/failing-fs.ts';

const failing = vi.hoisted(() => new Map<string, Failure>());
vi.mock('node:fs', async (real) => (await import('../files/failing-fs.ts')).failingFs(await real(), failing));

const { startListener } = await import('../../src/follow-up/webhook-receiver.ts');
const { createLogger } = await import('../../src/log.ts');
const { readOwner } = await import('../../src/files/lock.ts');
const { main } = await import('../../src/cli/main.ts');
const { writeOwner } = await import('../files/owner.ts');
const { cleanEnv, listenTeardown, postStatusChange, until } = await import('./helpers.ts');

const SECRET = 'whsec_lock_lost_0123456789abcdef';
const t = listenTeardown('pb-listen-lock-lost-');
afterEach(() => {
  failing.clear();
  vi.useRealTimers();
});

const THEIRS = { pid: 4242, host: 'other-host', startedAt: '2026-12-01T09:00:00.000Z', purpose: 'listen' };

/** A listener on a fresh state folder, its heartbeat on a fake clock; its log lines. */
async function listening() {
  const stateDir = join(await t.dirs.make(), 'listen');
  const logs: Record<string, unknown>[] = [];
  const logger = createLogger({ destination: { write: (l: string) => void logs.push(JSON.parse(l) as Record<string, unknown>) } });
  vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
  t.listener = await startListener({ port: 0, secret: SECRET, stateDir, logger });
  const inbox = () => readFileSync(join(stateDir, 'inbox.jsonl'), 'utf8');
  return { listener: t.listener, lock: join(stateDir, 'listen.lock'), logs, inbox };
}

describe('listen whose listen.lock is no longer its own', () => {
  it('taken by another host: refuses deliveries with 503, records none, says why, leaves the other its lock', async () => {
    const { listener, lock, logs, inbox } = await listening();
    expect((await postStatusChange(listener.url, SECRET, 'po_before', ['PENDING', 'PROCESSING'])).status).toBe(200);
    vi.advanceTimersByTime(10_000);
    expect((await postStatusChange(listener.url, SECRET, 'po_marked', ['PENDING', 'PROCESSING'])).status).toBe(200);

    writeOwner(lock, THEIRS); // (broken as stale by another host, and retaken)
    vi.advanceTimersByTime(10_000);
    expect(await listener.lockLost).toBe(`${lock} is held by pid 4242 on other-host since 2026-12-01T09:00:00.000Z (listen)`);
    const r = await postStatusChange(listener.url, SECRET, 'po_after', ['PENDING', 'PROCESSING']);
    expect(r.status).toBe(503);
    expect(inbox()).toContain('po_marked');
    expect(inbox()).not.toContain('po_after');
    expect(logs.find((l) => l.level === 50)).toMatchObject({
      msg: expect.stringMatching(/^listen.lock lost: deliveries are refused .* start it again/),
      why: `${lock} is held by pid 4242 on other-host since 2026-12-01T09:00:00.000Z (listen)`,
    });
    await listener.close();
    t.listener = undefined;
    expect(readOwner(lock)).toEqual(THEIRS);
  });

  it('a mark that fails (EIO): refuses deliveries with 503 and says why', async () => {
    const { listener, lock, inbox } = await listening();
    failing.set('utimesSync', { path: lock, code: 'EIO' });
    vi.advanceTimersByTime(10_000);
    expect(await listener.lockLost).toBe(`${lock} cannot be marked as in use (EIO)`);
    expect((await postStatusChange(listener.url, SECRET, 'po_after', ['PENDING', 'PROCESSING'])).status).toBe(503);
    expect(inbox()).not.toContain('po_after');
  });

  it('the CLI stops and exits 4', async () => {
    const cwd = await t.dirs.make();
    writeFileSync(join(cwd, 'secret'), SECRET, { mode: 0o600 });
    let out = '';
    let err = '';
    const stdout = new PassThrough().on('data', (c: Buffer) => (out += c.toString()));
    const stderr = new PassThrough().on('data', (c: Buffer) => (err += c.toString()));
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    const code = main(['listen', '--port', '0', '--secret-file', 'secret', '--state-dir', 'state', '--log-format', 'json'], {
      stdout,
      stderr,
      stdin: Readable.from([]),
      env: cleanEnv(),
      cwd,
      stopSignal: new Promise(() => {}),
    });
    await until(() => out.includes('Listening on') && vi.getTimerCount() > 0, 10_000, 'the listener');
    let ended = false;
    void code.finally(() => (ended = true));
    writeOwner(join(cwd, 'state', 'listen.lock'), THEIRS);
    vi.advanceTimersByTime(10_000);
    await until(() => ended, 10_000, 'the listener to stop');
    expect(await code).toBe(4);
    expect(err).toContain('listen.lock lost');
    expect(out).toMatch(/Stopped: 0 accepted/);
    expect(readOwner(join(cwd, 'state', 'listen.lock'))).toEqual(THEIRS);
  });
});
