// Only what is gone is nothing there, for `listen` too. A results file it could not read (EACCES: a
// copy another user made, mode 0600; EIO) used to be taken as holding none of the payouts, and a
// claim folder of a watch it could not list as no claim: the delivery was recorded applied with no
// word, those files' statuses never moving. Now a results file that cannot be read is said (the
// file, the error, the `status` command that brings it up to date), the other files and the
// journals get the change; a claim folder that cannot be listed leaves the delivery unapplied, said,
// applied at the next start. (root reads every file and folder: the errors are made here as the
// system would make them.)
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it, vi } from 'vitest';
import type { Failure } from '../files/failing-fs.ts';

const failing = vi.hoisted(() => ({ fs: new Map<string, Failure>(), promises: new Map<string, Failure>() }));
vi.mock('node:fs', async (real) => (await import('../files/failing-fs.ts')).failingFs(await real(), failing.fs));
vi.mock('node:fs/promises', async (real) => (await import('../files/failing-fs.ts')).failingFs(await real(), failing.promises));

const { startListener } = await import('../../src/follow-up/webhook-receiver.ts');
const { createLogger } = await import('../../src/log.ts');
const { readResults } = await import('../../src/results/results.ts');
const { layout } = await import('../../src/watch/inbox.ts');
const { ledgerJournals, listenTeardown, paidBatch, postStatusChange, startSb } = await import('./helpers.ts');

const SECRET = 'whsec_cannot_read_0123456789abcdef';
const t = listenTeardown('pb-listen-cannot-read-');

const capture = () => {
  const logs: Record<string, unknown>[] = [];
  const logger = createLogger({ destination: { write: (l: string) => void logs.push(JSON.parse(l) as Record<string, unknown>) } });
  return { logs, logger };
};
const statuses = async (file: string) => (await readResults(file)).rows.map((r) => r.result.status);
const inboxLines = (stateDir: string) =>
  readFileSync(join(stateDir, 'inbox.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { t: string; rows?: number });

it('a results file that cannot be read is said, with the command that mends it; the others and the journal get the change', async () => {
  t.sb = await startSb();
  const { dir, results, ids } = await paidBatch(t.sb, { rows: 2, dir: await t.dirs.make() });
  const theirs = join(dir, 'theirs.results.csv');
  copyFileSync(results, theirs);
  const gone = join(dir, 'gone.results.csv'); // (named, never there: nothing to say)
  failing.fs.set('createReadStream', { path: theirs, code: 'EACCES' });
  failing.promises.set('open', { path: theirs, code: 'EACCES' });
  try {
    const { logs, logger } = capture();
    t.listener = await startListener({ port: 0, secret: SECRET, stateDir: join(dir, 'listen'), results: [theirs, gone, results], logger });
    expect((await postStatusChange(t.listener.url, SECRET, ids[0]!, ['PENDING', 'PROCESSING'])).status).toBe(200);
    await t.listener.idle();
    expect(logs.filter((l) => l.level === 40)).toEqual([
      expect.objectContaining({
        file: theirs,
        code: 'EACCES',
        msg: `results file not brought up to date: once it can be read, run payout-batch status ${theirs}`,
      }),
    ]);
  } finally {
    failing.fs.clear();
    failing.promises.clear();
  }
  expect(await statuses(results)).toEqual(['PROCESSING', 'PENDING']);
  expect(await statuses(theirs)).toEqual(['PENDING', 'PENDING']);
  expect(
    ledgerJournals()
      .map((f) => readFileSync(f, 'utf8'))
      .join(''),
  ).toContain(`"payoutId":"${ids[0]}","status":"PROCESSING"`);
});

it('a claim folder that cannot be listed leaves the delivery unapplied, said; the next start applies it', async () => {
  t.sb = await startSb();
  const { results, ids } = await paidBatch(t.sb, { rows: 1, dir: await t.dirs.make() });
  const watch = await t.dirs.make();
  for (const sub of ['inbox', 'processing', 'done', 'failed']) mkdirSync(join(watch, sub));
  const [open, locked] = [join(watch, 'done', 'c1'), join(watch, 'done', 'c2')];
  for (const claim of [open, locked]) {
    mkdirSync(claim);
    copyFileSync(results, join(claim, 'payroll.results.csv'));
  }
  writeFileSync(join(watch, 'done', 'notes.txt'), 'a file, not a claim\n'); // (ENOTDIR: no claim, never an error)
  const o = {
    port: 0,
    secret: SECRET,
    stateDir: join(watch, '.state', 'listen'),
    watchDirs: [{ dir: watch, state: layout(watch, {}).state }],
  };

  failing.fs.set('readdirSync', { path: locked, code: 'EACCES' });
  try {
    const { logs, logger } = capture();
    t.listener = await startListener({ ...o, logger });
    expect((await postStatusChange(t.listener.url, SECRET, ids[0]!, ['PENDING', 'PROCESSING'])).status).toBe(200);
    await t.listener.idle();
    expect(logs.find((l) => l.level === 50)).toMatchObject({
      msg: 'delivery not applied: it is applied again on the next start',
      err: expect.stringContaining(`cannot list ${locked} (EACCES)`),
    });
    await t.listener.close();
    t.listener = undefined;
  } finally {
    failing.fs.clear();
  }
  expect(inboxLines(o.stateDir).map((l) => l.t)).toEqual(['delivery']);
  expect(await statuses(join(open, 'payroll.results.csv'))).toEqual(['PENDING']);

  const { logs, logger } = capture();
  t.listener = await startListener({ ...o, logger });
  await t.listener.idle();
  expect(logs.filter((l) => Number(l.level) >= 40)).toEqual([]);
  expect(inboxLines(o.stateDir)).toMatchObject([{ t: 'delivery' }, { t: 'applied', rows: 2 }]);
  for (const claim of [open, locked]) expect(await statuses(join(claim, 'payroll.results.csv'))).toEqual(['PROCESSING']);
});
