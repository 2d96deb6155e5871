// The conventions a user of gh, npm or the Stripe CLI expects, on the compiled CLI: help from the
// bare command and -h, short flags (-y, -q), --dry-run that sends nothing, unknown flags named
// once, money in every --json as decimal strings, `run` off a terminal refused before any request,
// XLSX results with unique column names and amounts as numbers,
// the environment label explained. One sandbox for the file; few spawns per case.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as XLSX from 'xlsx';
import { startSandbox, type LocalSandbox } from '../../src/sandbox/start-sandbox.ts';
import { commands } from '../../src/cli/commands/commands.ts';
import { TEST_SHAPES } from '../shapes.ts';
import { KEY, ROOT, allPayouts, cleanEnv, runCli, runMain, tempDirs, writeBatch } from '../engine/helpers.ts';

let sb: LocalSandbox;
const dirs = tempDirs('pb-conventions-');
beforeAll(async () => {
  sb = await startSandbox({ shapes: TEST_SHAPES, rateLimitPerSecond: null, monthlyQuota: null });
});
afterAll(async () => {
  await sb?.close();
  await dirs.remove();
});

/** A folder with a batch of `rows` rows, and the CLI run in it against the sandbox as `key`. */
async function batchDir(prefix: string, rows = 3, key = KEY) {
  const dir = await dirs.make();
  await writeBatch(dir, 'payroll.csv', { rows, prefix });
  const env = cleanEnv({ PAYOUT_API_KEY: key, PAYOUT_BATCH_STATE_DIR: join(dir, 'state') });
  const cli = (...args: string[]) => runCli(args, { cwd: dir, env });
  const connected = (...args: string[]) => cli(...args, '--base-url', sb.url);
  /** The same entry point in this process (main()): for what is not about the process; files by absolute path. */
  const inProcess = (...args: string[]) => runMain([...args, '--base-url', sb.url], { cwd: dir, env });
  return { dir, cli, connected, inProcess };
}

const names = commands.map((c) => c.command.split(' ')[0]!);

describe('help', () => {
  it('bare payout-batch and -h list every command on stdout and exit 0; run and sandbox -h show the short flags', async () => {
    const { cli } = await batchDir('HELP', 1);
    for (const args of [[], ['-h']]) {
      const r = await cli(...args);
      expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(0);
      expect(r.stderr).toBe('');
      expect(r.stdout).toContain('Commands:');
      for (const n of names) expect(r.stdout).toContain(`payout-batch ${n}`);
    }
    const run = await cli('run', '--help');
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/-y, --yes/);
    expect(run.stdout).toMatch(/-q, --quiet/);
    expect(run.stdout).toContain('--dry-run');
    const sandbox = await cli('sandbox', '-h');
    expect(sandbox.stdout).toMatch(/-q, --quiet/);
  });
});

describe('unknown flags and commands', () => {
  it('names each unknown flag once, as typed, even when it took the file as its value; an unknown command says so; a missing argument shows the usage line', async () => {
    const { cli, dir } = await batchDir('UNKNOWN', 1);
    const inProcess = (...args: string[]) => runMain(args, { cwd: dir, env: cleanEnv() });
    const r = await cli('validate', '--bogus-flag', 'x', '--bogus-flag=y', '--max-problem', '3', 'payroll.csv', '-z', 'payroll.csv');
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('unknown flags: --bogus-flag, --max-problem, -z');
    expect(r.stderr.match(/bogus/gi)).toHaveLength(1);
    expect(r.stderr).not.toMatch(/bogusFlag|maxProblem/);
    // (the next two in this process: yargs' messages, reworded by main() as the bin's are)
    const typo = await inProcess('validat', 'payroll.csv');
    expect(typo.code).toBe(2);
    expect(typo.stderr).toContain('unknown command "validat": did you mean validate?');
    const missing = await inProcess('attach', 'p_1');
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('missing an argument: payout-batch attach <payout> <files..>');
  });
});

