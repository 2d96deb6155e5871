// How our own cost grows with the batch: validate and plan at 1,000, 10,000 and 100,000 rows, and
// a resume from a journal of 100,000 created rows.
//   npx tsx test/bench/scale.ts [--sizes 1000,10000,100000] [--runs K]
//
// Every measurement is the real CLI in a child process (node dist/bin.js, as a user runs it),
// best wall time of K runs (default 2), and the child's maxRSS (process.resourceUsage() read at its
// exit). A "startup" run (payout-batch --version: Node, tsx, the modules) is measured the same way
// and subtracted to give the work itself ("net"); growth per 10x step is net(10N) / net(N)
// (linear = 10, better than linear < 10).
//   validate FILE                          offline, no network
//   plan FILE --no-quote --base-url SB --rate 1000
//                                          + preflight against a local sandbox (no latency, no rate
//                                          limit: our cost, not the service's); estimated fees
//   resume: run FILE --yes --base-url SB --rate 1000, after a journal in which all 100,000 rows are created
//                                          (written by the engine's own openSession and record with
//                                          the lines a run writes: quote, initiating, created);
//                                          it folds the journal, validates the file, finds nothing
//                                          to send and rewrites the results file
//   journal fold                           foldBatch of that journal alone, through the file ledger of its state folder, as
//                                          run folds it (engine/session.ts)
// Rows: the sample payroll's same-currency rows, unique references and amounts (test/engine/helpers).
// Target: linear or better. The resume has no time target any more: 100,000 rows are 20 months of
// a key's quota, and the journal's fold has one implementation, with no cache of its own (issue 19).
import { spawnChild } from './args.ts';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { accountOf, foldBatch } from '../../src/ledger/account-ledger.ts';
import { FileLedger, ledgerDirFor } from '../../src/ledger/file.ts';
import { startSandbox } from '../../src/sandbox/start-sandbox.ts';
import { ROOT, cleanEnv } from '../engine/helpers.ts';
import { writeCreatedJournal, writeLargeBatch } from './batches.ts';
import { saveFigures } from './figures.ts';

const self = fileURLToPath(import.meta.url);
const MB = 1024 * 1024;

// ------------------------------------------------------------------ child phases

if (process.argv[2] === '--phase') {
  const [, , , phase, a1, baseUrl, stateDir] = process.argv;
  const t0 = performance.now();
  let info: Record<string, unknown> = {};
  if (phase === 'journal') {
    // A journal of every row created, as `run` would have left it.
    info = await writeCreatedJournal(a1!, { baseUrl: baseUrl!, stateDir: stateDir! });
  } else if (phase === 'fold') {
    // a1: the batch id
    const account = accountOf(baseUrl!);
    info = { rows: (await foldBatch(new FileLedger(account, ledgerDirFor(stateDir!, account)), a1!)).folded.rows.size };
  }
  const ms = performance.now() - t0;
  process.stdout.write(JSON.stringify({ ms, maxRssMb: process.resourceUsage().maxRSS / 1024, ...info }));
  process.exit(0);
}

// ------------------------------------------------------------------ parent

interface Point {
  ms: number;
  rssMb: number;
  code: number | null;
  extra?: string;
}

