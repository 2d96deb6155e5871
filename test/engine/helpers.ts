// Shared pieces of the engine tests: a generated batch from the sample payroll's same-currency
// rows (enabled corridors of the default seed), the CLI spawned as a user runs it, sandbox reads.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { parse } from 'csv-parse/sync';
import { addApproval, approvalsPathFor } from '../../src/approvals/approvals-file.ts';
import { loadPlan, planPayload } from '../../src/approvals/payload.ts';
import { signPlan } from '../../src/approvals/sign.ts';
import { main } from '../../src/cli/main.ts';
import { execute } from '../../src/engine/pipeline.ts';
import type { PreflightResult } from '../../src/engine/preflight.ts';
import { prepareRetry, type RetryOptions, type RetryResult } from '../../src/engine/retry-batch.ts';
import { swapReference } from '../../src/engine/swap.ts';
import { spillRows, type LoadedBatch } from '../../src/engine/prepare.ts';
import { Dec } from '../../src/money.ts';
import type { PayoutRow } from '../../src/validation/row-schemas.ts';
import { defaultSeed, startSandbox, type LocalSandbox } from '../../src/sandbox/start-sandbox.ts';

/** The attempt of a payout key of this tool (engine/identity.ts idempotencyKey); undefined for any other text. */
export function parseIdempotencyKey(key: string): { attempt: number } | undefined {
  const m = /^pb3-[0-9a-f]{32}-(\d+)$/.exec(key.trim());
  return m ? { attempt: Number(m[1]) } : undefined;
}

/** `retry` unattended (prepare, then execute: nothing is sent when the plan needs a person's confirmation), run from the results file's folder unless `here` names another. */
export const retryResults = async (o: Omit<RetryOptions, 'here'> & { here?: string }): Promise<RetryResult> =>
  execute(await prepareRetry({ here: dirname(o.resultsFile), ...o }));

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));
export const KEY = 'sk_sandbox_acme_primary';

/** A sandbox without limits whose business (KEY) holds `usd` USD and plenty of EUR, USD/EUR at 0.9215: a swap funds its USD rows. */
export const swapFundedSandbox = (usd: string): Promise<LocalSandbox> =>
  startSandbox({
    rateLimitPerSecond: null,
    monthlyQuota: null,
    seed: {
      countries: defaultSeed().countries,
      businesses: [
        {
          name: 'Acme',
          keys: [KEY],
          wallets: [
            { currency: 'USD', balance: usd },
            { currency: 'EUR', balance: '500000.00' },
          ],
          pairs: [{ baseCurrency: 'USD', quoteCurrency: 'EUR', rate: '0.9215' }],
        },
      ],
    },
  });

/** The initiate body of another payment of the business (not a row of any batch): the kill tests drain a wallet with it. */
export const anotherPaymentBody = (amount: string): string =>
  JSON.stringify({
    sourceAmount: Number(amount),
    sourceCurrency: 'USD',
    destinationCurrency: 'USD',
    destinationCountryCode: 'USA',
    method: 'ACH',
    beneficiary: {
      accountName: 'Other Payment Inc',
      routingNumber: '021000021',
      accountNumber: '000123456789',
      accountType: 'checking',
      accountCurrency: 'USD',
    },
    narration: 'another payment of the business',
  });

const sample = readFileSync(join(ROOT, 'samples/payroll-2025-01.csv'), 'utf8')
  .replace(/^\uFEFF/, '')
  .trim()
  .split(/\r?\n/);
export const HEADER = sample[0]!.split(',');
const col = (name: string) => HEADER.indexOf(name);
/** Same-currency rows of the sample: their corridors need no pair. */
const TEMPLATES = sample
  .slice(1)
  .map((l) => l.split(','))
  .filter((c) => c[col('sourceCurrency')] === c[col('destinationCurrency')]);

