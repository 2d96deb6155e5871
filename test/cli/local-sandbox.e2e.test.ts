// The `local` environment keeps its sandbox between commands (issue 31, item 1): `status` after
// `run`, in another process, finds the payouts (on main every one answered 404), a second run pays
// nothing again, and $PAYOUT_SANDBOX_AUTO_ADVANCE moves payouts, also for the time between commands.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cleanEnv, runCli, runMain, tempDirs, writeBatch } from '../engine/helpers.ts';

const dirs = tempDirs('pb-local-sandbox-');
afterAll(() => dirs.remove());

describe('--env local keeps its state in the state folder', () => {
  it('status after run finds the payouts; they move with $PAYOUT_SANDBOX_AUTO_ADVANCE; nothing is paid twice', async () => {
    const dir = await dirs.make();
    await writeBatch(dir, 'payroll.csv', { rows: 3, currencies: ['GBP'], documentsEvery: 2 });
    const state = join(dir, 'state');
    const cli = (args: string[], extra: Record<string, string> = {}, how = runCli) =>
      how([...args, '--env', 'local'], {
        cwd: dir,
        env: cleanEnv({ PAYOUT_BATCH_STATE_DIR: state, PAYOUT_BATCH_RATE: '100', ...extra }),
      });
    const run = await cli(['run', 'payroll.csv', '--yes']);
    expect(run.code, run.stderr).toBe(0);

    const pending = await cli(['status', 'payroll.results.csv']);
    expect(pending.code, pending.stdout + pending.stderr).toBe(5);
    expect(pending.stdout).not.toMatch(/NOT_FOUND/);
    expect(pending.stdout).toMatch(/3 still in progress/);

    // every step already due (0 ms): the next command finds them paid
    const paid = await cli(['status', 'payroll.results.csv'], { PAYOUT_SANDBOX_AUTO_ADVANCE: '0' });
    expect(paid.code, paid.stdout + paid.stderr).toBe(0);
    expect(paid.stdout).toMatch(/Finished: every row is paid/);

    // (the second run by main() in this process: the state it finds is the file the processes above left)
    const again = await cli(['run', 'payroll.csv', '--yes'], {}, runMain);
    expect(again.code, again.stderr).toBe(0);
    const saved = JSON.parse(readFileSync(join(state, 'local-sandbox.json'), 'utf8')) as { payouts: { status: string }[] };
    expect(saved.payouts.map((p) => p.status)).toEqual(['SUCCESSFUL', 'SUCCESSFUL', 'SUCCESSFUL']);
  });
});

it('a team ledger that cannot be opened ends the command, with its sandbox: exit 4 and 2, never a process left waiting', async () => {
  const dir = await dirs.make();
  const env = cleanEnv({ PAYOUT_BATCH_STATE_DIR: join(dir, 'state') });
  const cli = (ledger: string) => runCli(['account', '--env', 'local', '--ledger', ledger], { cwd: dir, env, timeoutMs: 20_000 });
  const [down, bad] = await Promise.all([cli('postgres://payout@127.0.0.1:1/team'), cli('not-a-url')]);
  expect([down.code, down.signal], down.stderr).toEqual([4, null]);
  expect([bad.code, bad.signal], bad.stderr).toEqual([2, null]);
});

it('a torn local-sandbox.json is refused, as a wrongly shaped one: never a fresh sandbox that forgets the payouts of earlier runs', async () => {
  const dir = await dirs.make();
  const state = join(dir, 'state');
  mkdirSync(state);
  const file = join(state, 'local-sandbox.json');
  const cli = () => runMain(['account', '--env', 'local'], { cwd: dir, env: cleanEnv({ PAYOUT_BATCH_STATE_DIR: state }) });
  for (const text of ['{"payouts":[{"id":"po_', '', '{"payouts": "none"}']) {
    writeFileSync(file, text);
    const r = await cli();
    expect(r.code, r.stdout).toBe(2);
    expect(r.stderr).toContain(`${file} is torn or not the state of a local sandbox of this version: move it away to start afresh`);
    expect(readFileSync(file, 'utf8')).toBe(text);
  }
});
