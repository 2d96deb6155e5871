// Issue 26: a watch folder's ledger is where its documentation says (DIR/.state unless the
// configuration names a "stateDir"), the same for every user and HOME that runs the cron line.
// Two `watch DIR --once` under two HOMEs (two per-user state folders), the payroll dropped, then a
// re-saved copy of it dropped: one payout per reference at the sandbox.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { LocalSandbox } from '../../src/sandbox/start-sandbox.ts';
import { generateCsv, tempDirs } from '../engine/helpers.ts';
import { allPayouts, cleanEnv, runCli, startSb } from './helpers.ts';

let sb: LocalSandbox | undefined;
const dirs = tempDirs('pb-watch-homes-');
afterEach(async () => {
  await sb?.close();
  sb = undefined;
  await dirs.remove();
});

const ROWS = 3;

describe('watch under two HOMEs', () => {
  it('keeps one ledger in DIR/.state: a re-saved copy dropped later is not paid again', async () => {
    sb = await startSb();
    const dir = await dirs.make();
    writeFileSync(join(dir, 'payout-batch.json'), JSON.stringify({ environment: 'sandbox', baseUrl: sb.url, settleSeconds: 1, rate: 200 }));
    mkdirSync(join(dir, 'inbox'));
    const drop = (name: string, text: string) => {
      writeFileSync(join(dir, 'inbox', name), text);
      writeFileSync(join(dir, 'inbox', `${name}.ready`), '');
    };
    const watchAs = (home: string) =>
      runCli(['watch', dir, '--once'], {
        cwd: dir,
        // (cleanEnv drops XDG_STATE_HOME; the per-user state folder follows this HOME)
        env: { ...cleanEnv(), HOME: join(dir, home), PAYOUT_BATCH_STATE_DIR: '' },
      });

    const payroll = generateCsv({ rows: ROWS, currencies: ['GBP'], prefix: 'WH' });
    drop('payroll.csv', payroll);
    const alice = await watchAs('alice');
    expect(alice.code, alice.stdout + alice.stderr.slice(-2000)).toBe(0);
    expect(await allPayouts(sb)).toHaveLength(ROWS);

    drop('payroll-resaved.csv', payroll + '\n');
    const bob = await watchAs('bob');
    expect(bob.stdout + bob.stderr).toMatch(/payroll-resaved\.csv/);
    expect(await allPayouts(sb)).toHaveLength(ROWS);
    expect(existsSync(join(dir, '.state', 'ledgers'))).toBe(true);
    expect(readFileSync(join(dir, 'payout-batch.json'), 'utf8')).not.toContain('stateDir');
  });
});
