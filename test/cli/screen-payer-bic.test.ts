// `screen` of a row sent on behalf of a payer known only by its BIC (a column UltmtDbtrBIC, no
// UltmtDbtr): the hit, the clearance made of it and the clearances listed all name that payer, as
// they name one known by name (test/screening-e2e/flow.e2e.test.ts); and its counts, in the singular for one.
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ROOT, cleanEnv, runMain, tempDirs } from '../engine/helpers.ts';

const LIST = join(ROOT, 'samples/sanctions/sdn.csv');
const BIC = 'BKCHCNBJXXX'; // (entry 90005's SWIFT/BIC on the sample list)
const dirs = tempDirs('pb-screen-payer-bic-');
afterAll(() => dirs.remove());

/** The sample's clean row 002, on behalf of the payer of BIC `BIC`. */
function batch(dir: string): void {
  const [header, ...rows] = readFileSync(join(ROOT, 'samples/payroll-2025-01.csv'), 'utf8').trim().split('\n');
  const row = rows.find((r) => r.startsWith('PAYROLL-2025-01-002,'))!.replace(/documents\//g, `${join(ROOT, 'samples/documents')}/`);
  writeFileSync(join(dir, 'payroll.csv'), `${header},UltmtDbtrBIC\n${row},${BIC}\n`);
}

describe('screen, a payer known only by its BIC', () => {
  it('names that payer in the hit, in the clearance made of it and in the clearances listed', async () => {
    const dir = await dirs.make();
    batch(dir);
    const screen = (...args: string[]) =>
      runMain(['screen', ...args], { cwd: dir, env: cleanEnv({ PAYOUT_BATCH_STATE_DIR: join(dir, 'state') }) });

    const held = await screen(join(dir, 'payroll.csv'), '--sanctions-list', LIST);
    expect(held.code, held.stderr).toBe(1);
    expect(held.stdout).toContain(`HELD row 2 PAYROLL-2025-01-002: ofac-sdn 90005 `);
    expect(held.stdout).toContain(`the payer it is sent on behalf of (UltmtDbtr) "${BIC}"`);

    const clear = ['--clear', 'PAYROLL-2025-01-002', '--entry', 'ofac-sdn:90005', '--reason', 'another bank', '--as', 'Dan'];
    expect((await screen(join(dir, 'payroll.csv'), '--sanctions-list', LIST, ...clear)).code).toBe(0);
    const [file] = readdirSync(join(dir, 'clearances'));
    const made = JSON.parse(readFileSync(join(dir, 'clearances', file!), 'utf8')) as { payeeText: string };
    expect(made.payeeText).toMatch(new RegExp(`, on behalf of ${BIC}$`));
    const listed = await screen('--clearances');
    expect(listed.stdout).toContain(`(${made.payeeText})`);
  });

  it('counts one payee screened and one row held in the singular', async () => {
    const dir = await dirs.make();
    batch(dir);
    const r = await runMain(['screen', join(dir, 'payroll.csv'), '--sanctions-list', LIST], { cwd: dir, env: cleanEnv() });
    expect(r.stdout).toMatch(/^Screened 1 payee of /);
    expect(r.stdout).toMatch(/^1 row held: never sent until cleared\.$/m);
  });
});