export interface GenOptions {
  rows: number;
  /** Every n-th row keeps its template's document (absolute path); the others are withdrawals. */
  documentsEvery?: number;
  prefix?: string;
  /** Only templates of these currencies. */
  currencies?: string[];
  amount?: (i: number) => string;
}

/** A CSV of `rows` valid rows, unique references and amounts. */
/** The reference of the swap that funds this CSV's rows debiting `currency` (engine/swap.ts swapReference). */
export function swapReferenceOfCsv(file: string, currency: string): string {
  const rows = parse<Record<string, string>>(readFileSync(file, 'utf8'), { columns: true });
  return swapReference(
    rows.filter((r) => r.sourceCurrency === currency).map((r) => r.reference!),
    currency,
  );
}

export function generateCsv(o: GenOptions): string {
  const templates = TEMPLATES.filter((t) => !o.currencies || o.currencies.includes(t[col('sourceCurrency')]!));
  const lines = [HEADER.join(',')];
  for (let i = 0; i < o.rows; i++) {
    const c = [...templates[i % templates.length]!];
    c[col('reference')] = `${o.prefix ?? 'GEN'}-${String(i + 1).padStart(4, '0')}`;
    c[col('sourceAmount')] = o.amount ? o.amount(i) : `${10 + i}.${String(i % 100).padStart(2, '0')}`;
    const withDoc = o.documentsEvery && i % o.documentsEvery === 0 && c[col('documents')];
    if (withDoc) {
      c[col('documents')] = c[col('documents')]!.split(';')
        .map((d) => join(ROOT, 'samples', d))
        .join(';');
      c[col('withdrawal')] = 'false';
    } else {
      c[col('documents')] = '';
      c[col('withdrawal')] = 'true';
    }
    lines.push(c.join(','));
  }
  return lines.join('\n') + '\n';
}

export async function workDir(prefix = 'pb-engine-'): Promise<string> {
  return mkdtemp(join(tmpdir(), prefix));
}

/** Temporary folders of a test file: `make` one, `remove` all made so far (in afterEach or afterAll). */
export function tempDirs(prefix: string): { make: () => Promise<string>; remove: () => Promise<void> } {
  const made: string[] = [];
  return {
    make: async () => {
      const d = await workDir(prefix);
      made.push(d);
      return d;
    },
    remove: async () => {
      for (const d of made.splice(0)) await rm(d, { recursive: true, force: true });
    },
  };
}

export async function writeBatch(dir: string, name: string, o: GenOptions): Promise<string> {
  const path = join(dir, name);
  await writeFile(path, generateCsv(o));
  return path;
}

/**
 * The CLI in `dir` against the sandbox at `url`, with the state folder `dir/state`, and the rows
 * of a results file written there; `inProcess`: the same command by main() in this process, for
 * a step that is not about a process.
 */
export function cliIn(
  dir: string,
  url: string,
  extraEnv: Record<string, string> = {},
): {
  state: string;
  cli: (...args: string[]) => Promise<CliRun>;
  inProcess: (...args: string[]) => Promise<CliRun>;
  results: (name: string) => Promise<Record<string, string>[]>;
} {
  const state = join(dir, 'state');
  const env = cleanEnv({ PAYOUT_BATCH_STATE_DIR: state, ...extraEnv });
  const service = ['--base-url', url, '--rate', '100'];
  return {
    state,
    cli: (...args) => runCli([...args, ...service], { cwd: dir, env }),
    inProcess: (...args) => runMain([...args, ...service], { cwd: dir, env }),
    results: async (name) => parse<Record<string, string>>(await readFile(join(dir, name), 'utf8'), { columns: true, bom: true }),
  };
}

export interface CliRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

let scriptStateDir: string | undefined;

/**
 * The state folder of the CLIs a test spawns, unless it names one: the test's own under vitest
 * (test/state.setup.ts), else (a campaign run with tsx) a temporary one for the process. Never the
 * user's: the ledgers and the quota count must not see test batches.
 */
