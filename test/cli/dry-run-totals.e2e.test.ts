// `run --dry-run` checks the control totals exactly as `run` does (issue 29, item 5): the same
// reasons and exit 3 on a mismatch, 0 when they match; nothing is sent either way. A currency no
// --expect-total names is a note unless --strict-totals (issue 31). A dry run and a plan send
// nothing: most run main() in this process (inProcess); a process each test, and the real run.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type LocalSandbox } from '../../src/sandbox/start-sandbox.ts';
import { TEST_SHAPES } from '../shapes.ts';
import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { cliIn, generateCsv, initiates, tempDirs, writeBatch } from '../engine/helpers.ts';

let sb: LocalSandbox;
const dirs = tempDirs('pb-dry-run-totals-');
beforeAll(async () => {
  sb = await startSandbox({ shapes: TEST_SHAPES, rateLimitPerSecond: null, monthlyQuota: null });
});
afterAll(async () => {
  await sb?.close();
  await dirs.remove();
});

/** Two GBP rows, 100.00 and 250.50. */
async function twoGbpRows() {
  const dir = await dirs.make();
  await writeBatch(dir, 'payroll.csv', { rows: 2, currencies: ['GBP'], amount: (i) => ['100.00', '250.50'][i]! });
  return { dir, ...cliIn(dir, sb.url) };
}

/** The reasons a refusal names, one per line of "Nothing was sent:" (run) or after "refused:" (dry run). */
const reasonsOf = (stderr: string) =>
  stderr
    .split('\n')
    .flatMap((l) => (/^\s+- /.test(l) ? [l.replace(/^\s+- /, '')] : (/refused: (.*)\. Nothing was sent/.exec(l)?.[1]?.split('; ') ?? [])))
    .filter((l) => l.startsWith('--'));

describe('run --dry-run and the control totals', () => {
  it('a wrong --expect-rows, --expect-total or --max-total: exit 3 naming it, as run says it; nothing sent', async () => {
    const { cli, inProcess, dir } = await twoGbpRows();
    const flags = ['--expect-rows', '3', '--expect-total', 'GBP:350.00', '--max-total', 'GBP:300'];
    const dry = await inProcess('run', 'payroll.csv', '--dry-run', ...flags);
    expect(dry.code, dry.stderr).toBe(3);
    expect(dry.stdout).toContain('Plan for');
    const named = reasonsOf(dry.stderr);
    expect(named[0]).toBe('--expect-rows 3, but the batch pays 2 rows');
    expect(named[1]).toMatch(/^--expect-total GBP:350, but the batch pays 350\.50 GBP/);
    expect(named[2]).toMatch(/^--max-total GBP:300, but the batch pays/);
    const run = await cli('run', 'payroll.csv', '--yes', ...flags);
    expect(run.code, run.stderr).toBe(3);
    expect(reasonsOf(run.stderr)).toEqual(named);
    expect(initiates(sb)).toHaveLength(0);
    // A run refused before sending writes nothing: no results file, no summary of NOT_SENT rows.
    expect(run.stdout).not.toMatch(/results\s|NOT_SENT/);
    expect(existsSync(join(dir, 'payroll.results.csv'))).toBe(false);
  });

  it('says truthfully that it quotes nothing, as `plan` without --out, and names `plan --out` for exact fees (issue 43, item 8)', async () => {
    const { cli, inProcess } = await twoGbpRows();
    const quotes = () => sb.requestLog().filter((r) => r.route === 'quote').length;
    const before = quotes();
    const dry = await inProcess('run', 'payroll.csv', '--dry-run');
    expect(dry.code, dry.stderr).toBe(0);
    expect(quotes()).toBe(before);
    expect(dry.stdout).toContain('Nothing was quoted, fees are estimated: `payout-batch plan payroll.csv --out PLAN` quotes the rows');
    const help = await cli('run', '--help');
    expect(help.stdout.replace(/\s+/g, ' ')).toContain('fees estimated, nothing quoted, no plan file');
    const planned = await inProcess('plan', 'payroll.csv', '--out', 'payroll.plan.json');
    expect(planned.code, planned.stderr).toBe(0);
    expect(quotes()).toBeGreaterThan(before);
    expect(planned.stdout).not.toContain('Nothing was quoted');
  });

  it('plan says on stderr as each slow step starts, off a terminal too, and nothing there with --json (issue 43, item 9)', async () => {
    const { cli } = await twoGbpRows();
    const planned = await cli('plan', 'payroll.csv', '--out', 'payroll.plan.json');
    expect(planned.code, planned.stderr).toBe(0);
    const steps = planned.stderr.split('\n').filter((l) => /^(preflight|plan): /.test(l));
    expect(steps).toEqual([
      'preflight: reading the wallets and the countries...',
      'preflight: reading the payment methods of 1 corridor (0 done)...',
      'plan: quoting 2 rows (one quote per corridor, method and fee band)...',
    ]);
    const json = await cli('plan', 'payroll.csv', '--json');
    expect(json.code, json.stderr).toBe(0);
    expect(json.stderr).not.toMatch(/preflight:|plan: quoting/);
  });

  it('--expect-total right (with --expect-rows and --max-total): exit 0, nothing sent; --json lists no refusal', async () => {
    const { cli, inProcess } = await twoGbpRows();
    const flags = ['--expect-rows', '2', '--expect-total', 'GBP:350.50', '--max-total', 'GBP:400'];
    const dry = await inProcess('run', 'payroll.csv', '--dry-run', ...flags);
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stderr).not.toMatch(/refused/);
    const json = await cli('run', 'payroll.csv', '--dry-run', '--json', '--expect-rows', '1');
    expect(json.code).toBe(3);
    expect(JSON.parse(json.stdout)).toMatchObject({ exitCode: 3, refused: ['--expect-rows 1, but the batch pays 2 rows'] });
    expect(initiates(sb)).toHaveLength(0);
  });

  it('a currency --expect-total does not name is noted (output and --json), refused only with --strict-totals (issue 31)', async () => {
    const dir = await dirs.make();
    const eur = generateCsv({ rows: 1, currencies: ['EUR'], prefix: 'EUR', amount: () => '100.00' })
      .split('\n')
      .slice(1)
      .join('\n');
    await writeFile(join(dir, 'payroll.csv'), generateCsv({ rows: 1, currencies: ['GBP'], amount: () => '100.00' }) + eur);
    const { cli, inProcess } = cliIn(dir, sb.url);
    const named = ['--expect-total', 'GBP:100.00'];
    const dry = await inProcess('run', 'payroll.csv', '--dry-run', ...named);
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stdout).toMatch(/Control totals: --expect-total names no EUR, and the batch pays 100\.00 EUR: not checked/);
    const json = await inProcess('run', 'payroll.csv', '--dry-run', '--json', ...named);
    expect(JSON.parse(json.stdout)).toMatchObject({ exitCode: 0, notes: [expect.stringMatching(/names no EUR/)] });
    const strict = await cli('run', 'payroll.csv', '--dry-run', '--json', '--strict-totals', ...named);
    expect(strict.code).toBe(3);
    expect(JSON.parse(strict.stdout)).toMatchObject({ refused: [expect.stringMatching(/names no EUR.*--strict-totals/)] });
    expect(initiates(sb)).toHaveLength(0);
  });
});
