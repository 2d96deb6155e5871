// A container's uid often has no entry in the user database, where os.userInfo() throws. What
// records a person (a policy's setter, a clearance's author, a plan's maker) then takes $USER, as
// `plan --out` did; `policy set` and `screen --clear` ended in an unexpected error. The CLI runs
// here in a user namespace (util-linux unshare) as uid 4242, which /etc/passwd does not name.
import { execFile } from 'node:child_process';
import { copyFileSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { newKeyPair } from '../../src/approvals/approvals-file.ts';
import { startSandbox, type LocalSandbox } from '../../src/sandbox/start-sandbox.ts';
import { TEST_SHAPES } from '../shapes.ts';
import { ROOT, cleanEnv, tempDirs } from '../engine/helpers.ts';
import { install } from './install.ts';

const dirs = tempDirs('pb-no-user-');
let sb: LocalSandbox;
beforeAll(async () => {
  sb = await startSandbox({ shapes: TEST_SHAPES, rateLimitPerSecond: null, monthlyQuota: null });
});
afterAll(async () => {
  await sb?.close();
  await dirs.remove();
});

/** node with these arguments as uid 4242, which has no entry: its userInfo() throws. */
const asUnnamedUid = (nodeArgs: string[], cwd: string, env: Record<string, string>) =>
  new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    const unshare = ['--user', '--map-user=4242', '--map-group=4242', process.execPath, ...nodeArgs];
    execFile('unshare', unshare, { cwd, env }, (e, stdout, stderr) => resolve({ code: e ? Number(e.code ?? 1) : 0, stdout, stderr }));
  });

it('policy set and screen --clear record $USER, not an unexpected error', async () => {
  const dir = await dirs.make();
  const inst = install(await dirs.make());
  const env = cleanEnv({ PAYOUT_BATCH_STATE_DIR: join(dir, 'state'), USER: 'treasurer' });
  const cli = (...args: string[]) => asUnnamedUid([inst.bin, ...args], dir, env);
  // (that the namespace's uid really has no entry)
  const probe = await asUnnamedUid(['-e', "try { require('os').userInfo() } catch { process.exit(7) }"], dir, env);
  expect(probe.code, probe.stderr).toBe(7);

  writeFileSync(join(dir, 'approvers.json'), JSON.stringify([{ name: 'Alice', publicKey: newKeyPair().publicKey }]));
  const set = await cli('policy', 'set', '--require-approvals', '1', '--approvers', 'approvers.json', '--base-url', sb.url);
  expect(set.code, set.stderr).toBe(0);
  const [policy] = readdirSync(inst.hostFolder).filter((f) => f.endsWith('.policy.json'));
  expect(JSON.parse(readFileSync(join(inst.hostFolder, policy!), 'utf8')).setBy).toBe(`treasurer@${hostname()}`);

  copyFileSync(join(ROOT, 'samples/payroll-2025-01.csv'), join(dir, 'payroll.csv'));
  const list = join(ROOT, 'samples/sanctions/sdn.csv');
  const clear = ['--clear', 'PAYROLL-2025-01-021', '--entry', 'ofac-sdn:90004', '--reason', 'another company of that name'];
  const cleared = await cli('screen', 'payroll.csv', '--sanctions-list', list, ...clear);
  expect(cleared.code, cleared.stderr).toBe(0);
  const [clearance] = readdirSync(join(dir, 'clearances')).filter((f) => f.endsWith('.clearance.json'));
  expect(JSON.parse(readFileSync(join(dir, 'clearances', clearance!), 'utf8')).madeBy).toBe('treasurer');
});