export function testStateDir(): string {
  if (process.env.VITEST && process.env.PAYOUT_BATCH_STATE_DIR) return process.env.PAYOUT_BATCH_STATE_DIR;
  return (scriptStateDir ??= mkdtempSync(join(tmpdir(), 'pb-script-state-')));
}

/**
 * Every journal in the ledgers of a state folder (default: the test's own), newest first: where
 * run, retry and watch keep them (src/ledger/file.ts), whatever folder the batch file is in.
 */
export function ledgerJournals(root = testStateDir()): string[] {
  const base = join(root, 'ledgers');
  const out: string[] = [];
  for (const acct of existsSync(base) ? readdirSync(base) : [])
    for (const n of readdirSync(join(base, acct))) if (n.endsWith('.journal.jsonl')) out.push(join(base, acct, n));
  return out.sort((a, b) => statSync(b).mtimeMs - statSync(a).mtimeMs);
}

export function cleanEnv(extra: Record<string, string> = {}): Record<string, string> {
  const base = Object.fromEntries(
    Object.entries(process.env).filter(([k]) => !k.startsWith('PAYOUT_') && k !== 'XDG_STATE_HOME'),
  ) as Record<string, string>;
  // The client at 100 requests a second unless a test says otherwise: a command spawned without
  // --rate would otherwise wait on the spec's 5 a second against a sandbox whose limit is off.
  return { ...base, PAYOUT_API_KEY: KEY, PAYOUT_BATCH_STATE_DIR: testStateDir(), PAYOUT_BATCH_RATE: '100', ...extra };
}

/** Spawns `node dist/bin.js ...args` (`bin`: another installation's); `onSpawn` sees the child (to kill it). */
export function runCli(
  args: string[],
  o: { cwd: string; env: Record<string, string>; onSpawn?: (c: ChildProcess) => void; timeoutMs?: number; bin?: string },
): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [o.bin ?? join(ROOT, 'dist/bin.js'), ...args], {
      cwd: o.cwd,
      env: o.env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    const timer = setTimeout(() => child.kill('SIGKILL'), o.timeoutMs ?? 60_000);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
    o.onSpawn?.(child);
  });
}

/**
 * The bin's entry point, main(argv, io), in this process: the exit code it returns is the one the
 * bin exits with (src/cli/bin.ts). For a test's setup steps and for what is not about a process
 * (its start-up, signals, a terminal): it spares a CLI process's start-up (~0.45 s of CPU each).
 */
export async function runMain(args: string[], o: { cwd: string; env: Record<string, string> }): Promise<CliRun> {
  const capture = () => {
    const s = new PassThrough();
    const chunks: Buffer[] = [];
    s.on('data', (c: Buffer) => chunks.push(c));
    return { s, text: () => Buffer.concat(chunks).toString('utf8') };
  };
  const out = capture();
  const err = capture();
  const stdin = Readable.from([]) as Readable & { isTTY?: boolean };
  const code = await main(args, { stdout: out.s, stderr: err.s, stdin, env: o.env, cwd: o.cwd, stopSignal: new Promise(() => {}) });
  return { code, signal: null, stdout: out.text(), stderr: err.text() };
}

/** `payout-batch approve PLAN --as NAME --key-file KEY --yes` as a setup step: what the command signs and stores. */
export async function approveAs(plan: string, name: string, privatePem: string, keyFile = `${name}.pem`): Promise<void> {
  await addApproval(approvalsPathFor(plan), signPlan(planPayload(loadPlan(plan)), name, privatePem, keyFile));
}

/** Every file below a folder (to search them all for a secret). */
export async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries.filter((e) => e.isFile()).map((e) => join(e.parentPath, e.name));
}

/** GET as the key, waiting out a 429 (the sandbox's limit) a few times. */
async function getJson<T>(url: string, key: string): Promise<T> {
  for (let i = 0; ; i++) {
    const r = await fetch(url, { headers: { 'x-api-key': key } });
    if (r.ok || i >= 10) return (await r.json()) as T;
    await new Promise((res) => setTimeout(res, 250));
  }
}

