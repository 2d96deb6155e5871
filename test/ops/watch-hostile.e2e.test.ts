// `watch` against whoever can write its inbox (issue 17, items 3 and 7), in process against the
// sandbox over real HTTP: links in the inbox and among the documents are refused unread, a file
// that changes after its claim is refused before any payout (or reported when rows were under
// way), documents stay in DIR/documents, and a live owner's claim is never taken over.
import { spawn, type ChildProcess } from 'node:child_process';
import {
  linkSync,
  appendFileSync,
  copyFileSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { hostname } from 'node:os';
import { PassThrough, Readable } from 'node:stream';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { acquireLock, LockBusy, pidStartOf } from '../../src/files/lock.ts';
import { writeOwner } from '../files/owner.ts';
import { WatchConfig } from '../../src/watch/config.ts';
import { watchFolder, type WatchResult } from '../../src/watch/watcher.ts';
import type { LocalSandbox } from '../../src/sandbox/start-sandbox.ts';
import { generateCsv, tempDirs } from '../engine/helpers.ts';
import { allPayouts, cleanEnv, connectionTo, ROOT, runCli, startSb, until } from './helpers.ts';
import { runMain } from '../engine/helpers.ts';
import { main } from '../../src/cli/main.ts';

const dirs = tempDirs('pb-watch-hostile-');
let sb: LocalSandbox | undefined;
const children: ChildProcess[] = [];
afterEach(async () => {
  for (const c of children.splice(0)) c.kill('SIGKILL');
  await sb?.close();
  sb = undefined;
  await dirs.remove();
});

async function folder(): Promise<string> {
  const dir = await dirs.make();
  mkdirSync(join(dir, 'inbox'));
  return dir;
}

const run = (
  dir: string,
  extra: Partial<WatchConfig> = {},
  o: { onClaim?: (f: string) => void; logger?: Logger; fetch?: typeof fetch } = {},
) =>
  watchFolder({
    dir,
    config: WatchConfig.parse({ environment: 'sandbox', settleSeconds: 0, ...extra }),
    conn: connectionTo(sb!, o.fetch),
    once: true,
    crashWaitMs: 0,
    onClaim: o.onClaim,
    logger: o.logger,
  });

const csv = (rows: number, prefix: string) => generateCsv({ rows, currencies: ['GBP'], prefix });
/** A CSV whose rows name documents: the sample's, rewritten to `docs(i)`. */
const csvWithDocuments = (rows: number, prefix: string, doc: (i: number) => string) => {
  const lines = generateCsv({ rows, currencies: ['GBP'], prefix, documentsEvery: 1 })
    .trimEnd()
    .split('\n');
  const cols = lines[0]!.split(',');
  const d = cols.indexOf('documents');
  return (
    [
      lines[0],
      ...lines.slice(1).map((l, i) => {
        const c = l.split(',');
        c[d] = doc(i);
        return c.join(',');
      }),
    ].join('\n') + '\n'
  );
};
const sample = (name = 'invoice-de-c1.pdf') => join(ROOT, 'samples/documents', name);
const sandboxRequests = () => sb!.requestLog().length;
const initiates = () => sb!.requestLog().filter((r) => r.route === 'initiate').length;
/** A logger that runs `write` once, when the first row is done: a writer at work while payouts are under way. */
function onFirstRowDone(write: () => void) {
  let done = false;
  const info = (_o: unknown, msg?: string) => {
    if (msg !== 'row done' || done) return;
    done = true;
    write();
  };
  return { logger: { info, warn: () => {}, error: () => {} } as unknown as Logger, done: () => done };
}
const only = (r: WatchResult) => {
  expect(r.files).toHaveLength(1);
  return r.files[0]!;
};

describe('watch: links are never followed', () => {
  it('a link in the inbox (to a batch elsewhere, to /etc/passwd, dangling) is refused unread: failed/, exit 3, nothing sent', async () => {
    sb = await startSb();
    const dir = await folder();
    const elsewhere = join(await dirs.make(), 'payroll.csv');
    const text = csv(3, 'LNK');
    writeFileSync(elsewhere, text);
    symlinkSync(elsewhere, join(dir, 'inbox', 'payroll.csv'));
    symlinkSync('/etc/passwd', join(dir, 'inbox', 'passwd.csv'));
    symlinkSync(join(dir, 'nowhere.csv'), join(dir, 'inbox', 'dangling.csv'));

    const r = await run(dir);
    expect(r.kind).toBe('refused');
    expect(r.files.map((f) => [f.name, f.outcome, f.kind]).sort()).toEqual([
      ['dangling.csv', 'failed', 'refused'],
      ['passwd.csv', 'failed', 'refused'],
      ['payroll.csv', 'failed', 'refused'],
    ]);
    const reason = (n: string) => r.files.find((f) => f.name === n)!.reason;
    expect(reason('payroll.csv')).toBe(
      `refused: inbox/payroll.csv is a symbolic link (to ${elsewhere}): links are never followed; copy the file itself into the inbox. Nothing was read or sent.`,
    );
    expect(reason('passwd.csv')).toContain('inbox/passwd.csv is a symbolic link (to /etc/passwd)');
    expect(reason('dangling.csv')).toContain('is a symbolic link');
    expect(sandboxRequests()).toBe(0);
    // The links are kept in failed/ as links, with the reason; their targets are untouched.
    const f = r.files.find((x) => x.name === 'payroll.csv')!;
    expect(lstatSync(join(f.folder, 'payroll.csv')).isSymbolicLink()).toBe(true);
    expect(JSON.parse(readFileSync(join(f.folder, 'payroll.summary.json'), 'utf8'))).toMatchObject({ outcome: 'failed', kind: 'refused' });
    expect(readFileSync(elsewhere, 'utf8')).toBe(text);
    expect(readdirSync(join(dir, 'inbox'))).toEqual([]);
  });
});

describe('watch: a folder named like a batch is refused, never skipped silently', () => {
  it('inbox/payroll.csv/ goes to failed/ with the reason, exit 3, nothing read or sent; a folder a writer stages in is left alone', async () => {
    sb = await startSb();
    const dir = await folder();
    mkdirSync(join(dir, 'inbox', 'payroll.csv'));
    writeFileSync(join(dir, 'inbox', 'payroll.csv', 'payroll.csv'), csv(2, 'DIR'));
    mkdirSync(join(dir, 'inbox', 'staging'));
    writeFileSync(join(dir, 'inbox', 'staging', 'next.csv'), csv(2, 'STG'));

    const r = await run(dir);
    expect(r.kind).toBe('refused');
    const f = only(r);
    expect([f.name, f.outcome, f.kind]).toEqual(['payroll.csv', 'failed', 'refused']);
    expect(f.reason).toBe(
      'refused: inbox/payroll.csv is a folder, not a file: drop the file itself ' +
        '(a folder named otherwise is left alone, for a writer to stage files in). Nothing was read or sent.',
    );
    expect(sandboxRequests()).toBe(0);
    // kept whole in failed/, with the reason beside it
    expect(readdirSync(join(f.folder, 'payroll.csv'))).toEqual(['payroll.csv']);
    expect(JSON.parse(readFileSync(join(f.folder, 'payroll.summary.json'), 'utf8'))).toMatchObject({ outcome: 'failed', kind: 'refused' });
    expect(readdirSync(join(dir, 'inbox'))).toEqual(['staging']);
  });
});

describe('watch: hard links are refused (issue 29)', () => {
  it('a file with a second name outside the inbox is refused unread: failed/, exit 3, nothing sent', async () => {
    sb = await startSb();
    const dir = await folder();
    const elsewhere = join(await dirs.make(), 'payroll.csv');
    writeFileSync(elsewhere, csv(3, 'HL'));
    linkSync(elsewhere, join(dir, 'inbox', 'payroll.csv'));

    const r = await run(dir);
    expect(r.kind).toBe('refused');
    expect(r.files.map((f) => [f.name, f.outcome, f.kind])).toEqual([['payroll.csv', 'failed', 'refused']]);
    expect(r.files[0]!.reason).toContain('inbox/payroll.csv is a file with 2 hard links');
    expect(sandboxRequests()).toBe(0);
  });
});

describe('watch --once (the CLI, as cron runs it)', () => {
  it('prints the refusal of a link and exits 3; nothing is sent', async () => {
    sb = await startSb();
    const dir = await folder();
    writeFileSync(join(dir, 'payout-batch.json'), JSON.stringify({ environment: 'sandbox', baseUrl: sb.url, settleSeconds: 0 }));
    const elsewhere = join(await dirs.make(), 'payroll.csv');
    writeFileSync(elsewhere, csv(2, 'CLI'));
    symlinkSync(elsewhere, join(dir, 'inbox', 'payroll.csv'));
    const r = await runCli(['watch', dir, '--once'], {
      cwd: dir,
      env: cleanEnv({ PAYOUT_BATCH_STATE_DIR: join(dir, 'usage') }),
      timeoutMs: 60_000,
    });
    expect(r.code, r.stderr.slice(-1500)).toBe(3);
    expect(r.stdout).toContain(
      `payroll.csv: failed: refused: inbox/payroll.csv is a symbolic link (to ${elsewhere}): links are never followed`,
    );
    expect(sandboxRequests()).toBe(0);
  });
});

describe('watch: its own folders and its start (issue 43, items 14 and 17)', () => {
  const configured = async () => {
    sb = await startSb();
    const dir = await dirs.make();
    writeFileSync(
      join(dir, 'payout-batch.json'),
      JSON.stringify({ environment: 'sandbox', baseUrl: sb.url, settleSeconds: 0, pollSeconds: 7 }),
    );
    return dir;
  };
  const env = (dir: string) => cleanEnv({ PAYOUT_BATCH_STATE_DIR: join(dir, 'usage') });

  it('refuses an inbox that is itself a symbolic link, naming it: exit 3, nothing read or sent', async () => {
    const dir = await configured();
    const elsewhere = await dirs.make();
    writeFileSync(join(elsewhere, 'payroll.csv'), csv(2, 'LIN'));
    symlinkSync(elsewhere, join(dir, 'inbox'), 'dir');
    const r = await runMain(['watch', dir, '--once'], { cwd: dir, env: env(dir) });
    expect(r.code).toBe(3);
    expect(r.stderr).toContain(`${join(dir, 'inbox')} is a symbolic link (to ${elsewhere}): links are never followed`);
    expect(readdirSync(elsewhere)).toEqual(['payroll.csv']);
    expect(sandboxRequests()).toBe(0);
  });

  it('in the foreground, says at once which inbox it watches, how often and what it does', async () => {
    const dir = await configured();
    const err = new PassThrough();
    let said = '';
    err.on('data', (c: Buffer) => (said += c.toString('utf8')));
    // (asked to stop from the start: the line comes before the first tick)
    const io = { stdout: new PassThrough(), stderr: err, stdin: Readable.from([]), env: env(dir), cwd: dir, stopSignal: Promise.resolve() };
    expect(await main(['watch', dir], io)).toBe(0);
    expect(said).toContain(`Watching ${join(dir, 'inbox')} every 7 s (sandbox): a file is taken once unchanged for 0 s`);
    expect(said).toContain('whole or not at all, then moved to done/ or failed/');
  });
});

describe('watch: documents stay in DIR/documents', () => {
  it('an absolute path elsewhere, a ".." out of the folder and a link inside it are refused before anything is sent; a file in it is paid', async () => {
    sb = await startSb();
    const dir = await folder();
    mkdirSync(join(dir, 'documents'));
    copyFileSync(sample(), join(dir, 'documents', 'invoice.pdf'));
    symlinkSync(sample('invoice-eu-c1.pdf'), join(dir, 'documents', 'linked.pdf'));
    symlinkSync('/etc/passwd', join(dir, 'documents', 'passwd.pdf'));

    writeFileSync(
      join(dir, 'inbox', 'outside.csv'),
      csvWithDocuments(2, 'DOCA', () => sample()),
    );
    const outside = only(await run(dir));
    expect(outside).toMatchObject({ name: 'outside.csv', outcome: 'failed', kind: 'refused' });
    // The rows first (each names a document outside), then where documents may come from, and how
    // to get them there: never a setting that loosens the rule (issue 31).
    expect(outside.reason).toBe(
      `refused: 2 invalid rows (rows 2, 3): a watch pays a file whole or not at all. Every problem (row, column, what would be valid) ` +
        `is in ${join(outside.folder, 'outside.summary.json')} and the log: fix the rows, then drop the file again. ` +
        `Documents may only come from ${join(dir, 'documents')}, never through a symbolic link: ` +
        `"${sample()}" is outside ${join(dir, 'documents')}. Copy each into ${join(dir, 'documents')} and name it documents/NAME in the file. Nothing was sent.`,
    );

    writeFileSync(
      join(dir, 'inbox', 'tricks.csv'),
      csvWithDocuments(3, 'DOCB', (i) => ['documents/../../../etc/hostname', 'documents/linked.pdf', 'documents/passwd.pdf'][i]!),
    );
    const tricks = only(await run(dir));
    expect(tricks).toMatchObject({ name: 'tricks.csv', outcome: 'failed', kind: 'refused' });
    expect(tricks.reason).toContain('"documents/../../../etc/hostname" is outside');
    expect(tricks.reason).toContain('"documents/linked.pdf" is a symbolic link (linked.pdf): links are never followed');
    expect(tricks.reason).toContain('"documents/passwd.pdf" is a symbolic link (passwd.pdf)');
    expect(sandboxRequests()).toBe(0);

    writeFileSync(
      join(dir, 'inbox', 'good.csv'),
      csvWithDocuments(2, 'DOCC', () => 'documents/invoice.pdf'),
    );
    const good = only(await run(dir));
    expect(good, good.reason).toMatchObject({ name: 'good.csv', outcome: 'done', kind: 'ok' });
    expect(sb.requestLog().filter((r) => r.route === 'uploadUrl').length).toBeGreaterThan(0);
    expect(await allPayouts(sb)).toHaveLength(2);
  });

  it('"allowDocumentsOutside": true lets a file name documents elsewhere, still never through a link', async () => {
    sb = await startSb();
    const dir = await folder();
    const elsewhere = await dirs.make();
    symlinkSync(sample(), join(elsewhere, 'linked.pdf'));
    writeFileSync(
      join(dir, 'inbox', 'linked.csv'),
      csvWithDocuments(1, 'DOCD', () => join(elsewhere, 'linked.pdf')),
    );
    const linked = only(await run(dir, { allowDocumentsOutside: true }));
    expect(linked).toMatchObject({ outcome: 'failed', kind: 'refused' });
    expect(linked.reason).toContain(`"${join(elsewhere, 'linked.pdf')}" is a symbolic link: links are never followed`);
    expect(sandboxRequests()).toBe(0);

    writeFileSync(
      join(dir, 'inbox', 'abs.csv'),
      csvWithDocuments(2, 'DOCE', () => sample()),
    );
    const abs = only(await run(dir, { allowDocumentsOutside: true }));
    expect(abs, abs.reason).toMatchObject({ name: 'abs.csv', outcome: 'done', kind: 'ok' });
    expect(await allPayouts(sb)).toHaveLength(2);
  });
});

describe('watch: a file still being written', () => {
  it('a file that grows after its claim (a writer that paused past settleSeconds) is refused as changed, nothing sent', async () => {
    sb = await startSb();
    const dir = await folder();
    const full = csv(6, 'GROW').split('\n');
    const path = join(dir, 'inbox', 'payroll.csv');
    writeFileSync(path, full.slice(0, 4).join('\n') + '\n'); // the header and 3 rows, then a pause
    const r = await run(dir, {}, { onClaim: (claimed) => appendFileSync(claimed, full.slice(4).join('\n')) });
    const f = only(r);
    expect(r.kind).toBe('refused');
    expect(f).toMatchObject({ name: 'payroll.csv', outcome: 'failed', kind: 'refused' });
    expect(f.reason).toMatch(
      /^refused: payroll\.csv changed after it was claimed \(its size went from \d+ to \d+ bytes\)\. Nothing was sent\. A writer must finish the file, then create payroll\.csv\.ready/,
    );
    expect(sandboxRequests()).toBe(0);
    expect(readdirSync(join(dir, 'failed'))).toHaveLength(1);
  });

  it('a change while the engine reads it is caught at the plan: the run stops before its first payout', async () => {
    sb = await startSb();
    const dir = await folder();
    const path = join(dir, 'inbox', 'payroll.csv');
    writeFileSync(path, csv(3, 'PLAN'));
    let claimed = '';
    let appended = false;
    // The engine's first request (its checks before the plan) comes once it has read the file.
    const appendOnFirstRequest: typeof fetch = (input, init) => {
      if (!appended && claimed) {
        appended = true;
        appendFileSync(claimed, csv(1, 'LATE').split('\n')[1] + '\n');
      }
      return fetch(input, init);
    };
    const r = await run(dir, {}, { onClaim: (f) => void (claimed = f), fetch: appendOnFirstRequest });
    const f = only(r);
    expect(appended).toBe(true);
    expect(f).toMatchObject({ outcome: 'failed', kind: 'refused' });
    expect(f.reason).toMatch(
      /^refused: payroll\.csv changed after it was claimed \(its size went from \d+ to \d+ bytes\)\. Nothing was sent\./,
    );
    expect(initiates()).toBe(0);
    expect(await allPayouts(sb)).toHaveLength(0);
  });

  it('rows added once payouts are under way are reported, not silently left: failed/, exit 1, the rows read paid once', async () => {
    sb = await startSb();
    const dir = await folder();
    writeFileSync(join(dir, 'inbox', 'payroll.csv'), csv(4, 'RUN'));
    let claimed = '';
    const writer = onFirstRowDone(() => appendFileSync(claimed, csv(2, 'LATE').split('\n').slice(1).join('\n')));
    const r = await run(dir, {}, { onClaim: (f) => void (claimed = f), logger: writer.logger });
    const f = only(r);
    expect(writer.done()).toBe(true);
    expect(r.kind).toBe('rows-failed');
    expect(f).toMatchObject({ outcome: 'failed', kind: 'rows-failed' });
    expect(f.reason).toMatch(
      /^payroll\.csv changed while it was processed \(its size went from \d+ to \d+ bytes\): the rows read at the claim were processed \(4 created, see payroll\.results\.csv\); anything written after was NOT processed: send it in a new file\./,
    );
    expect(await allPayouts(sb)).toHaveLength(4);
  });

  it('a file edited in place once payouts are under way (same size, mtime put back) is found by its digest: failed/, both digests named', async () => {
    sb = await startSb();
    const dir = await folder();
    const path = join(dir, 'inbox', 'payroll.csv');
    writeFileSync(path, csv(4, 'EDT'));
    const old = new Date(Math.floor(Date.now() / 1000) * 1000 - 3_600_000); // a whole second: put back exactly
    utimesSync(path, old, old);
    let claimed = '';
    const writer = onFirstRowDone(() => {
      writeFileSync(claimed, readFileSync(claimed, 'utf8').replace(/EDT/g, 'EDX'));
      utimesSync(claimed, old, old);
    });
    const r = await run(dir, {}, { onClaim: (f) => void (claimed = f), logger: writer.logger });
    const f = only(r);
    expect(writer.done()).toBe(true);
    expect(f).toMatchObject({ outcome: 'failed', kind: 'rows-failed' });
    const summary = JSON.parse(readFileSync(join(f.folder, 'payroll.summary.json'), 'utf8')) as { sha256: string; reason: string };
    expect(summary.reason).toMatch(
      new RegExp(
        `^payroll\\.csv changed while it was processed \\(its content was edited in place: sha256 ${summary.sha256} at the claim, [0-9a-f]{64} now\\)`,
      ),
    );
    expect(await allPayouts(sb)).toHaveLength(4);
  });

  it('with "requireReady": true a paused writer\'s file waits for its .ready marker, then is taken whole', async () => {
    sb = await startSb();
    const dir = await folder();
    const full = csv(4, 'RDY');
    const path = join(dir, 'inbox', 'payroll.csv');
    writeFileSync(path, full.slice(0, full.length / 2));
    const old = new Date(Date.now() - 3_600_000);
    utimesSync(path, old, old); // paused for an hour: long past any settleSeconds
    const first = await run(dir, { requireReady: true });
    expect(first).toMatchObject({ kind: 'ok', files: [], notComplete: ['payroll.csv'] });
    expect(sandboxRequests()).toBe(0);
    writeFileSync(path, full);
    writeFileSync(`${path}.ready`, '');
    const second = only(await run(dir, { requireReady: true }));
    expect(second, second.reason).toMatchObject({ outcome: 'done', kind: 'ok' });
    expect(await allPayouts(sb)).toHaveLength(4);
    expect(existsSync(`${path}.ready`)).toBe(false);
  });
});

describe('watch: a claim is never taken over from a live process on this host', () => {
  /** A process that holds a claim and is blocked (stopped): its heartbeat has stopped too. */
  async function blockedOwner(): Promise<number> {
    const child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1e9)'], { stdio: 'ignore' });
    children.push(child);
    await until(() => child.pid !== undefined && pidStartOf(child.pid) !== undefined, 5000, 'the child');
    child.kill('SIGSTOP');
    return child.pid!;
  }
  /** A claim folder as `watch` leaves it, its heartbeat an hour old. */
  function leftClaim(dir: string, name: string, owner: { pid: number; pidStart?: string }, rows: number): string {
    const claimDir = join(dir, 'processing', `20260101T000000Z-abcdef-${name}`);
    mkdirSync(claimDir, { recursive: true });
    writeFileSync(join(claimDir, name), csv(rows, `CLM${owner.pid}`));
    writeFileSync(
      join(claimDir, '.claim.json'),
      JSON.stringify({ name, host: hostname(), claimedAt: new Date(Date.now() - 3_600_000).toISOString(), ...owner }),
    );
    const old = new Date(Date.now() - 3_600_000);
    utimesSync(join(claimDir, '.claim.json'), old, old);
    return claimDir;
  }

  it('a blocked owner keeps its claim whatever its heartbeat; once it is dead the claim is resumed', async () => {
    sb = await startSb();
    const dir = await folder();
    const pid = await blockedOwner();
    const claimDir = leftClaim(dir, 'payroll.csv', { pid, pidStart: pidStartOf(pid) }, 3);
    const r = await run(dir, { claimStaleSeconds: 10 });
    expect(r).toMatchObject({ kind: 'ok', files: [] });
    expect(JSON.parse(readFileSync(join(claimDir, '.claim.json'), 'utf8')).pid).toBe(pid);
    expect(sandboxRequests()).toBe(0);

    const child = children.find((c) => c.pid === pid)!;
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGKILL');
    await exited;
    const resumed = only(await run(dir, { claimStaleSeconds: 10 }));
    expect(resumed, resumed.reason).toMatchObject({ name: 'payroll.csv', outcome: 'done', kind: 'ok', resumed: true });
    expect(await allPayouts(sb)).toHaveLength(3);
  });

  it('a live pid that is another process than the owner (the pid reused after a crash) does not keep the claim', async () => {
    sb = await startSb();
    const dir = await folder();
    const pid = await blockedOwner();
    leftClaim(dir, 'payroll.csv', { pid, pidStart: 'another-start-time' }, 2);
    const r = only(await run(dir));
    expect(r, r.reason).toMatchObject({ outcome: 'done', resumed: true });
    expect(await allPayouts(sb)).toHaveLength(2);
  });

  it('the same rule for lock files: a live holder on this host keeps an old lock; a dead one loses it at once', async () => {
    const dir = await dirs.make();
    const p = join(dir, 'x.lock');
    const pid = await blockedOwner();
    writeOwner(p, { pid, host: hostname(), startedAt: new Date(0).toISOString(), pidStart: pidStartOf(pid) });
    const old = new Date(Date.now() - 3_600_000);
    utimesSync(p, old, old);
    await expect(acquireLock(p, { staleMs: 1000 })).rejects.toBeInstanceOf(LockBusy);
    writeOwner(p, { pid, host: hostname(), startedAt: new Date(0).toISOString(), pidStart: 'another-start-time' });
    (await acquireLock(p, { staleMs: 60_000 })).release();
  });
});
