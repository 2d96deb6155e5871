// A host folder or policy file this user may not look at is not "no policy": the account's policy
// could be there, so nothing is sent until the user can read it.
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { startSandbox } from '../../src/sandbox/start-sandbox.ts';
import { TEST_SHAPES } from '../shapes.ts';
import { cleanEnv, initiates, runMain, writeBatch } from '../engine/helpers.ts';

const denied = vi.hoisted(() => ({ path: '', read: '' }));
vi.mock('node:fs', async (importOriginal) => {
  const fs = await importOriginal<typeof import('node:fs')>();
  const refuse = (name: string, path: unknown, then: () => unknown, prefix: string) => {
    if (prefix && String(path).startsWith(prefix))
      throw Object.assign(new Error(`EACCES: permission denied, ${name} '${String(path)}'`), { code: 'EACCES' });
    return then();
  };
  const lstatSync = ((path: string, ...rest: unknown[]) =>
    refuse('lstat', path, () => (fs.lstatSync as (...a: unknown[]) => unknown)(path, ...rest), denied.path)) as typeof fs.lstatSync;
  const readFileSync = ((path: string, ...rest: unknown[]) =>
    refuse('open', path, () => (fs.readFileSync as (...a: unknown[]) => unknown)(path, ...rest), denied.read)) as typeof fs.readFileSync;
  return { ...fs, lstatSync, readFileSync, default: { ...fs, lstatSync, readFileSync } };
});
// (the host folder of an installation that fixes one: a temporary folder, not /etc/payout-batch)
const host = vi.hoisted(() => ({ folder: '', unreadable: false }));
vi.mock('../../src/package-root.ts', async (importOriginal) => ({
  ...(await importOriginal<typeof import('../../src/package-root.ts')>()),
  packageJson: () => {
    if (host.unreadable) throw Object.assign(new Error("EACCES: permission denied, open '.../package.json'"), { code: 'EACCES' });
    return { version: '0.0.0', payoutBatch: { hostFolder: host.folder } };
  },
}));
host.folder = mkdtempSync(join(tmpdir(), 'pb-policy-host-'));

const { hostFolder, hostStore, policyGuard, policyInForce } = await import('../../src/approvals/account-policy.ts');
const { sha256Hex } = await import('../../src/engine/identity.ts');
const { FileLedger } = await import('../../src/ledger/file.ts');

describe('policyInForce, the host folder not readable by this user', () => {
  it('refuses, naming the folder, instead of reading no policy', async () => {
    denied.path = hostFolder();
    try {
      await expect(policyInForce('http://127.0.0.1:4791')).rejects.toMatchObject({ name: 'PolicyError' });
      await expect(policyInForce('http://127.0.0.1:4791')).rejects.toThrow(new RegExp(`${hostFolder()}.*EACCES`));
    } finally {
      denied.path = '';
    }
  });

  it('a policy file, or the record of a team ledger, it may not read (or not JSON) refuses, naming the file', async () => {
    const url = 'http://127.0.0.1:4792';
    const store = hostStore(url);
    await store.write({ account: url, requireApprovals: 1, approvers: [{ name: 'Alice', publicKey: 'a', fingerprint: 'fa' }] }, []);
    denied.read = store.where;
    try {
      await expect(policyInForce(url)).rejects.toMatchObject({
        name: 'PolicyError',
        message: expect.stringContaining(`${store.where} (EACCES)`),
      });
      const record = join(hostFolder(), `${sha256Hex(url).slice(0, 32)}.ledger.json`);
      writeFileSync(record, '{"account": "http://127.0.0.1:4792", "ledger": "postgres://team', { mode: 0o644 });
      await expect(policyInForce(url)).rejects.toThrow("this account's approval policy is kept in the team ledger (unreadable)");
      denied.read = record;
      await expect(policyInForce(url)).rejects.toMatchObject({
        name: 'PolicyError',
        message: expect.stringContaining(`${record} (EACCES)`),
      });
    } finally {
      denied.read = '';
    }
  });
});

it("the installation's package.json it cannot read refuses, instead of reading another folder's policies (/etc/payout-batch)", async () => {
  host.unreadable = true;
  try {
    expect(() => hostFolder()).toThrow('EACCES');
    await expect(policyInForce('http://127.0.0.1:4795')).rejects.toThrow('EACCES');
  } finally {
    host.unreadable = false;
  }
});