export const initiates = (sb: LocalSandbox) => sb.requestLog().filter((r) => r.route === 'initiate');

/** Every payout of the key's business at the sandbox, its sourceAmount the amount sent (the variant reading answers the debit, fee included). */
export async function allPayouts(
  sb: { url: string; shapes?: string },
  key = KEY,
): Promise<{ id: string; sourceAmount: number; sourceCurrency: string; transactionFees: number }[]> {
  const out: { id: string; sourceAmount: number; sourceCurrency: string; transactionFees: number }[] = [];
  for (let page = 1; ; page++) {
    const body = await getJson<{
      data: { id: string; sourceAmount: number; sourceCurrency: string; transactionFees: number }[];
      meta: { total: number };
    }>(`${sb.url}/v1/payout-api/payouts?page=${page}&limit=100`, key);
    const sent = (p: (typeof body.data)[number]) =>
      new Dec(p.sourceAmount).minus(sb.shapes === 'variant' ? p.transactionFees : 0).toNumber();
    out.push(...body.data.map((p) => ({ ...p, sourceAmount: sent(p) })));
    if (body.data.length === 0 || page * 100 >= body.meta.total) return out;
  }
}

export async function wallets(sb: { url: string }, key = KEY): Promise<Map<string, string>> {
  const body = await getJson<{ data: { currency: string; balance: number }[] }>(`${sb.url}/v1/payout-api/payouts/wallets`, key);
  return new Map(body.data.map((w) => [w.currency, String(w.balance)]));
}

/** A preflight that found nothing to say: one GBP wallet of 1,000,000, three requests. */
export const preflightOf = (over: Partial<PreflightResult> = {}): PreflightResult => ({
  wallets: [{ currency: 'GBP', balance: 1_000_000 } as PreflightResult['wallets'][number]],
  corridors: [],
  rowIssues: new Map(),
  estimatedFees: new Map(),
  feesUnknown: new Set(),
  quoteGroups: new Map(),
  warnings: [],
  requests: 3,
  ...over,
});

/** A valid row for the engine's pure tests: a GBP withdrawal by Faster Payments. */
export const payoutRow = (rowNumber: number, amount = '10', currency = 'GBP'): PayoutRow => ({
  rowNumber,
  reference: `R-${rowNumber}`,
  sourceAmount: new Dec(amount),
  sourceCurrency: currency,
  destinationCurrency: currency,
  destinationCountryCode: 'GBR',
  method: 'FASTER_PAYMENTS',
  beneficiary: { accountName: 'A', accountCurrency: currency },
  narration: 'n',
  documents: [],
  withdrawal: true,
});

/** A loaded CSV batch of these rows, its identity fixed. */
export const batchOf = (payouts: PayoutRow[], file = '/b.csv'): LoadedBatch => ({
  file,
  format: 'csv',
  inputColumns: [],
  rows: spillRows(payouts.map((p) => ({ rowNumber: p.rowNumber, cells: {}, payout: p, problems: [] }))),
  fileProblems: [],
  identity: { batchId: 'a'.repeat(64), source: 'content', fileSha256: 'a'.repeat(64) },
});

/** A fetch whose initiates matching `sentFor` (its body, every one by default) the service refuses: nothing created. */
export const refusingInitiates =
  (sentFor: (body: string) => boolean = () => true): typeof fetch =>
  async (input, init) =>
    (input as string).endsWith('/initiate') && sentFor(Buffer.from((init?.body as Uint8Array | undefined) ?? []).toString())
      ? new Response(JSON.stringify({ statusCode: 400, message: 'Insufficient funds', error: 'INSUFFICIENT_FUNDS' }), {
          status: 400,
          headers: { 'content-type': 'application/json' },
        })
      : fetch(input, init);
