// Fuzz: `watch DIR --once` on one or two watch folders ("hosts": a folder, HOME and state folder each; a PostgreSQL
// team ledger shared or not), judged by the sandbox's own records, never by the tool's journal.
//   npx tsx test/chaos/watch-fuzz.ts [--seed S] [--runs N] [--verbose] [--only I] [--scenario JSON] [--keep]
//
// Each scenario (fast-check, from the seed): 2 or 3 batches of 3 to 10 rows, and a random schedule of
//   drops: a batch or a variant of it (the same bytes under a new name, re-saved as XLSX, rows reordered, a row added
//     or removed, an amount or a name changed) into one host's inbox or both, written at once, with a `.ready`
//     marker, as a dot-name renamed into place, slowly in chunks through one open file (pauses under settleSeconds,
//     while the next steps run), or written then rewritten whole as another variant;
//   ticks: `node dist/bin.js watch DIR --once` (dist/ as built when the campaign started) on either host, sometimes two
//     at once (both hosts, or one host twice); at its first to third initiate sometimes SIGKILLed or SIGTERMed, the
//     claimed file moved out of processing/ by hand or edited in place (size and mtime kept), or the sandbox's clock
//     moved forward; a claimed file moved out of processing/ by hand (back into the inbox, or away) or edited in place
//     between ticks; the sandbox's clock moved forward (1 h, 25 h, 31 days).
// Then both hosts tick, unkilled, until nothing is left to take. Checked:
//   (a) no reference has two payouts (no FAILED payouts are made: every one counts), none under a key of no reference;
//   (b) every payout matches its reference's row (payee, amount, currencies) in a content that was complete when
//       written (its final bytes); every claim whose run created payouts, and every claim in done/, hashed at its claim
//       (`.claim.json` sha256) to such a content, and a done/ one's file still does (unless its writer paused longer
//       than settleSeconds, as the README says a half-written file is then taken: counted apart);
//   (c) every file ends in done/ or failed/ (a summary with a reason for failed/), or stays in the inbox without its
//       marker under requireReady, or in processing/ with a reason printed; every row of a done/ file shows a payout of
//       its reference at the service, or an error code;
//   (d) no "unexpected error" nor stack trace on a tick's output, a killed one's too.
// Exits 1 when any check fails, printing the scenario: `--scenario JSON --only I` replays it.
import { createHash } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { mkdir, open, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { parse } from 'csv-parse/sync';
import { stringify } from 'csv-stringify/sync';
import * as XLSX from 'xlsx';
import { idempotencyKey } from '../../src/engine/identity.ts';
import { readResults } from '../../src/results/read.ts';
import { startSandbox } from '../../src/sandbox/start-sandbox.ts';
import { cleanEnv, generateCsv, ROOT, runCli, workDir, type CliRun } from '../engine/helpers.ts';
import { startCluster, type Cluster } from '../pg/cluster.ts';
import { fuzzFlags, matches, parseJson, runScenarios, serviceRecords, twicePaid, threw, leave } from './fuzz-judge.ts';

const { given: GIVEN, seed: SEED, runs: RUNS, verbose: VERBOSE, only: ONLY, keep: KEEP } = fuzzFlags<Scenario>();

// The CLI as built when the campaign started (a build meanwhile empties dist/ under a tick): an installation of its own.
const INSTALLED = mkdtempSync(join(tmpdir(), 'pb-watch-fuzz-cli-'));
cpSync(join(ROOT, 'dist'), join(INSTALLED, 'dist'), { recursive: true });
cpSync(join(ROOT, 'package.json'), join(INSTALLED, 'package.json'));
symlinkSync(join(ROOT, 'node_modules'), join(INSTALLED, 'node_modules'));

const VARIANTS = ['orig', 'orig', 'sameName', 'reorder', 'add', 'remove', 'amount', 'name'] as const;
const MODES = ['plain', 'ready', 'tmp', 'slow', 'slow', 'rewrite'] as const;
interface Drop {
  t: 'drop';
  batch: number;
  variant: (typeof VARIANTS)[number];
  xlsx: boolean;
  /** 0 or 1: that host's inbox; 2: both. */
  host: 0 | 1 | 2;
  mode: (typeof MODES)[number];
  pick: number;
}
interface Tick {
  t: 'tick';
  host: 0 | 1;
  /** Another tick at once: on the other host, or on this one. */
  with: 'none' | 'other' | 'same';
  /** At its kill-th initiate: SIGKILL, the claimed file moved out of processing/, or the sandbox's clock moved. */
  during: 'none' | 'kill' | 'term' | 'move' | 'edit' | 'clock';
  kill: number;
}
interface Move {
  t: 'move';
  host: 0 | 1;
  /** Back into the inbox (with a marker), away, or edited in place (size and mtime kept). */
  how: 'back' | 'away' | 'edit';
}
interface Clock {
  t: 'clock';
  hours: number;
}
type Step = Drop | Tick | Move | Clock;
interface Scenario {
  team: boolean;
  requireReady: boolean;
  settle: 1 | 2;
  batches: number[];
  drop: number;
  /** 5xx after create on initiate (rows of unknown outcome once the client's retries are spent), and latency 20-80 ms. */
  error?: number;
  latency?: boolean;
  steps: Step[];
}

const dropArb: fc.Arbitrary<Drop> = fc.record({
  t: fc.constant('drop' as const),
  batch: fc.nat(2),
  variant: fc.constantFrom(...VARIANTS),
  xlsx: fc.boolean(),
  host: fc.constantFrom<0 | 1 | 2>(0, 1, 2),
  mode: fc.constantFrom(...MODES),
  pick: fc.nat(1000),
});
const stepArb: fc.Arbitrary<Step> = fc.oneof(
  { weight: 4, arbitrary: dropArb },
  {
    weight: 4,
    arbitrary: fc.record({
      t: fc.constant('tick' as const),
      host: fc.constantFrom<0 | 1>(0, 1),
      with: fc.constantFrom<Tick['with']>('none', 'none', 'other', 'same', 'same'),
      during: fc.constantFrom<Tick['during']>('none', 'none', 'kill', 'kill', 'term', 'move', 'edit', 'clock'),
      kill: fc.integer({ min: 1, max: 3 }),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      t: fc.constant('move' as const),
      host: fc.constantFrom<0 | 1>(0, 1),
      how: fc.constantFrom<Move['how']>('back', 'away', 'edit'),
    }),
  },
  { weight: 1, arbitrary: fc.record({ t: fc.constant('clock' as const), hours: fc.constantFrom(1, 25, 24 * 31) }) },
);
const scenarioArb: fc.Arbitrary<Scenario> = fc.record({
  team: fc.boolean(),
  requireReady: fc.constantFrom(false, false, true),
  settle: fc.constantFrom<1 | 2>(1, 2),
  batches: fc.array(fc.integer({ min: 3, max: 10 }), { minLength: 2, maxLength: 3 }),
  drop: fc.constantFrom(0, 0, 0.3),
  error: fc.constantFrom(0, 0, 0.3),
  latency: fc.boolean(),
  steps: fc
    .tuple(fc.array(dropArb, { minLength: 1, maxLength: 3 }), fc.array(stepArb, { minLength: 3, maxLength: 12 }))
    .map(([drops, rest]) => [...drops, ...rest]),
});

type Row = Record<string, string>;
const sha = (b: Buffer | string) => createHash('sha256').update(b).digest('hex');

function bytesOf(header: string[], rows: Row[], xlsx: boolean): Buffer {
  const aoa = [header, ...rows.map((r) => header.map((h) => r[h] ?? ''))];
  if (!xlsx) return Buffer.from(stringify(aoa));
  const ws = XLSX.utils.aoa_to_sheet(aoa);
  for (const [addr, cell] of Object.entries(ws) as [string, XLSX.CellObject][]) if (!addr.startsWith('!') && cell.t === 's') cell.z = '@';
  const wb = XLSX.utils.book_new();
  XLSX.utils.book_append_sheet(wb, ws, 'Sheet1');
  return XLSX.write(wb, { type: 'buffer', bookType: 'xlsx' }) as Buffer;
}

const STACK = /unexpected error|\n\s+at .+:\d+:\d+\)?/i;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Outcome {
  violations: string[];
  notes: string[];
  drops: number;
  ticks: number;
  kills: number;
  payouts: number;
  done: number;
  failed: number;
  lateTakes: number;
}

