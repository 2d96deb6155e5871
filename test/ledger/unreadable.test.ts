// A file ledger's folder this user cannot list (EACCES after a chmod 300, EIO, ENOTDIR) is not a
// ledger of no batches: a run used to see no earlier batch, so a reference another batch paid was
// sent again (paid twice where the service keeps keys per API key), and retry and status lost the
// batch. A reservation that cannot be read or parsed is not "nobody sending". Both refuse, naming the
// path and what to do. (root lists and reads any file: the refusals are made here as they would be.)
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import type { Failure } from '../files/failing-fs.ts';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';

const failing = vi.hoisted(() => new Map<string, Failure>());
vi.mock('node:fs', async (real) => (await import('../files/failing-fs.ts')).failingFs(await real(), failing));

const { FileLedger, unsafeStateFolder } = await import('../../src/ledger/file.ts');
const { readFileLedgers } = await import('../../src/ledger/import.ts');
const { cliIn, generateCsv, initiates, tempDirs } = await import('../engine/helpers.ts');
const { allPayouts, startSb } = await import('../ops/helpers.ts');

let sb: Awaited<ReturnType<typeof startSb>>;
const dirs = tempDirs('pb-ledger-unreadable-');
beforeAll(async () => {
  sb = await startSb({ monthlyQuota: null });
});
afterAll(async () => {
  await sb?.close();
  await dirs.remove();
});

describe('a ledger folder this user cannot list', () => {
  it('refuses run, retry and status, naming the folder, instead of sending again what an earlier batch paid', async () => {
    const dir = await dirs.make();
    const alice = cliIn(dir, sb.url);
    // (another API key of the business: where the service keeps keys per API key, key 1 of a reference is new under it)
    const bob = cliIn(dir, sb.url, { PAYOUT_API_KEY: 'sk_sandbox_acme_secondary' });
    writeFileSync(join(dir, 'a.csv'), generateCsv({ rows: 2, currencies: ['GBP'], prefix: 'UNL' }));
    expect((await alice.inProcess('run', 'a.csv', '--yes')).code).toBe(0);
    const folder = join(alice.state, 'ledgers', readdirSync(join(alice.state, 'ledgers'))[0]!);
    const batchA = readdirSync(folder)[0]!.slice(0, 16);
    const paid = (await allPayouts(sb)).length;
    const sent = initiates(sb).length;

    // the same two references and one more, in another file (another batch)
    writeFileSync(join(dir, 'b.csv'), generateCsv({ rows: 3, currencies: ['GBP'], prefix: 'UNL' }));
    failing.set('readdirSync', { path: folder, code: 'EACCES' });
    try {
      const b = await bob.inProcess('run', 'b.csv', '--yes');
      expect(b.code).toBe(3);
      expect(b.stderr).toContain(`refused: cannot list ${folder} (EACCES)`);
      expect(b.stderr).toMatch(/Nothing was sent/);
      expect(initiates(sb).length).toBe(sent);
      expect((await allPayouts(sb)).length).toBe(paid);

      const retry = await alice.inProcess('retry', 'a.results.csv', '--yes');
      expect(retry.code).toBe(3);
      expect(retry.stderr).toContain(`cannot list ${folder} (EACCES)`);
      const status = await alice.inProcess('status', batchA);
      expect(status.code).toBe(3);
      expect(status.stderr).toContain(`cannot list ${folder} (EACCES)`);
    } finally {
      failing.clear();
    }
    // listed again: the references are refused as paid, by the ledger, before any request
    const again = await bob.inProcess('run', 'b.csv', '--yes');
    expect(again.stderr).toContain('were already sent by another batch');
    expect(initiates(sb).length).toBe(sent);
  });

  it('a ledger folder that is a file (ENOTDIR) is no ledger of no batches', async () => {
    const dir = await dirs.make();
    writeFileSync(join(dir, 'ledger'), '');
    await expect(new FileLedger('https://gateway.example.com', join(dir, 'ledger')).batches()).rejects.toMatchObject({
      name: 'BatchRefused',
      message: expect.stringContaining(`cannot list ${join(dir, 'ledger')} (ENOTDIR)`),
    });
    // (a folder not made yet is a ledger of no batches: the account's first run)
    expect(await new FileLedger('https://gateway.example.com', join(dir, 'none')).batches()).toEqual([]);
  });

  it('ledger import refuses it, instead of importing none of its batches (the team ledger would then pay them again)', async () => {
    const state = await dirs.make();
    mkdirSync(join(state, 'ledgers'));
    writeFileSync(join(state, 'ledgers', 'gateway.example.com-0123456789ab'), '');
    expect(() => readFileLedgers(state, ['https://gateway.example.com'])).toThrow(
      `cannot list ${join(state, 'ledgers', 'gateway.example.com-0123456789ab')} (ENOTDIR)`,
    );
  });
});

