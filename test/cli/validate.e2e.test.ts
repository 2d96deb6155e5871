// The validate and template commands, as a user runs them: a child process of the real bin.
import { afterAll, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cleanEnv, runMain } from '../engine/helpers.ts';

const root = fileURLToPath(new URL('../..', import.meta.url));
const tmp = mkdtempSync(join(tmpdir(), 'pb-cli-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

function cli(...args: string[]) {
  const r = spawnSync(process.execPath, [join(root, 'dist/bin.js'), ...args], {
    cwd: root,
    encoding: 'utf8',
    env: { ...process.env, PAYOUT_BATCH_DEBUG: '' },
  });
  return { code: r.status, out: r.stdout, err: r.stderr };
}
const noStack = (s: string) => expect(s).not.toMatch(/\n\s+at .+:\d+:\d+/);

describe('payout-batch validate', () => {
  it('exit 0 on the payroll, with a summary of totals, methods and corridors', () => {
    const r = cli('validate', 'samples/payroll-2025-01.csv');
    expect(r.code).toBe(0);
    expect(r.out).toContain('52 read: 52 valid, 0 invalid');
    expect(r.out).toMatch(/USD\s+103,075\.00\s+20 rows/);
    expect(r.out).toMatch(/NIP\s+13 rows/);
    expect(r.out).toContain('USD -> NGN NGA  NIP');
    expect(r.out).toContain('All 52 rows are valid.');
  });

  it('exit 1 on the broken file, with each problem located and a report sheet', () => {
    const report = join(tmp, 'problems.csv');
    const r = cli('validate', 'samples/payroll-broken.csv', '--report', report);
    expect(r.code).toBe(1);
    expect(r.out).toContain('samples/payroll-broken.csv row 6, column "iban": error INVALID_IBAN');
    expect(r.out).toContain('(value "********3001")');
    expect(r.out).toContain('14 of 18 rows are invalid');
    const sheet = readFileSync(report, 'utf8')
      .replace(/^\uFEFF/, '')
      .split('\n');
    expect(sheet[0]).toBe('severity,code,file,row,column,value,message,expected');
    expect(sheet.filter((l) => /^(error|warning),/.test(l))).toHaveLength(43);
    expect(readFileSync(report, 'utf8')).toContain("'-50.00");
  });

  it('--max-problems N shows the first N problems, then says how many more and where to find them all', async () => {
    const file = join(root, 'samples/payroll-broken.csv');
    const shown = async (...flags: string[]) =>
      (await runMain(['validate', file, '--max-problems', '5', ...flags], { cwd: tmp, env: cleanEnv() })).stdout;
    const plain = await shown();
    expect(plain.split('\n').filter((l) => l.startsWith(`  ${file} row `))).toHaveLength(5);
    expect(plain).toContain('  ... 38 more problems not shown (--max-problems 0 shows all; --report FILE.csv writes all)\n');
    expect(await shown('--report', join(tmp, 'all.csv'))).toContain(
      '  ... 38 more problems not shown (--max-problems 0 shows all; all are in the report)\n',
    );
  });

  it('prints the ESC, BEL and U+202E of an invalid row as escapes, never raw to the terminal (issue 43, item 16)', () => {
    const [header, row] = readFileSync(join(root, 'samples/payroll-2025-01.csv'), 'utf8').split('\n');
    const file = join(tmp, 'hidden.csv');
    writeFileSync(file, `${header}\n${row!.replace('Adaeze Okafor', 'Adaeze \u202eOkafor\u001b[31mRED\u0007')}\n`);
    const r = cli('validate', file);
    expect(r.code).toBe(1);
    // control characters are exactly what must not appear (line breaks aside)
    expect(r.out + r.err).not.toMatch(/(?![\t\n\r])[\p{Cc}\u202e]/u);
    expect(r.out).toContain('(value "Adaeze \\u202EOkafor\\u001B[31mRED\\u0007")');
  });

  it('run and retry off a terminal say a missing file is missing, not "pass --yes" (issue 43, item 11)', () => {
    for (const args of [
      ['run', 'no-such-payroll.csv'],
      ['retry', 'no-such-payroll.results.csv'],
    ]) {
      const r = cli(...args, '--env', 'local');
      expect(r.code, r.err).toBe(2);
      expect(r.err).toContain(`payout-batch: ${args[1]}: no such file.`);
      expect(r.err).not.toContain('--yes');
    }
  });

  it('only a usage error points to --help; a group-writable state folder is refused alike by run, status and account (issue 43, item 12)', () => {
    const env = cleanEnv({ HOME: tmp, PAYOUT_BATCH_STATE_DIR: join(tmp, 'state-12') });
    const bin = (...args: string[]) => {
      const r = spawnSync(process.execPath, [join(root, 'dist/bin.js'), ...args], { cwd: root, encoding: 'utf8', env });
      return { code: r.status, err: r.stderr };
    };
    const environment = bin('account', '--env', 'sandbox');
    expect(environment.code).toBe(2);
    expect(environment.err).toContain('needs the production gateway host');
    expect(environment.err).not.toContain('--help');
    expect(bin('status').err).toContain('Run "payout-batch --help" for usage.');

    const shared = join(tmp, 'group-writable');
    mkdirSync(shared, { mode: 0o700 });
    chmodSync(shared, 0o770);
    env.PAYOUT_BATCH_STATE_DIR = shared;
    const said = `payout-batch: refused: the state folder ${shared} is writable by its group (mode 770)`;
    for (const args of [['run', 'samples/payroll-2025-01.csv', '--yes'], ['status', 'samples/payroll-2025-01.results.csv'], ['account']]) {
      const r = bin(...args, '--env', 'local');
      expect(r.code, `${args[0]}: ${r.err}`).toBe(3);
      expect(r.err).toContain(said);
      expect(r.err).not.toMatch(/unexpected error|--help/);
    }
  });

  it('exit 1 on the broken file, as JSON for scripts', () => {
    const j = cli('validate', 'samples/payroll-broken.csv', '--json');
    expect(j.code).toBe(1);
    const doc = JSON.parse(j.out);
    expect(doc.problems).toHaveLength(43);
    expect(doc.summary).toMatchObject({ rows: 18, valid: 4, invalid: 14 });
    expect(doc.exitCode).toBe(1);
  });

  it('--allow-duplicate-rows turns a probable duplicate into a warning', async () => {
    // (in this process: the bin's main())
    const r = await runMain(['validate', join(root, 'samples/payroll-broken.csv'), '--json', '--allow-duplicate-rows'], {
      cwd: root,
      env: cleanEnv(),
    });
    const j = JSON.parse(r.stdout);
    expect(j.problems.find((p: { code: string }) => p.code === 'PROBABLE_DUPLICATE').severity).toBe('warning');
  });

  // A missing file (FILE_NOT_FOUND) and a binary one (UNSUPPORTED_FORMAT): exit 2, one line naming
  // the file, no stack trace, in test/input/bad-input-campaign.e2e.test.ts (missing.csv, the binary cases).

  it('exit 2 with a message and no stack trace for a file without our header', () => {
    const cols = join(tmp, 'cols.csv');
    writeFileSync(cols, 'reference,Amount,Currency\nR1,10,USD\n');
    const c = cli('validate', cols, '--json');
    expect(c.code).toBe(2);
    expect(JSON.parse(c.out).error.code).toBe('MISSING_COLUMNS');
    expect(c.err).toContain('destinationCurrency');
    noStack(c.err);
  });

  it('needs no API key and no network', () => {
    const r = spawnSync(process.execPath, [join(root, 'dist/bin.js'), 'validate', 'samples/payroll-2025-01.xlsx'], {
      cwd: root,
      encoding: 'utf8',
      env: { PATH: process.env.PATH, HTTPS_PROXY: 'http://127.0.0.1:9', HTTP_PROXY: 'http://127.0.0.1:9' },
    });
    expect(r.status).toBe(0);
  });
});

describe('payout-batch template', () => {
  it('writes CSV to stdout', () => {
    const csv = cli('template', '--method', 'hong_kong_fps');
    expect(csv.code).toBe(0);
    expect(csv.out).toBe(readFileSync(join(root, 'templates/payout-template-hk-fps.csv'), 'utf8'));
  });

  it('writes XLSX to a file, which validates', async () => {
    const out = join(tmp, 't.xlsx');
    const x = cli('template', '--format', 'xlsx', '--out', out);
    expect(x.code).toBe(0);
    expect(readFileSync(out).equals(readFileSync(join(root, 'templates/payout-template-all-methods.xlsx')))).toBe(true);
    // (the template validated by main() in this process: the template command is the process)
    expect((await runMain(['validate', out], { cwd: root, env: cleanEnv() })).code).toBe(0);
  });

  it('an unknown method: exit 2, no stack trace', () => {
    const bad = cli('template', '--method', 'PAYPAL');
    expect(bad.code).toBe(2);
    noStack(bad.err);
  });
});
