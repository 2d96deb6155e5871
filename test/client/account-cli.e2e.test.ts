// The real CLI, run as a user would, with known keys: the key must appear in no output and no
// file, on success, on refusal, with debug-level JSON logs on.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chmod, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startSandbox, type LocalSandbox } from '../../src/sandbox/start-sandbox.ts';
import { TEST_SHAPES } from '../shapes.ts';
import { keyFingerprint } from '../../src/client/api-key.ts';
import { filesUnder, runCli, type CliRun } from '../engine/helpers.ts';

const GOOD = 'sk_sandbox_acme_primary';
const REFUSED = 'sk_sandbox_refused_7c2f91d04e';
const PROPAGATING = 'sk_sandbox_acme_secondary';

let sb: LocalSandbox;
let stateDir: string;
let work: string;

beforeAll(async () => {
  sb = await startSandbox({ shapes: TEST_SHAPES, rateLimitPerSecond: null, propagatingKeys: [PROPAGATING] });
  stateDir = await mkdtemp(join(tmpdir(), 'pb-state-'));
  work = await mkdtemp(join(tmpdir(), 'pb-work-'));
});
afterAll(async () => {
  await sb?.close();
});

/** `payout-batch account …` with only the PAYOUT_ variables given (none: no key at all). */
function run(args: string[], env: Record<string, string>): Promise<CliRun> {
  const base = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('PAYOUT_'))) as Record<string, string>;
  return runCli(['account', ...args], { cwd: work, env: { ...base, PAYOUT_BATCH_STATE_DIR: stateDir, ...env } });
}

/** Fails naming where a key was found. */
async function expectNoKey(r: CliRun, keys: string[]) {
  for (const key of keys) {
    expect(r.stdout.includes(key), `key in stdout`).toBe(false);
    expect(r.stderr.includes(key), `key in stderr`).toBe(false);
    for (const f of [...(await filesUnder(stateDir)), ...(await filesUnder(work))]) {
      expect((await readFile(f, 'utf8')).includes(key), `key in ${f}`).toBe(false);
    }
  }
}

describe('payout-batch account', () => {
  it('shows wallets, pairs and quota as JSON with debug logs on, and the key appears nowhere', async () => {
    const r = await run(['--base-url', sb.url, '--json', '--log-level', 'debug'], { PAYOUT_API_KEY: GOOD });
    expect(r.code, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(out.wallets.map((w: { currency: string }) => w.currency)).toContain('USD');
    expect(out.pairs.length).toBeGreaterThan(0);
    // money as decimal strings with the currency's digits, as in every --json; named fields only
    for (const w of out.wallets) {
      expect(Object.keys(w).sort()).toEqual(['balance', 'currency', 'walletId']);
      expect(w.balance).toMatch(/^-?\d+(\.\d+)?$/);
    }
    for (const p of out.pairs) expect(p.rate === null || typeof p.rate === 'string').toBe(true);
    expect(out.key.fingerprint).toBe(keyFingerprint(GOOD));
    expect(out.quota.used).toBeGreaterThanOrEqual(2);
    // The debug logs really were written (so their absence of the key means something).
    const logs = r.stderr
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(logs.filter((l) => l.msg === 'response').map((l) => l.route)).toEqual(['listWallets', 'listPairs']);
    expect(logs.find((l) => l.msg === 'account: connected').apiKey).toBe('[redacted]');
    const usage = JSON.parse(await readFile(join(stateDir, 'usage.json'), 'utf8'));
    expect(Object.keys(usage.keys)).toContain(keyFingerprint(GOOD));
    await expectNoKey(r, [GOOD]);
  });

  it('prints a readable summary for the embedded sandbox (--env local)', async () => {
    const r = await run(['--env', 'local'], { PAYOUT_API_KEY: GOOD });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/Environment {2}local {2}http:\/\/127\.0\.0\.1:\d+/);
    expect(r.stdout).toMatch(/USD\s+1,000,000\.00/);
    expect(r.stdout).toMatch(/requests used in \d{4}-\d{2} \(UTC\), as counted on this machine/);
    await expectNoKey(r, [GOOD]);
  });

  it('a key the service refuses: exit 4, a plain message, and still no key anywhere', async () => {
    const r = await run(['--base-url', sb.url, '--log-level', 'debug'], { PAYOUT_API_KEY: REFUSED });
    expect(r.code).toBe(4);
    expect(r.stderr).toMatch(/401 the service refused the API key/);
    expect(r.stderr).toMatch(/x-request-id [0-9a-f-]{36}/);
    await expectNoKey(r, [REFUSED, GOOD]);
  });

  it('a key still propagating: says new keys need 20 to 30 minutes', async () => {
    const r = await run(['--base-url', sb.url], { PAYOUT_API_KEY: PROPAGATING });
    expect(r.code).toBe(4);
    expect(r.stderr).toMatch(/20 to 30 minutes/);
    await expectNoKey(r, [PROPAGATING]);
  });

  it('refuses a production key file with a non-production server', async () => {
    const keyFile = join(work, 'acme.key');
    await writeFile(keyFile, `environment=production\nkey=acme-prod-7c2f91d04e\n`);
    await chmod(keyFile, 0o600);
    const r = await run(['--base-url', sb.url, '--key-file', keyFile], {});
    expect(r.code).toBe(3);
    expect(r.stderr).toMatch(/refusing to use a production key/);
    expect(r.stdout + r.stderr).not.toContain('acme-prod-7c2f91d04e');
    expect(sb.requestLog().some((e) => e.apiKey === 'acme-prod-7c2f91d04e')).toBe(false);
  });

  it('refuses a key on the command line (exit 2) and does not print it', async () => {
    const argv = await run(['--base-url', sb.url, '--api-key', `${REFUSED}_argv`], {});
    expect(argv.code).toBe(2);
    expect(argv.stderr).toMatch(/never taken from the command line/);
    expect(argv.stdout + argv.stderr).not.toContain(`${REFUSED}_argv`);
  });

  it('without any key: exit 2, saying to set PAYOUT_API_KEY', async () => {
    const none = await run(['--base-url', sb.url], {});
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(/no API key: set PAYOUT_API_KEY/);
  });

  it('never falls back to production: without a gateway host the sandbox environment stops', async () => {
    const r = await run([], { PAYOUT_API_KEY: GOOD });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/PAYOUT_GATEWAY_HOST/);
    await expectNoKey(r, [GOOD]);
  });
});