describe("the account's policy, read again just before the first payout", () => {
  const alice = [{ name: 'Alice', publicKey: 'a', fingerprint: 'fa' }];
  const runs = (url: string) => new FileLedger(url, '/nonexistent/state/ledgers/x');
  const payouts = [{ reference: 'R1', currency: 'USD', amount: '100.00' }];

  it('a version set since the run read it refuses, naming both: the run is judged again, not sent', async () => {
    const url = 'http://127.0.0.1:4793';
    const store = hostStore(url);
    await store.write({ account: url, requireApprovals: 1, approvers: alice }, []);
    const read = (await policyInForce(url))!;
    const { spend } = policyGuard(read, { ok: true, message: '' });
    await expect(spend!(runs(url), payouts)).resolves.toBeUndefined();
    await store.write({ account: url, requireApprovals: 2, approvers: alice }, []);
    await expect(spend!(runs(url), payouts)).resolves.toBe(
      "this account's approval policy changed since this run read it (version 1, now version 2: 2 approvals of Alice): run again under the policy in force",
    );
    await store.write(null, []);
    await expect(spend!(runs(url), payouts)).resolves.toContain('(version 1, now none)');
  });

  it("a day's count this user cannot write refuses the run, naming the folder, instead of failing with a file-system error", async () => {
    // (the count of a host's own ledger is kept in the host's folder, whichever state folder runs:
    // its ledger there refuses to write; tests run as root, whom no folder refuses)
    const url = 'http://127.0.0.1:4794';
    await hostStore(url).write({ account: url, requireApprovals: 2, approvers: alice, above: { USD: '150' } }, []);
    const { spend } = policyGuard((await policyInForce(url))!);
    const denied = Object.assign(new Error('EACCES: permission denied'), { code: 'EACCES' });
    const count = vi.spyOn(FileLedger.prototype, 'unapproved').mockRejectedValueOnce(denied).mockRejectedValueOnce(new Error('boom'));
    try {
      await expect(spend!(runs(url), payouts)).resolves.toMatch(
        /^this account's count of payouts sent without approval today is kept in .*unapproved, which this user cannot write \(EACCES\)/,
      );
      await expect(spend!(runs(url), payouts)).rejects.toThrow('boom');
      expect(count.mock.contexts.map((l) => (l as InstanceType<typeof FileLedger>).dir)).toEqual([
        expect.stringMatching(/\.unapproved$/),
        expect.stringMatching(/\.unapproved$/),
      ]);
    } finally {
      count.mockRestore();
    }
  });
});

describe("the day's count of payouts sent without approval, a file it cannot read (only a missing one is none yet)", () => {
  const day = '2026-12-01';
  const take = (reference: string, amount: string) => ({ payouts: [{ reference, currency: 'USD', amount }], above: { USD: '100' } });
  const ledgerIn = () => new FileLedger('https://api.example.com', mkdtempSync(join(tmpdir(), 'pb-unapproved-')));

  it('a folder in its place refuses, naming the file, instead of counting none sent today', async () => {
    const ledger = ledgerIn();
    const path = join(ledger.dir, `unapproved-${day}.jsonl`);
    expect(await ledger.unapproved(day)).toMatchObject({ totals: {}, recorded: [] }); // (no file: none yet)
    mkdirSync(path);
    for (const t of [undefined, take('U-1', '30')])
      await expect(ledger.unapproved(day, t)).rejects.toMatchObject({
        name: 'BatchRefused',
        message: expect.stringContaining(`cannot read ${path} (EISDIR)`),
      });
  });

  it('a file it cannot read but could append to refuses before appending: the allowance is not given again', async () => {
    const ledger = ledgerIn();
    const path = join(ledger.dir, `unapproved-${day}.jsonl`);
    const before = '{"reference":"U-1","currency":"USD","amount":"90"}\n';
    writeFileSync(path, before);
    denied.read = path;
    try {
      await expect(ledger.unapproved(day, take('U-2', '10'))).rejects.toMatchObject({
        name: 'BatchRefused',
        message: expect.stringContaining(`cannot read ${path} (EACCES)`),
      });
    } finally {
      denied.read = '';
    }
    expect(readFileSync(path, 'utf8')).toBe(before);
  });

  it('plan shows why instead of the whole allowance, and run refuses instead of sending it again', async () => {
    const sb = await startSandbox({ shapes: TEST_SHAPES, rateLimitPerSecond: null, monthlyQuota: null });
    try {
      const dir = mkdtempSync(join(tmpdir(), 'pb-unapproved-run-'));
      const env = cleanEnv({ PAYOUT_BATCH_STATE_DIR: join(dir, 'state') });
      const cli = (...args: string[]) => runMain([...args, '--base-url', sb.url, '--rate', '100'], { cwd: dir, env });
      const alice = [{ name: 'Alice', publicKey: 'a', fingerprint: 'fa' }];
      await hostStore(sb.url).write({ account: sb.url, requireApprovals: 2, approvers: alice, above: { USD: '150' } }, []);
      await writeBatch(dir, 'one.csv', { rows: 1, currencies: ['USD'], prefix: 'ONE', amount: () => '100.01' });
      await writeBatch(dir, 'two.csv', { rows: 1, currencies: ['USD'], prefix: 'TWO', amount: () => '100.02' });
      const first = await cli('run', 'one.csv', '--yes');
      expect(first.code, first.stderr).toBe(0);
      expect(initiates(sb)).toHaveLength(1);
      const [folder] = readdirSync(hostFolder()).filter((f) => f === `${sha256Hex(sb.url).slice(0, 32)}.unapproved`);
      const [name] = readdirSync(join(hostFolder(), folder!)).filter((f) => f.startsWith('unapproved-'));
      const path = join(hostFolder(), folder!, name!);
      const counted = readFileSync(path, 'utf8');
      // (readable, it leaves USD 49.99 today: the second file would need the approvals)
      denied.read = path;
      try {
        const plan = await cli('plan', 'two.csv');
        expect(plan.stdout).not.toContain('left today');
        expect(plan.stdout).toContain(`Approval policy: cannot read ${path} (EACCES)`);
        const second = await cli('run', 'two.csv', '--yes');
        expect(second.code).toBe(3);
        expect(second.stderr).toContain(`refused: cannot read ${path} (EACCES)`);
        expect(second.stderr).not.toMatch(/\n\s+at /); // (no stack)
      } finally {
        denied.read = '';
      }
      expect(initiates(sb)).toHaveLength(1);
      expect(readFileSync(path, 'utf8')).toBe(counted);
    } finally {
      await sb.close();
    }
  });
});
