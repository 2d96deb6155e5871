// Issue 43 item 3: `run payroll.csv --base-url OTHER` replaced payroll.results.csv, the record of
// the payouts another service made (52 SUCCESSFUL became 52 PENDING of the other). A results file
// holding payouts this account's ledger does not know is another run's record: the run is refused
// before anything is sent, naming the file and `--results`; a run that resumes its own batch still
// updates its own file.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { LocalSandbox } from '../../src/sandbox/start-sandbox.ts';
import { runMain } from '../engine/helpers.ts';
import { cleanEnv, paidBatch, startSb } from '../ops/helpers.ts';

const sandboxes: LocalSandbox[] = [];
afterEach(async () => {
  for (const s of sandboxes.splice(0)) await s.close();
});
const started = async () => {
  const s = await startSb();
  sandboxes.push(s);
  return s;
};
const initiates = (s: LocalSandbox) => s.requestLog().filter((r) => r.route === 'initiate').length;

describe("a results file of another service's run", () => {
  it('is never replaced: run against another service is refused, naming --results; its own run resumes over it', async () => {
    const [first, other] = [await started(), await started()];
    const { dir, file, results } = await paidBatch(first, { rows: 2, name: 'payroll.csv' });
    const record = readFileSync(results);
    const env = cleanEnv();
    const run = (s: LocalSandbox, ...more: string[]) => runMain(['run', file, '--base-url', s.url, '--yes', ...more], { cwd: dir, env });

    const refused = await run(other);
    expect(refused.code, refused.stderr + refused.stdout).toBe(3);
    expect(refused.stderr).toContain(`${results} holds 2 payouts this account's ledger does not know`);
    expect(refused.stderr).toContain(`--results ${join(dir, 'payroll-2.results.csv')}`);
    expect(initiates(other)).toBe(0);
    expect(readFileSync(results)).toEqual(record);

    // named apart, it runs; the first record stays as it was
    const apart = await run(other, '--results', join(dir, 'payroll-2.results.csv'));
    expect(apart.code, apart.stderr + apart.stdout).toBe(0);
    expect(initiates(other)).toBe(2);
    expect(readFileSync(results)).toEqual(record);

    // the batch's own service: the same run again, over its own results file (nothing sent twice)
    const before = initiates(first);
    const again = await run(first);
    expect(again.code, again.stderr + again.stdout).toBe(0);
    expect(initiates(first)).toBe(before);
  });
});