describe('a reservation that cannot be read or parsed', () => {
  const reserve = (ledger: InstanceType<typeof FileLedger>) =>
    ledger.reserve({ batchId: 'a'.repeat(64), file: '/in/a.csv', command: 'run', fresh: ['R1'] });

  it('refuses, naming the file and how to clear it, instead of reading nobody sending', async () => {
    const ledger = new FileLedger('https://gateway.example.com', join(await dirs.make(), 'ledger'));
    mkdirSync(ledger.dir, { recursive: true });
    const other = join(ledger.dir, `${'b'.repeat(16)}.reserve.json`);
    // another batch's reservation of R1, as reserve() writes it (its owner not known until it is read)
    const owner = { pid: process.ppid, host: hostname(), startedAt: new Date().toISOString() };
    writeFileSync(other, JSON.stringify({ batchId: 'b'.repeat(64), file: '/in/b.csv', command: 'run', refs: ['R1'], owner }));
    failing.set('readFileSync', { path: other, code: 'EACCES' });
    try {
      await expect(reserve(ledger)).rejects.toMatchObject({
        name: 'BatchRefused',
        reason: 'reservation-unreadable',
        message: expect.stringContaining(`cannot read ${other} (EACCES)`),
      });
    } finally {
      failing.clear();
    }
    for (const torn of ['', '{"batchId": "bbbb', JSON.stringify({ batchId: 'b'.repeat(64) })]) {
      writeFileSync(other, torn);
      await expect(reserve(ledger)).rejects.toMatchObject({
        reason: 'reservation-unreadable',
        message: expect.stringMatching(new RegExp(`${other} is not a reservation .*remove it`)),
      });
    }
  });
});

describe('a state folder whose owner and mode cannot be read', () => {
  it('is refused, not taken as a folder nobody made yet whose trust need not be checked', async () => {
    const dir = await dirs.make();
    const alice = cliIn(dir, sb.url);
    writeFileSync(join(dir, 'c.csv'), generateCsv({ rows: 1, currencies: ['GBP'], prefix: 'LST' }));
    expect((await alice.inProcess('run', 'c.csv', '--yes')).code).toBe(0);
    const ledgers = join(alice.state, 'ledgers');
    const sent = initiates(sb).length;
    writeFileSync(join(dir, 'd.csv'), generateCsv({ rows: 1, currencies: ['GBP'], prefix: 'LSU' }));
    failing.set('lstatSync', { path: ledgers, code: 'EIO' });
    try {
      expect(unsafeStateFolder(alice.state)).toContain(`the state folder ${ledgers} cannot be read (EIO)`);
      const d = await alice.inProcess('run', 'd.csv', '--yes');
      expect(d.code).toBe(3);
      expect(d.stderr).toContain(`${ledgers} cannot be read (EIO)`);
      expect(initiates(sb).length).toBe(sent);
    } finally {
      failing.clear();
    }
    // (a folder not made yet is still no refusal: the first run makes it 0700)
    expect(unsafeStateFolder(join(dir, 'none'))).toBeUndefined();
  });
});