async function main(): Promise<number> {
  const argv = process.argv.slice(2);
  let sizes = [1_000, 10_000, 100_000];
  let runs = 2;
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--sizes') sizes = argv[++i]!.split(',').map(Number);
    else if (argv[i] === '--runs') runs = Number(argv[++i]);
    else throw new Error(`unknown argument ${argv[i]}: use [--sizes 1000,10000,100000] [--runs K]`);
  }
  const dir = mkdtempSync(join(tmpdir(), 'pb-bench-scale-'));
  const rssHook = join(dir, 'rss-hook.cjs');
  writeFileSync(
    rssHook,
    'process.on("exit", () => { try { require("fs").writeFileSync(process.env.PB_RSS_FILE, String(process.resourceUsage().maxRSS)); } catch {} });\n',
  );
  const rssFile = join(dir, 'rss');
  const sb = await startSandbox({ rateLimitPerSecond: null, monthlyQuota: null });
  /** Best of `runs` of the CLI with these args; maxRSS the worst. */
  const cli = async (args: string[], cwd: string, stateDir: string, times = runs, before?: () => void): Promise<Point> => {
    let best: Point | undefined;
    for (let k = 0; k < times; k++) {
      before?.();
      const env = cleanEnv({ PAYOUT_BATCH_STATE_DIR: stateDir, PB_RSS_FILE: rssFile, NODE_OPTIONS: `--require ${rssHook}` });
      const r = await spawnChild([join(ROOT, 'dist/bin.js'), ...args], env, cwd);
      const rssMb = Number(readFileSync(rssFile, 'utf8')) / 1024;
      if (process.env.SCALE_DEBUG) console.error(r.stdout.slice(-1500), r.stderr.slice(-1500));
      if ((r.code === 2 || r.code === 4 || r.code === null) && args[0] !== '--version')
        throw new Error(`${args.join(' ')}: exit ${r.code}\n${r.stderr.slice(-1500)}`);
      if (!best || r.ms < best.ms) best = { ms: r.ms, rssMb: Math.max(rssMb, best?.rssMb ?? 0), code: r.code };
      else best.rssMb = Math.max(best.rssMb, rssMb);
    }
    return best!;
  };
  try {
    const startup = await cli(['--version'], dir, join(dir, 'state'), Math.max(runs, 3));
    console.log(
      `startup (payout-batch --version): ${(startup.ms / 1000).toFixed(2)} s, ${startup.rssMb.toFixed(0)} MB maxRSS; best of ${runs} runs below, net = wall - startup`,
    );
    const table: { what: string; n: number; p: Point }[] = [];
    let last = sizes[sizes.length - 1]!;
    let lastFile = '';
    for (const n of sizes) {
      const sub = join(dir, `n${n}`);
      const file = join(sub, 'batch.csv');
      (await import('node:fs')).mkdirSync(sub);
      await writeLargeBatch(file, n);
      process.stdout.write(`${n.toLocaleString('en')} rows (${(statSync(file).size / MB).toFixed(1)} MB): validate ... `);
      const v = await cli(['validate', file, '--max-problems', '1'], sub, join(sub, 'state'));
      process.stdout.write(`${(v.ms / 1000).toFixed(2)} s; plan ... `);
      const p = await cli(['plan', file, '--no-quote', '--base-url', sb.url, '--rate', '1000'], sub, join(sub, 'state'));
      console.log(`${(p.ms / 1000).toFixed(2)} s (exit ${p.code})`);
      if (v.code !== 0) throw new Error(`validate exit ${v.code}: the generated file has invalid rows`);
      table.push({ what: 'validate', n, p: v }, { what: 'plan --no-quote', n, p });
      last = n;
      lastFile = file;
    }

    // resume from a journal of `last` rows, all created
    const sub = join(lastFile, '..');
    process.stdout.write(`journal of ${last.toLocaleString('en')} created rows ... `);
    const j = await spawnChild(['--import', 'tsx', self, '--phase', 'journal', lastFile, sb.url, join(sub, 'state')], cleanEnv(), ROOT);
    if (j.code !== 0) throw new Error(j.stderr);
    const jr = JSON.parse(j.stdout) as { rows: number; batchId: string; bytes: number };
    console.log(`${jr.rows.toLocaleString('en')} rows, ${(jr.bytes / MB).toFixed(1)} MB`);
    const before = sb.requestLog().length;
    const runArgs = ['run', lastFile, '--yes', '--base-url', sb.url, '--rate', '1000'];
    const resume = await cli(runArgs, sub, join(sub, 'state'));
    const sent = sb.requestLog().slice(before);
    const bestFold = async (phase: string) => {
      const folds: { ms: number; maxRssMb: number; rows: number }[] = [];
      for (let k = 0; k < Math.max(runs, 3); k++) {
        const f = await spawnChild(['--import', 'tsx', self, '--phase', phase, jr.batchId, sb.url, join(sub, 'state')], cleanEnv(), ROOT);
        folds.push(JSON.parse(f.stdout) as (typeof folds)[number]);
      }
      return folds.sort((a, b) => a.ms - b.ms)[0]!;
    };
    const fold = await bestFold('fold');

    console.log('');
    console.log(
      `${'what'.padEnd(18)}${'rows'.padStart(9)}${'wall'.padStart(9)}${'net'.padStart(9)}${'x per 10x'.padStart(11)}${'maxRSS'.padStart(9)}${'x per 10x'.padStart(11)}  exit`,
    );
    const net = (p: Point) => Math.max(1, p.ms - startup.ms);
    for (const what of ['validate', 'plan --no-quote']) {
      const rows = table.filter((t) => t.what === what);
      rows.forEach((t, i) => {
        const prev = rows[i - 1];
        const step = prev && t.n === prev.n * 10;
        console.log(
          `${what.padEnd(18)}${t.n.toLocaleString('en').padStart(9)}${`${(t.p.ms / 1000).toFixed(2)} s`.padStart(9)}${`${(net(t.p) / 1000).toFixed(2)} s`.padStart(9)}` +
            `${(step ? (net(t.p) / net(prev.p)).toFixed(2) : '').padStart(11)}${`${t.p.rssMb.toFixed(0)} MB`.padStart(9)}${(step ? (t.p.rssMb / prev.p.rssMb).toFixed(2) : '').padStart(11)}  ${t.p.code}`,
        );
      });
    }
    const runLine = (what: string, p: Point) =>
      console.log(
        `${what.padEnd(18)}${last.toLocaleString('en').padStart(9)}${`${(p.ms / 1000).toFixed(2)} s`.padStart(9)}${`${(net(p) / 1000).toFixed(2)} s`.padStart(9)}${''.padStart(11)}${`${p.rssMb.toFixed(0)} MB`.padStart(9)}${''.padStart(11)}  ${p.code}`,
      );
    const foldLine = (what: string, f: { ms: number; maxRssMb: number; rows: number }) =>
      console.log(
        `${what.padEnd(18)}${f.rows.toLocaleString('en').padStart(9)}${''.padStart(9)}${`${(f.ms / 1000).toFixed(2)} s`.padStart(9)}${''.padStart(11)}${`${f.maxRssMb.toFixed(0)} MB`.padStart(9)}`,
      );
    runLine('resume (run)', resume);
    foldLine('journal fold', fold);
    console.log('');
    console.log(
      `resume: ${sent.length} requests to the sandbox (${[...new Set(sent.map((r) => r.route))].join(', ') || 'none'}), no initiate: ${!sent.some((r) => r.route === 'initiate')}`,
    );
    console.log('plan exit 3 = the generated amounts exceed the seed wallets (the guard that stops a run); the plan is built all the same');
    const steps = (what: string) => {
      const rows = table.filter((t) => t.what === what);
      return rows.slice(1).map((t, i) => net(t.p) / net(rows[i]!.p));
    };
    const linear = [...steps('validate'), ...steps('plan --no-quote')].every((x) => x <= 10.5);
    console.log(`target: growth linear or better (every net step <= 10, 5% slack): ${linear ? 'MET' : 'MISSED'}`);
    const s2 = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
    const growth = (what: string) => {
      const rows = table.filter((t) => t.what === what);
      return rows.map((t, i) => [
        what,
        t.n,
        s2(t.p.ms),
        s2(net(t.p)),
        i && t.n === rows[i - 1]!.n * 10 ? (net(t.p) / net(rows[i - 1]!.p)).toFixed(2) : null,
        `${t.p.rssMb.toFixed(0)} MB`,
      ]);
    };
    saveFigures({
      name: 'scale',
      caption: `The CLI in a child process, best of ${runs} run(s); net = minus the start of \`payout-batch --version\` (${s2(startup.ms)}, ${startup.rssMb.toFixed(0)} MB)`,
      columns: ['what', 'rows', 'wall', 'net', 'net growth per 10×', 'max RSS'],
      rows: [
        ...growth('validate'),
        ...growth('plan --no-quote'),
        ['resume: `run` with every row created', last, s2(resume.ms), s2(net(resume)), null, `${resume.rssMb.toFixed(0)} MB`],
        ['journal fold alone (`foldBatch`, as run folds it)', fold.rows, s2(fold.ms), null, null, `${fold.maxRssMb.toFixed(0)} MB`],
      ],
      notes: [
        `Target: growth linear or better (net growth per 10× at most 10): ${linear ? 'MET' : 'MISSED'}.`,
        `The resume sent ${sent.length} request(s) (${[...new Set(sent.map((r) => r.route))].join(', ') || 'none'}), no initiate.`,
      ],
    });
    return linear ? 0 : 1;
  } finally {
    await sb.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

process.exitCode = await main();