let cluster: Cluster | undefined;

async function runScenario(sc: Scenario, n: number): Promise<Outcome> {
  const out: Outcome = { violations: [], notes: [], drops: 0, ticks: 0, kills: 0, payouts: 0, done: 0, failed: 0, lateTakes: 0 };
  const root = await workDir('pb-watch-fuzz-');
  let onInitiate = () => {};
  const sb = await startSandbox({
    rateLimitPerSecond: null,
    monthlyQuota: null,
    randomSeed: SEED + n,
    onRequest: (e) => void (e.route === 'initiate' && onInitiate()),
  });
  const background: Promise<unknown>[] = [];
  try {
    const ledger = sc.team ? await (cluster ??= await startCluster()).newDatabase() : undefined;
    const hosts = await Promise.all(
      ['alpha', 'beta'].map(async (name) => {
        const dir = join(root, name);
        await mkdir(join(dir, 'inbox'), { recursive: true });
        await mkdir(join(dir, 'home'), { recursive: true });
        const config = {
          environment: 'sandbox',
          baseUrl: sb.url,
          settleSeconds: sc.settle,
          requireReady: sc.requireReady,
          rate: 500,
          claimStaleSeconds: 10,
        };
        await writeFile(join(dir, 'payout-batch.json'), JSON.stringify(config));
        const env = cleanEnv({
          HOME: join(dir, 'home'),
          PAYOUT_BATCH_STATE_DIR: join(dir, 'home', 'state'),
          PAYOUT_BATCH_RATE: '500',
          ...(ledger ? { PAYOUT_BATCH_LEDGER_URL: ledger } : {}),
        });
        return { name, dir, env };
      }),
    );
    // the batches: references unique per batch, amounts unique across them (no PROBABLE_DUPLICATE between batches)
    let header: string[] = [];
    const bases = sc.batches.map((rows, b) => {
      const csv = generateCsv({
        rows,
        currencies: ['GBP', 'EUR'],
        prefix: `WF${n}B${b}`,
        amount: (i) => `${(b + 1) * 100 + i}.${String(10 + i)}`,
      });
      const parsed = parse<Row>(csv, { columns: true });
      header = Object.keys(parsed[0]!);
      return parsed;
    });
    /** Every content that was complete once written: its digest → its rows. */
    const complete = new Map<string, Row[]>();
    const refs = new Set<string>();
    /** Names (per host) whose writer paused longer than settleSeconds: taken half-written as the README says. */
    const late = new Set<string>();
    /** Each inbox name's latest writer still at work. */
    let serial = 0;

    const variantOf = (d: Drop): Row[] => {
      const base = bases[d.batch % bases.length]!.map((r) => ({ ...r }));
      const at = d.pick % base.length;
      switch (d.variant) {
        case 'reorder':
          return base.reverse();
        case 'add':
          return [
            ...base,
            {
              ...base[at]!,
              reference: `WF${n}B${d.batch % bases.length}-ADD${d.pick}`,
              sourceAmount: `${900 + (d.pick % 97)}.${10 + (serial % 80)}`,
            },
          ];
        case 'remove':
          return base.length > 1 ? base.filter((_, i) => i !== at) : base;
        case 'amount':
          base[at]!.sourceAmount = `${700 + (d.pick % 97)}.01`;
          return base;
        case 'name':
          base[at]!.accountName = 'Grace Hopper';
          return base;
        default:
          return base;
      }
    };
    const marker = (p: string) => writeFile(`${p}.ready`, '');
    const writers = new Map<string, Promise<unknown>>();
    const noteComplete = (bytes: Buffer, rows: Row[]) => {
      complete.set(sha(bytes), rows);
      for (const r of rows) refs.add(r.reference!);
    };

    const drop = async (d: Drop, k: number): Promise<string> => {
      serial++;
      const rows = variantOf(d);
      const ext = d.xlsx ? 'xlsx' : 'csv';
      const name = d.variant === 'sameName' ? `pay-${d.batch % bases.length}.${ext}` : `pay-${d.batch % bases.length}-${k}.${ext}`;
      const bytes = bytesOf(header, rows, d.xlsx);
      noteComplete(bytes, rows);
      const targets = (d.host === 2 ? hosts : [hosts[d.host]!]).map((h) => join(h.dir, 'inbox', name));
      const withMarker = sc.requireReady || d.mode === 'ready' || (d.mode === 'slow' && d.pick % 2 === 0);
      const write = async (p: string) => {
        switch (d.mode) {
          case 'plain':
          case 'ready':
            await writeFile(p, bytes);
            break;
          case 'tmp': {
            const tmp = join(p, '..', `.${name}.${k}.tmp`);
            await writeFile(tmp, bytes);
            await rename(tmp, p);
            break;
          }
          case 'slow': {
            // one open file, as a program writes it: pauses well under settleSeconds
            const fh = await open(p, 'w');
            const chunks = 3 + (d.pick % 4);
            const size = Math.ceil(bytes.length / chunks);
            let last = performance.now();
            for (let i = 0; i < bytes.length; i += size) {
              await fh.write(bytes.subarray(i, i + size));
              const now = performance.now();
              if (now - last >= sc.settle * 1000 * 0.8) late.add(p);
              last = now;
              await sleep(50 + (d.pick % (sc.settle * 300)));
            }
            await fh.close();
            if (performance.now() - last >= sc.settle * 1000 * 0.8) late.add(p);
            break;
          }
          case 'rewrite': {
            const first = bytesOf(header, [...rows].reverse(), !d.xlsx && d.pick % 3 === 0);
            noteComplete(first, [...rows].reverse());
            await writeFile(p, first);
            await sleep(d.pick % (sc.settle * 1500));
            await writeFile(p, bytes);
            break;
          }
        }
        if (withMarker) await marker(p);
      };
      // (one writer of a name at a time: two would interleave their bytes into a content nobody wrote)
      const all = Promise.all(
        targets.map((p) => {
          const w = (writers.get(p) ?? Promise.resolve()).then(() => write(p));
          writers.set(
            p,
            w.catch(() => {}),
          );
          return w;
        }),
      );
      if (d.mode === 'slow' || d.mode === 'rewrite') background.push(all.catch((e: Error) => out.notes.push(`writer: ${e.message}`)));
      else await all;
      out.drops++;
      return `${name} (${d.variant}${d.xlsx ? ', xlsx' : ''}, ${d.mode}${withMarker ? ', marker' : ''}) into ${d.host === 2 ? 'both' : hosts[d.host]!.name}`;
    };

    const processingFiles = (h: (typeof hosts)[number]) =>
      (existsSync(join(h.dir, 'processing')) ? readdirSync(join(h.dir, 'processing'), { withFileTypes: true }) : []).flatMap((c) =>
        c.isDirectory()
          ? readdirSync(join(h.dir, 'processing', c.name))
              .filter((f) => !f.startsWith('.') && !f.includes('.results.') && f !== 'documents')
              .map((f) => join(h.dir, 'processing', c.name, f))
          : [],
      );
    const moveOut = async (h: (typeof hosts)[number], back: boolean): Promise<string> => {
      const [file] = processingFiles(h);
      if (!file) return 'nothing in processing/';
      const name = file.split('/').at(-1)!;
      if (back) {
        await rename(file, join(h.dir, 'inbox', name)).catch(() => {});
        await marker(join(h.dir, 'inbox', name)).catch(() => {});
        return `${name} moved from processing/ back into the inbox`;
      }
      await mkdir(join(h.dir, 'moved'), { recursive: true });
      await rename(file, join(h.dir, 'moved', `${serial++}-${name}`)).catch(() => {});
      return `${name} moved out of processing/ by hand`;
    };

    /** A digit of the first claimed file changed in place, its size and mtime kept. */
    const editInPlace = (h: (typeof hosts)[number]): string => {
      const [file] = processingFiles(h);
      if (!file) return 'nothing in processing/ to edit';
      const bytes = readFileSync(file);
      let at = bytes.length - 1;
      while (at >= 0 && !(bytes[at]! >= 0x30 && bytes[at]! <= 0x39)) at--;
      if (at < 0) return 'no digit to edit';
      bytes[at] = bytes[at] === 0x39 ? 0x30 : bytes[at]! + 1;
      // (its times to the nanosecond: touch -r, through a file given them first)
      const times = `${file}.times`;
      writeFileSync(times, '');
      execFileSync('touch', ['-r', file, times]);
      writeFileSync(file, bytes);
      execFileSync('touch', ['-r', times, file]);
      rmSync(times);
      return `${file.split('/').at(-1)} edited in processing/ (size and mtime kept)`;
    };
    const check = (what: string, r: CliRun) => {
      if (STACK.test(r.stdout + r.stderr)) out.violations.push(`(d) ${what}: ${(r.stdout + r.stderr).slice(0, 1200)}`);
      const said = r.stdout.trim().split('\n').filter(Boolean).join(' | ');
      out.notes.push(`${what}: ${r.signal ? r.signal : `exit ${r.code}`}${said ? `: ${said.slice(0, 600)}` : ''}`);
    };
    const tick = async (h: (typeof hosts)[number], onSpawn?: Parameters<typeof runCli>[1]['onSpawn']) => {
      out.ticks++;
      return runCli(['watch', h.dir, '--once'], {
        cwd: h.dir,
        env: h.env,
        onSpawn,
        timeoutMs: 180_000,
        bin: join(INSTALLED, 'dist/bin.js'),
      });
    };

    sb.setFaults({
      dropAfterCreate: sc.drop,
      errorAfterCreate: sc.error ?? 0,
      ...(sc.latency ? { latencyMs: [20, 80] as [number, number] } : {}),
      routes: ['initiate'],
    });
    for (const [k, step] of sc.steps.entries()) {
      if (step.t === 'drop') out.notes.push(`drop ${await drop(step, k)}`);
      else if (step.t === 'clock') {
        sb.advanceClock(step.hours * 3_600_000);
        out.notes.push(`sandbox clock +${step.hours} h`);
      } else if (step.t === 'move') {
        const h = hosts[step.host]!;
        out.notes.push(`${h.name}: ${step.how === 'edit' ? editInPlace(h) : await moveOut(h, step.how === 'back')}`);
      } else {
        const h = hosts[step.host]!;
        const other = step.with === 'other' ? hosts[1 - step.host]! : step.with === 'same' ? h : undefined;
        let seen = 0;
        let did = '';
        const onSpawn: Parameters<typeof runCli>[1]['onSpawn'] | undefined =
          step.during === 'none'
            ? undefined
            : (c) =>
                (onInitiate = () => {
                  if (++seen !== step.kill) return;
                  if (step.during === 'kill' || step.during === 'term') {
                    c.kill(step.during === 'kill' ? 'SIGKILL' : 'SIGTERM');
                    did = `${step.during === 'kill' ? 'killed' : 'SIGTERM'} at initiate ${seen}`;
                  } else if (step.during === 'edit') did = editInPlace(h);
                  else if (step.during === 'clock') {
                    sb.advanceClock(25 * 3_600_000);
                    did = `sandbox clock +25 h at initiate ${seen}`;
                  } else void moveOut(h, seen % 2 === 0).then((m) => (did = m));
                });
        const runs = await Promise.all([tick(h, onSpawn), ...(other ? [tick(other)] : [])]);
        onInitiate = () => {};
        if (runs[0].signal) out.kills++;
        check(`tick ${h.name}${other ? ` with ${other.name}` : ''}${did ? ` (${did})` : ''}`, runs[0]);
        if (runs[1]) check(`  and ${other!.name}`, runs[1]);
      }
    }
    await Promise.all(background);
    sb.setFaults({});
    // then both hosts until nothing is left to take
    let last: CliRun[] = [];
    for (let round = 0; round < 4; round++) {
      last = [];
      for (const h of hosts) {
        const r = await tick(h);
        last.push(r);
        check(`final tick ${h.name}`, r);
      }
      if (last.every((r) => r.stdout.trim() === '')) break;
    }

    // (a)
    const records = serviceRecords(sb);
    out.payouts = records.length;
    out.violations.push(...twicePaid(records, refs).map((v) => `(a) ${v}`));
    // (b) payouts
    const refOfKey = new Map<string, string>();
    for (const ref of refs) for (let a = 1; a <= 4; a++) refOfKey.set(idempotencyKey(ref, a), ref);
    const byRef = new Map<string, (typeof records)[number]>();
    for (const p of records) {
      const made = p.made;
      const ref = made && refOfKey.get(made.key);
      if (!made || !ref) continue;
      byRef.set(ref, p);
      const rows = [...complete.values()].flat().filter((r) => r.reference === ref);
      if (!rows.some((r) => matches(r, made.body)))
        out.violations.push(`(b) payout ${p.id} of ${ref} ${JSON.stringify(made.body)} matches no complete content's row of ${ref}`);
    }
    // (b) claims, (c) where every file ended
    for (const h of hosts) {
      for (const where of ['done', 'failed', 'processing'] as const) {
        const base = join(h.dir, where);
        for (const id of existsSync(base) ? readdirSync(base) : []) {
          const dir = join(base, id);
          const claim = parseJson(readFileSync(join(dir, '.claim.json'), 'utf8'));
          const name = String(claim?.name);
          const file = join(dir, name);
          const results = readdirSync(dir).find((f) => f.includes('.results.'));
          const table = results ? await readResults(join(dir, results)).catch(() => undefined) : undefined;
          const created = (table?.rows ?? []).filter(
            (r) => r.result.payoutId && byRef.get(r.cells.reference ?? '')?.id === r.result.payoutId,
          );
          const wasLate = late.has(join(h.dir, 'inbox', name));
          const claimedComplete = typeof claim?.sha256 === 'string' && complete.has(claim.sha256);
          if ((where === 'done' || created.length) && !claimedComplete) {
            if (wasLate) out.lateTakes++;
            else
              out.violations.push(
                `(b) ${h.name} ${where}/${id}: claimed content (sha256 ${String(claim?.sha256).slice(0, 12)}) was never complete, ${created.length} rows created from it`,
              );
          }
          if (where === 'done') {
            out.done++;
            const now = existsSync(file) ? sha(await readFile(file)) : 'gone';
            if (now !== claim?.sha256)
              out.violations.push(`(b) ${h.name} done/${id}: its file is not the content claimed (now ${now.slice(0, 12)})`);
            if (!table) out.violations.push(`(c) ${h.name} done/${id}: no results file`);
            for (const r of table?.rows ?? [])
              if (!created.includes(r) && !r.result.errorCode?.trim())
                out.violations.push(
                  `(c) ${h.name} done/${id}: ${r.cells.reference} ${r.result.status} shows no payout of its reference, nor an error code`,
                );
          } else if (where === 'failed') {
            out.failed++;
            const summary = readdirSync(dir).find((f) => f.endsWith('.summary.json'));
            const reason = summary && parseJson(readFileSync(join(dir, summary), 'utf8'))?.reason;
            if (typeof reason !== 'string' || !reason) out.violations.push(`(c) ${h.name} failed/${id}: no reason in its summary`);
            // a command the reason gives names files that are there (or moved on from processing/ since)
            const said = typeof reason === 'string' ? reason : '';
            for (const cmd of said.matchAll(/`payout-batch (?:run|retry) (\/[^ `]+)/g))
              if (!['processing', 'done', 'failed'].some((w) => existsSync(cmd[1]!.replace('/processing/', `/${w}/`))))
                out.violations.push(`(c) ${h.name} failed/${id}: its reason names ${cmd[1]}, which is nowhere: ${said}`);
          } else if (existsSync(file) && !last.some((r) => r.stdout.includes(`${name}: processing: `)))
            out.violations.push(`(c) ${h.name} processing/${id}: left there without a reason in the last tick`);
        }
      }
      for (const name of readdirSync(join(h.dir, 'inbox'))) {
        if (/^\.|\.ready$|\.tmp$/.test(name)) continue;
        const marked = existsSync(join(h.dir, 'inbox', `${name}.ready`));
        if (!sc.requireReady || marked) out.violations.push(`(c) ${h.name} inbox/${name} left there${marked ? ' with its marker' : ''}`);
      }
    }
  } catch (e) {
    out.violations.push(threw('d', e));
  } finally {
    onInitiate = () => {};
    await Promise.allSettled(background);
    await sb.close();
    await leave(root, KEEP);
  }
  return out;
}

const scenarios = GIVEN ? [GIVEN] : fc.sample(scenarioArb, { seed: SEED, numRuns: RUNS });
const t0 = performance.now();
const totals = { drops: 0, ticks: 0, kills: 0, payouts: 0, done: 0, failed: 0, lateTakes: 0 };
try {
  const failures = await runScenarios(scenarios, { only: ONLY, given: !!GIVEN, verbose: VERBOSE }, runScenario, totals);
  console.log(
    `\nseed ${SEED}, ${ONLY === undefined && !GIVEN ? RUNS : 1} scenarios, ${totals.drops} drops, ${totals.ticks} ticks (${totals.kills} SIGKILLs), ` +
      `${totals.payouts} payouts, claims ${totals.done} done / ${totals.failed} failed, ${totals.lateTakes} taken half-written after a writer's pause, ` +
      `${failures} scenarios with a violation, ${((performance.now() - t0) / 1000).toFixed(0)} s`,
  );
  process.exitCode = failures ? 1 : 0;
} finally {
  cluster?.destroy();
  await rm(INSTALLED, { recursive: true, force: true });
}
