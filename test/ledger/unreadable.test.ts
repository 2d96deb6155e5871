// A file ledger's folder this user cannot list (EACCES after a chmod 300, EIO, ENOTDIR) is not a
// ledger of no batches: a run used to see no earlier batch, so a reference another batch paid was
// sent again (paid twice where the service keeps keys per API key), and retry and status lost the
// batch. It refuses, naming the folder and what to do. (root lists any folder: the refusals are made
// here as they would be.)
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';

const denied = vi.hoisted(() => ({ list: '' }));
vi.mock('node:fs', async (importOriginal) => {
  const real = await importOriginal<typeof import('node:fs')>();
  const refuse = (path: unknown, what: string) =>
    Object.assign(new Error(`EACCES: permission denied, ${what} '${String(path)}'`), { code: 'EACCES' });
  const readdirSync = ((path: string, ...o: never[]) => {
    if (denied.list && String(path) === denied.list) throw refuse(path, 'scandir');
    return real.readdirSync(path, ...o);
  }) as typeof real.readdirSync;
  return { ...real, readdirSync, default: { ...real, readdirSync } };
});

const { FileLedger } = await import('../../src/ledger/file.ts');
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
    denied.list = folder;
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
      denied.list = '';
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