describe('run', () => {
  it('off a terminal without --yes is refused (exit 3) before any request of the key', async () => {
    const key = sb.keys.find((k) => k.key !== KEY)!.key;
    const { connected } = await batchDir('NOTTY', 2, key);
    const r = await connected('run', 'payroll.csv');
    expect(r.code, r.stderr).toBe(3);
    expect(r.stderr).toMatch(/not a terminal.*pass --yes \(-y\)/);
    expect(r.stderr).toContain('Nothing was sent');
    expect(sb.requestLog().filter((e) => e.apiKey === key)).toEqual([]);
  });

  it('--dry-run shows the plan, with the environment explained (as account does), and sends no payout (no --yes needed)', async () => {
    const before = (await allPayouts(sb)).length;
    const { connected, inProcess, dir } = await batchDir('DRYRUN', 3);
    const r = await connected('run', 'payroll.csv', '--dry-run');
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('Plan for');
    expect(r.stdout).toContain(
      `environment  custom (a base URL given with --base-url or $PAYOUT_BASE_URL; not a known service environment) ${sb.url}`,
    );
    expect(sb.requestLog().filter((e) => e.route === 'initiate' && e.apiKey === KEY)).toHaveLength(0);
    expect(await allPayouts(sb)).toHaveLength(before);
    expect(existsSync(join(dir, 'payroll.results.csv'))).toBe(false);
    // account names the environment too, and says what it means
    const account = await inProcess('account');
    expect(account.stdout).toMatch(
      /Environment {2}custom .*\n {13}a base URL given with --base-url or \$PAYOUT_BASE_URL; not a known service environment\n/,
    );
  });

  it('-y -q sends unattended and prints nothing but writes the results; an XLSX results sheet has unique column names and every amount as a number in a money format', async () => {
    const before = (await allPayouts(sb)).length;
    const { connected, dir } = await batchDir('QUIET', 3);
    const r = await connected('run', 'payroll.csv', '-y', '-q', '--results', 'payroll.results.xlsx');
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe('');
    expect(await allPayouts(sb)).toHaveLength(before + 3);
    const book = XLSX.read(readFileSync(join(dir, 'payroll.results.xlsx')), { cellNF: true });
    const sheet = book.Sheets[book.SheetNames[0]!]!;
    const [header, ...rows] = XLSX.utils.sheet_to_json<unknown[]>(sheet, { header: 1, raw: true });
    expect(rows).toHaveLength(3);
    const names = header!.map(String);
    expect(new Set(names).size).toBe(names.length);
    expect(names).toContain('documentUrls');
    for (const column of ['sourceAmount', 'fee', 'totalDeductible']) {
      const c = names.indexOf(column);
      expect(c, column).toBeGreaterThanOrEqual(0);
      for (let i = 0; i < rows.length; i++) {
        const cell = sheet[XLSX.utils.encode_cell({ r: i + 1, c })] as XLSX.CellObject;
        expect([column, cell.t, cell.z]).toEqual([column, 'n', expect.stringMatching(/^#,##0(\.0+)?/)]);
      }
    }
  });
});

/** Keys whose value is an amount of money (or a rate) wherever they appear in a --json output. */
const MONEY_KEY =
  /^(amount|sourceAmount|destinationAmount|balance|balanceAfter|shortfall|fee|fees|estimatedFees|transactionFees|total|totalDeductible|debited|refunded|net|expectedNet|rate|quotedRate|appliedRate)$/;

/** Every money value of a JSON document, with its path. */
function moneyValues(v: unknown, path = '$', out: { path: string; value: unknown }[] = []) {
  if (Array.isArray(v)) v.forEach((x, i) => moneyValues(x, `${path}[${i}]`, out));
  else if (v && typeof v === 'object')
    for (const [k, x] of Object.entries(v)) {
      // (requests.total: a count of requests, not money)
      const money = MONEY_KEY.test(k) && !(k === 'total' && path.endsWith('.requests'));
      if (money && (typeof x === 'number' || typeof x === 'string')) out.push({ path: `${path}.${k}`, value: x });
      moneyValues(x, `${path}.${k}`, out);
    }
  return out;
}

describe('--json', () => {
  it('every command gives money as decimal strings, never numbers', async () => {
    const { connected, inProcess, dir } = await batchDir('JSONMONEY', 3);
    const [batch, results] = [join(dir, 'payroll.csv'), join(dir, 'payroll.results.csv')];
    // run as a process; the other commands print their --json through the same code in this one
    const outputs: Record<string, { code: number | null; stdout: string; stderr: string }> = {
      validate: await runMain(['validate', batch, '--json'], { cwd: dir, env: cleanEnv() }),
      plan: await inProcess('plan', batch, '--json'),
      run: await connected('run', 'payroll.csv', '-y', '--json'),
      retry: await inProcess('retry', results, '-y', '--json'),
      status: await inProcess('status', results, '--json'),
      reconcile: await inProcess('reconcile', results, '--json'),
      account: await inProcess('account', '--json'),
    };
    let strings = 0;
    for (const [command, r] of Object.entries(outputs)) {
      // (status: 5, the payouts are still in progress)
      expect([0, 1, 5], `${command}: ${r.stderr}`).toContain(r.code);
      const found = moneyValues(JSON.parse(r.stdout));
      expect(
        found.filter((m) => typeof m.value === 'number'),
        command,
      ).toEqual([]);
      strings += found.filter((m) => typeof m.value === 'string' && /^-?\d+(\.\d+)?$/.test(m.value)).length;
    }
    expect(strings).toBeGreaterThan(10);
    // the HTML report's path, which --json would otherwise hide
    expect(JSON.parse(outputs.run!.stdout).report).toMatch(/payroll\.results\.html$/);
    // (a retry with nothing to send writes neither a retry-1 file nor its report)
    const retried = JSON.parse(outputs.retry!.stdout) as { results?: string; report?: string };
    expect([retried.results, retried.report]).toEqual([undefined, undefined]);
  });
});

describe('start-up', () => {
  it('validate (and its --help) never loads the sandbox: it is a chunk of its own, imported only on demand', () => {
    const dist = join(ROOT, 'dist');
    const files = readdirSync(dist).filter((f) => f.endsWith('.js'));
    const staticImports = (f: string) =>
      [...readFileSync(join(dist, f), 'utf8').matchAll(/(?:from|import)\s*"\.\/([^"]+\.js)"/g)].map((m) => m[1]!);
    const main = files.find((f) => f.startsWith('main-'))!;
    const validate = files.find((f) => f.startsWith('validate-'))!;
    const loaded = new Set<string>();
    const visit = (f: string) => {
      if (loaded.has(f)) return;
      loaded.add(f);
      staticImports(f).forEach(visit);
    };
    ['bin.js', main, validate].forEach(visit);
    // (the sandbox's swap route marks the swaps its faults reverse: a string only the server holds)
    const sandboxServer = files.filter((f) => readFileSync(join(dist, f), 'utf8').includes('"sandbox-fault"'));
    expect(sandboxServer.length).toBeGreaterThan(0);
    for (const f of sandboxServer) expect(loaded.has(f), f).toBe(false);
  });
});
