// Fuzz: what commands cost the key (spec §8: 10,000 requests a month, 5 a second), judged by the sandbox's own request
// log per key against the estimate the tool printed (src/engine/REFERENCE.md, "What a batch costs") and this script's
// own model of the batch (its rows, their documents' bytes, their corridors), never by the tool's own count alone.
//   npx tsx test/chaos/cost-fuzz.ts [--seed S] [--runs N] [--faults] [--verbose] [--only I] [--scenario JSON] [--keep]
//
// Each scenario (fast-check, from the seed): the sandbox in its strict or variant reading, then 2 to 6 steps, each a
// process of the built CLI (`node dist/bin.js`) against it over 127.0.0.1. A sending step runs a new batch of 1 to 40
// rows drawn from the sample payroll's corridors and methods (same-currency and cross-currency: NIP, ACH, WIRE, SEPA,
// FASTER_PAYMENTS, BACS, SWIFT, HK_FPS, CHINA_WIRE), each row with no document, the batch's one shared document, a
// document of its own, the shared bytes under another name, or two; some rows invalid; some rows copies of a row an
// earlier batch paid; --merge-documents sometimes; a GBP wallet drained (by the business's other key) and the batch
// --fund-by-swap sometimes. Steps: `plan --out` then `run --plan`; plain `run`; `run --dry-run`; `run --max-requests N`
// with N drawn around the estimate a `plan --json` printed; a run SIGKILLed after its k-th request, then run again;
// a run under another state folder (`--state-dir`, or another PAYOUT_BATCH_STATE_DIR: another user's count); a
// `watch DIR --once` tick (its maxRequests drawn around the estimate, or none); `retry --resend-failed` of the last
// results after 1 to 3 of its payouts were set FAILED through the control routes; `status`; `reconcile`. Checked:
//   (a) a command's requests (the sandbox's log for the key; storage PUTs apart, as the spec's §4.6 URL carries no key)
//       never exceed the estimate its plan printed (`--json`'s plan.requests.estimate; `plan --out`: its preflight and
//       quotes); how far above the truth each estimate is: a figure;
//   (b) `--max-requests N` (a watch's maxRequests) with an estimate above N: refused (exit 3), its requests the
//       preflight's reads only (GETs: no quote, upload, initiate, PATCH, swap nor toggle); a run it allowed spends at
//       most N;
//   (c) the requests the per-user folders' usage.json count this UTC month equal the sandbox log's count for the key,
//       after every step, kills and other processes included (REFERENCE: "as counted here"; --state-dir moves the
//       ledger, never the count: the per-user folder keeps it; another PAYOUT_BATCH_STATE_DIR is another count, so
//       the two files add up to the log); `account --json`'s quota.used at the end agrees with the log;
//   (d) each distinct content (sha256 of the bytes; a merged row's PDF) uploaded once per batch: upload-url requests
//       at most the distinct contents among the rows this script sent, storage PUTs as many as upload-urls, no two
//       stored documents of one batch with the same bytes (a kill between PUT and journal counted apart); quotes one
//       per corridor and method (a SWIFT row may add its band), never per row; the payout list read 100 a page (at
//       most ceil(payouts / 100) + 1 list reads by a command);
//   (e) figures: requests per paid row per step kind, printed as a table;
//   (f) no "unexpected error" nor stack trace in any output.
// `--faults`: each scenario also draws the sandbox's faults (FaultConfig: latency, 5xx before effect, 5xx and dropped
// sockets after an initiate or swap created, spurious 429s; its rate limit stays off). Then, by the log alone:
//   (a') a command's requests exceed its estimate only by retries the log explains: a request of the same method,
//        path and Idempotency-Key as an earlier one of the command the log shows answered 5xx, 429 or dropped, one
//        failure for one retry (so (d)'s counts are taken retries apart too); an initiate or swap sent again with a
//        key the service refused (a 4xx but 429, spec §7) in the same command is a violation; so is, over the whole
//        scenario, an initiate under a reference's key n + 1 unless key n was refused or its payout FAILED or REJECTED;
//   (b') an allowed `--max-requests N` spends at most N besides those retries (REFERENCE promises the plan's count at
//        most N and is silent on retries: a run over N by retries alone is counted, not a violation);
//   (c) as above: every request the sandbox logs, retries and 429s included, is counted.
// Exits 1 when any check fails, printing the scenario: `--scenario JSON --only I` replays it.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { copyFile, mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import fc from 'fast-check';
import { parse } from 'csv-parse/sync';
import { stringify } from 'csv-stringify/sync';
import { PDFDocument } from 'pdf-lib';
import { idempotencyKey } from '../../src/engine/identity.ts';
import { startSandbox, type FaultConfig, type LocalSandbox, type RequestLogEntry } from '../../src/sandbox/start-sandbox.ts';
import { cleanEnv, KEY, ROOT, runCli, workDir, type CliRun } from '../engine/helpers.ts';
import { setStatus } from '../ops/helpers.ts';
import { creditBack, drainWallet, fuzzFlags, leave, parseJson, runScenarios, serviceRecords, threw, type Drain } from './fuzz-judge.ts';

/** `--faults`: each scenario draws the sandbox's faults (latency, 5xx before and after effect, drops, spurious 429s). */
const FAULTS = process.argv.includes('--faults');
const {
  given: GIVEN,
  seed: SEED,
  runs: RUNS,
  verbose: VERBOSE,
  only: ONLY,
  keep: KEEP,
} = fuzzFlags<Scenario>(process.argv.slice(2).filter((a) => a !== '--faults'));

/** The business's other key: the drains go under it, out of the judged key's count. */
const OTHER_KEY = 'sk_sandbox_acme_secondary';
const STACK = /unexpected error|\n\s+at .+:\d+:\d+\)?/i;

// The sample payroll's rows: every corridor and method it has, as templates.
const SAMPLE = parse<Record<string, string>>(readFileSync(join(ROOT, 'samples/payroll-2025-01.csv'), 'utf8'), { columns: true, bom: true });

type Doc = 'none' | 'shared' | 'own' | 'copy' | 'two';
interface RowSpec {
  template: number;
  doc: Doc;
  invalid: boolean;
}
interface BatchSpec {
  rows: RowSpec[];
  merge: boolean;
  /** Rows copied from the last batch (its references, paid or not). */
  paid: number;
  swap: boolean;
}
type Step =
  | ({ t: 'planRun' | 'run' | 'dry' } & BatchSpec)
  | ({ t: 'max'; delta: number } & BatchSpec)
  | ({ t: 'kill'; after: number } & BatchSpec)
  | ({ t: 'other'; how: 'flag' | 'env' } & BatchSpec)
  | ({ t: 'watch'; delta: number | null } & BatchSpec)
  | { t: 'retry'; fail: number }
  | { t: 'status' }
  | { t: 'reconcile' };
interface Scenario {
  variant: boolean;
  steps: Step[];
  faults?: Partial<FaultConfig>;
}

const rowArb = fc.record({
  template: fc.nat(SAMPLE.length - 1),
  doc: fc.constantFrom<Doc>('none', 'none', 'shared', 'shared', 'own', 'copy', 'two'),
  invalid: fc.constantFrom(false, false, false, false, false, false, false, false, false, true),
});
const batchArb = {
  rows: fc.oneof(fc.array(rowArb, { minLength: 1, maxLength: 8 }), fc.array(rowArb, { minLength: 9, maxLength: 40 })),
  merge: fc.constantFrom(false, false, true),
  paid: fc.constantFrom(0, 0, 0, 1, 3),
  swap: fc.constantFrom(false, false, false, true),
};
const stepArb: fc.Arbitrary<Step> = fc.oneof(
  { weight: 3, arbitrary: fc.record({ t: fc.constant('planRun' as const), ...batchArb }) },
  { weight: 4, arbitrary: fc.record({ t: fc.constant('run' as const), ...batchArb }) },
  { weight: 1, arbitrary: fc.record({ t: fc.constant('dry' as const), ...batchArb }) },
  { weight: 3, arbitrary: fc.record({ t: fc.constant('max' as const), delta: fc.integer({ min: -3, max: 2 }), ...batchArb }) },
  { weight: 2, arbitrary: fc.record({ t: fc.constant('kill' as const), after: fc.integer({ min: 1, max: 14 }), ...batchArb }) },
  {
    weight: 2,
    arbitrary: fc.record({ t: fc.constant('other' as const), how: fc.constantFrom<'flag' | 'env'>('flag', 'env'), ...batchArb }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      t: fc.constant('watch' as const),
      delta: fc.option(fc.integer({ min: -2, max: 2 }), { nil: null }),
      ...batchArb,
    }),
  },
  { weight: 2, arbitrary: fc.record({ t: fc.constant('retry' as const), fail: fc.integer({ min: 1, max: 3 }) }) },
  { weight: 1, arbitrary: fc.record({ t: fc.constant('status' as const) }) },
  { weight: 1, arbitrary: fc.record({ t: fc.constant('reconcile' as const) }) },
);
const faultsArb: fc.Arbitrary<Partial<FaultConfig>> = fc.record({
  latencyMs: fc.constantFrom<[number, number]>([0, 0], [0, 20], [5, 60]),
  errorBeforeEffect: fc.constantFrom(0, 0.03, 0.08),
  errorAfterCreate: fc.constantFrom(0, 0.05, 0.15),
  dropAfterCreate: fc.constantFrom(0, 0.03, 0.08),
  spurious429: fc.constantFrom(0, 0.02, 0.05),
});
const scenarioArb: fc.Arbitrary<Scenario> = fc.record({
  variant: fc.boolean(),
  steps: fc.array(stepArb, { minLength: 2, maxLength: 6 }),
  ...(FAULTS ? { faults: faultsArb } : {}),
});

// --- documents ---

const sha = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');

async function pdf(tag: string): Promise<Uint8Array> {
  const d = await PDFDocument.create();
  d.addPage([200 + (tag.length % 50), 200]);
  d.setTitle(tag);
  d.setCreationDate(new Date(0));
  d.setModificationDate(new Date(0));
  return d.save();
}

// --- the batch ---

const AMOUNT_UNIT: Record<string, number> = { NGN: 1000, USD: 1, EUR: 1, GBP: 1, HKD: 10, CNY: 10 };

interface Written {
  file: string;
  refs: string[];
  /** The contents (sha256, or `merged:` the row's distinct ones) of each valid new row, by reference. */
  contents: Map<string, string[]>;
  /** Each valid new row's corridor and method, by reference. */
  groups: Map<string, string>;
  swiftRows: number;
  copied: number;
  rows: Record<string, string>[];
}

/** Writes batch `b` of scenario `n` into `dir` (its documents beside it): the rows, and what this script expects each to cost. */
async function writeBatch(dir: string, n: number, b: number, spec: BatchSpec, last: Written | undefined): Promise<Written> {
  const docs = join(dir, `docs-${b}`);
  await mkdir(docs, { recursive: true });
  const shared = await pdf(`scenario ${n} batch ${b} shared`);
  await writeFile(join(docs, 'shared.pdf'), shared);
  const rows: Record<string, string>[] = [];
  const contents = new Map<string, string[]>();
  const groups = new Map<string, string>();
  let swiftRows = 0;
  for (const [i, r] of spec.rows.entries()) {
    const t = { ...SAMPLE[r.template]! };
    t.reference = `C${n}-B${b}-${String(i + 1).padStart(2, '0')}`;
    t.sourceAmount = `${(AMOUNT_UNIT[t.sourceCurrency!] ?? 1) * (2 + ((i * 7 + b) % 40))}.${String((i * 13 + n) % 100).padStart(2, '0')}`;
    const files: { path: string; bytes: Uint8Array }[] = [];
    if (r.doc === 'shared' || r.doc === 'two') files.push({ path: join(docs, 'shared.pdf'), bytes: shared });
    if (r.doc === 'copy') {
      await copyFile(join(docs, 'shared.pdf'), join(docs, `copy-${i}.pdf`));
      files.push({ path: join(docs, `copy-${i}.pdf`), bytes: shared });
    }
    if (r.doc === 'own' || r.doc === 'two') {
      const own = await pdf(`scenario ${n} batch ${b} row ${i}`);
      await writeFile(join(docs, `own-${i}.pdf`), own);
      files.push({ path: join(docs, `own-${i}.pdf`), bytes: own });
    }
    t.documents = files.map((f) => f.path).join(';');
    t.withdrawal = files.length ? 'false' : 'true';
    if (r.invalid) t.accountName = '';
    else {
      const digests = [...new Set(files.map((f) => sha(f.bytes)))];
      contents.set(t.reference, spec.merge && digests.length > 1 ? [`merged:${digests.join('|')}`] : digests);
      groups.set(t.reference, `${t.sourceCurrency}>${t.destinationCurrency} ${t.destinationCountryCode} ${t.method}`);
      if (t.method === 'SWIFT') swiftRows++;
    }
    rows.push(t);
  }
  // rows an earlier batch sent (its references and cells): paid once, whatever batch names them again
  const copied = last ? last.rows.slice(0, spec.paid) : [];
  rows.push(...copied);
  // (sent again where the ledger does not know them: another state folder; the service answers the payout it has)
  for (const r of copied) {
    const c = last!.contents.get(r.reference!);
    if (c) contents.set(r.reference!, c);
    const g = last!.groups.get(r.reference!);
    if (g) groups.set(r.reference!, g);
  }
  const header = Object.keys(SAMPLE[0]!);
  const file = join(dir, `batch-${b}.csv`);
  await writeFile(file, stringify([header, ...rows.map((r) => header.map((h) => r[h] ?? ''))]));
  return { file, refs: rows.map((r) => r.reference!), contents, groups, swiftRows, copied: copied.length, rows };
}

// --- the judge's readings ---

const SENDING = new Set(['quote', 'initiate', 'patchDocuments', 'uploadUrl', 'swap', 'togglePair']);

/** The key's requests between two instants of the sandbox's clock, and the storage PUTs (no key). */
function between(sb: LocalSandbox, from: number, to: number) {
  const all = sb.requestLog().filter((e) => e.at >= from && e.at <= to);
  const keyed = all.filter((e) => e.apiKey === KEY);
  const by = (route: string) => keyed.filter((e) => e.route === route).length;
  const retried = retriesIn(keyed);
  /** A route's requests less the retries the log explains. */
  const first = (route: string) => by(route) - retried.of(route);
  const okUploads = keyed.filter((e) => e.route === 'uploadUrl' && e.status >= 200 && e.status < 300).length;
  const sending = keyed.filter((e) => SENDING.has(e.route));
  return { keyed, puts: all.filter((e) => e.route === 'storagePut').length, by, first, retried, okUploads, sending };
}

/** Answers that prove nothing was refused: 5xx, a 429, a dropped socket (0). The request may go again. */
const unanswered = (e: RequestLogEntry) => e.status === 0 || e.status === 429 || e.status >= 500;

/**
 * (a'): a command's requests that the log explains as retries: each a request of the same method, path and
 * Idempotency-Key as an earlier one of the command the log shows unanswered (5xx, 429, dropped), one failure
 * explaining one retry; by route. And each initiate or swap sent again with the key of one the service refused
 * (a 4xx but 429: definitive, spec §7) in the same command. A refusal of a key that an earlier request of the command
 * left unknown (5xx, dropped) proves nothing of that request (a 5xx may be a gateway's while the service still acts):
 * the key is still unknown, and may go again.
 */
function retriesIn(entries: RequestLogEntry[]) {
  const open = new Map<string, number>();
  const refused = new Set<string>();
  const unknown = new Set<string>();
  const byRoute = new Map<string, number>();
  const afterRefusal: RequestLogEntry[] = [];
  let explained = 0;
  for (const e of entries) {
    const id = `${e.method} ${e.path} ${e.idempotencyKey ?? ''}`;
    if (e.idempotencyKey && refused.has(id)) afterRefusal.push(e);
    const pending = open.get(id) ?? 0;
    if (pending > 0) {
      explained++;
      byRoute.set(e.route, (byRoute.get(e.route) ?? 0) + 1);
      open.set(id, pending - 1);
    }
    const lost = e.status === 0 || e.status >= 500;
    if (lost && e.idempotencyKey) unknown.add(id);
    if (unanswered(e) || (e.status >= 400 && unknown.has(id))) open.set(id, (open.get(id) ?? 0) + 1);
    else if (e.status >= 400) refused.add(id);
  }
  const refusals = entries.filter((e) => e.status >= 400 && e.status < 500 && e.status !== 429).length;
  return { explained, of: (route: string) => byRoute.get(route) ?? 0, afterRefusal, failed: entries.filter(unanswered).length, refusals };
}

/** A command's log as a line: route, status, the key's last characters. */
const logLine = (entries: RequestLogEntry[]) =>
  entries.map((e) => `${e.route} ${e.status}${e.idempotencyKey ? ` ${e.idempotencyKey.slice(-6)}` : ''}`).join(', ');

/** The requests the usage files of these per-user folders count for this UTC month, every key. */
async function counted(folders: string[]): Promise<number> {
  const month = new Date().toISOString().slice(0, 7);
  let n = 0;
  for (const f of folders) {
    const u = parseJson(await readFile(join(f, 'usage.json'), 'utf8').catch(() => '')) as
      { keys?: Record<string, { months?: Record<string, number> }> } | undefined;
    for (const k of Object.values(u?.keys ?? {})) n += k.months?.[month] ?? 0;
  }
  return n;
}

const estimateOf = (r: CliRun) => {
  const j = parseJson(r.stdout) as { plan?: { requests?: Record<string, number> }; requests?: Record<string, number> } | undefined;
  return j?.plan?.requests ?? j?.requests;
};

/** What a scenario counts, and the campaign sums. */
const noCounts = () => ({
  commands: 0,
  paid: 0,
  requests: 0,
  kills: 0,
  refusedByMax: 0,
  /** The sum of (estimate - requests) over the commands judged by (a), and how many. */
  over: 0,
  judged: 0,
  /** The log's requests the usage files do not count at the end (SIGKILLs). */
  uncounted: 0,
  /** Requests answered 5xx, 429 or dropped; the retries the log explains; allowed runs over N by retries. */
  faulted: 0,
  retries: 0,
  overMaxByRetries: 0,
  /** Answers 4xx but 429: the service's refusals. */
  refusals: 0,
});
type Outcome = { violations: string[]; notes: string[] } & ReturnType<typeof noCounts>;

/** Per step kind: commands, requests, payouts made, estimate minus truth. */
const FIGURES = new Map<string, { steps: number; requests: number; paid: number; over: number; judged: number }>();
function figure(kind: string, requests: number, paid: number, over?: number) {
  const f = FIGURES.get(kind) ?? { steps: 0, requests: 0, paid: 0, over: 0, judged: 0 };
  f.steps++;
  f.requests += requests;
  f.paid += paid;
  if (over !== undefined) {
    f.over += over;
    f.judged++;
  }
  FIGURES.set(kind, f);
}

async function runScenario(sc: Scenario, n: number): Promise<Outcome> {
  const out: Outcome = { violations: [], notes: [], ...noCounts() };
  const v = (m: string) => out.violations.push(m);
  /** A command's requests since `from` by the sandbox's log, and its payouts, counted; (a') judged. */
  const tally = (what: string, from: number, payoutsBefore: number) => {
    const used = between(sb, from, Date.now());
    const paid = sb.snapshot().payouts.length - payoutsBefore;
    out.commands++;
    out.requests += used.keyed.length;
    out.paid += paid;
    out.faulted += used.retried.failed;
    out.retries += used.retried.explained;
    out.refusals += used.retried.refusals;
    for (const e of used.retried.afterRefusal)
      v(`(a') ${what}: ${e.method} ${e.route} sent again under key ${e.idempotencyKey} after the service refused it`);
    return { used, paid };
  };
  const dir = await workDir('pb-cost-fuzz-');
  let onRequest = () => {};
  const sb = await startSandbox({
    rateLimitPerSecond: null,
    monthlyQuota: null,
    randomSeed: SEED + n,
    shapes: sc.variant ? 'variant' : 'strict',
    onRequest: () => onRequest(),
    ...(sc.faults ? { faults: sc.faults } : {}),
  });
  const state = join(dir, 'state');
  const otherUser = join(dir, 'other-user');
  const env = cleanEnv({ PAYOUT_BATCH_STATE_DIR: state, PAYOUT_BATCH_RATE: '500' });
  const service = ['--base-url', sb.url];
  const folders = new Set([state]);
  let last: Written | undefined;
  /** Every reference the scenario's batches named. */
  const allRefs = new Set<string>();
  /** Requests sent in the last second of the SIGKILLed processes. */
  let slack = 0;
  let lastResults: string | undefined;
  const drains: Drain[] = [];
  try {
    /** One command as a process: its requests (the log's), what it printed, (f). */
    const cli = async (what: string, args: string[], o: { env?: Record<string, string>; killAfter?: number; cwd?: string } = {}) => {
      const from = Date.now();
      const payoutsBefore = sb.snapshot().payouts.length;
      const before = out.violations.length;
      let seen = 0;
      const r = await runCli([...args, ...service], {
        cwd: o.cwd ?? dir,
        env: o.env ?? env,
        timeoutMs: 180_000,
        onSpawn: (c) => (onRequest = () => void (++seen === o.killAfter && c.kill('SIGKILL'))),
      });
      onRequest = () => {};
      // (the process has exited; what it sent before a SIGKILL may still be in the sandbox's latency: the log shows a
      // request once answered or dropped)
      await settled();
      const { used, paid } = tally(what, from, payoutsBefore);
      if (r.signal) {
        out.kills++;
        // (counted in memory, flushed every second: what the last second of a SIGKILLed process sent may be lost)
        const end = Math.max(0, ...used.keyed.map((e) => e.at));
        slack += used.keyed.filter((e) => e.at > end - 1100).length;
      }
      if (STACK.test(r.stdout + r.stderr)) v(`(f) ${what}: ${(r.stdout + r.stderr).slice(0, 1200)}`);
      const kinds = [...new Set(used.keyed.map((e) => e.route))].map((k) => `${k} ${used.by(k)}`).join(', ');
      const faults = used.retried.failed ? `; ${used.retried.failed} unanswered, ${used.retried.explained} retries` : '';
      out.notes.push(
        `${what}: ${r.signal ?? `exit ${r.code}`}; ${used.keyed.length} requests (${kinds}), ${used.puts} PUTs, ${paid} payouts${faults}`,
      );
      if (out.violations.length > before) out.notes.push(`  its log: ${logLine(used.keyed)}`);
      if (r.code !== 0 && !r.signal)
        out.notes.push(
          `  said: ${(
            r.stderr
              .split('\n')
              .filter((l) => !l.startsWith('{'))
              .join(' ') || r.stdout
          ).slice(0, 500)}`,
        );
      const j = parseJson(r.stdout) as { details?: { results?: string }; results?: string } | undefined;
      const results = j?.results ?? j?.details?.results;
      if (results) lastResults = results;
      return { r, used, paid };
    };

    /** (a): the requests against the estimate printed; (d): uploads and PUTs against this script's contents. */
    const judgeSend = (what: string, kind: string, c: Awaited<ReturnType<typeof cli>>, w: Written | undefined, quoted = false) => {
      const est = estimateOf(c.r);
      const n = c.used.keyed.length;
      if (!est) {
        figure(kind, n, c.paid);
        if (c.r.code === 0) v(`(a) ${what}: exit 0 and no plan.requests in its --json`);
        return est;
      }
      const limit = quoted ? est.preflight! + est.quotes! : est.estimate!;
      // (a'): under faults, the estimate plus the retries the log explains
      const retries = c.used.retried.explained;
      if (n - retries > limit) {
        v(
          `(a) ${what}: ${n} requests (${retries} of them retries the log explains), the estimate printed ${limit} (${JSON.stringify(est)})`,
        );
        out.notes.push(`  ${what}, its log: ${logLine(c.used.keyed)}`);
      }
      figure(kind, n - retries, c.paid, limit - (n - retries));
      out.over += limit - (n - retries);
      out.judged++;
      if (w && !quoted) {
        const expected = new Set<string>();
        for (const ref of w.refs) for (const d of w.contents.get(ref) ?? []) expected.add(d);
        if (c.used.first('uploadUrl') > expected.size)
          v(
            `(d) ${what}: ${c.used.first('uploadUrl')} upload-url requests (retries apart) for ${expected.size} distinct contents among the rows`,
          );
        if (c.used.puts !== c.used.okUploads) v(`(d) ${what}: ${c.used.puts} storage PUTs for ${c.used.okUploads} upload-urls answered`);
      }
      return est;
    };

    /** (d): no two stored documents of the batch (the upload URLs issued since `from`) hold the same bytes. */
    const storedOnce = (what: string, since: number, killed: boolean) => {
      const digests = sb
        .snapshot()
        .documents.filter((d) => d.uploaded && Date.parse(d.uploaded.at) >= since)
        .map((d) => sha(Buffer.from(d.uploaded!.base64, 'base64')));
      const twice = digests.length - new Set(digests).size;
      if (twice && !killed) v(`(d) ${what}: ${twice} contents stored twice in one batch`);
      else if (twice) out.notes.push(`  ${twice} contents stored again after the kill (counted apart)`);
    };

    /** (c): the usage files against the log, for the key, this UTC month. */
    const judgeCount = async (what: string) => {
      const month = new Date().toISOString().slice(0, 7);
      const logged = sb.requestLog().filter((e) => e.apiKey === KEY && new Date(e.at).toISOString().slice(0, 7) === month).length;
      const c = await counted([...folders]);
      if (c > logged || c < logged - slack)
        v(
          `(c) after ${what}: the usage files count ${c} requests this month, the sandbox's log ${logged} (${slack} in the last second of a killed process)`,
        );
      else if (c < logged)
        out.notes.push(`  (c) ${logged - c} requests not counted, of ${slack} in the last second of a killed process (counted apart)`);
      out.uncounted = logged - c;
    };

    for (const [k, step] of sc.steps.entries()) {
      const what = `step ${k + 1} ${step.t}`;
      const common = ['--yes', '--json', '--allow-partial'];
      if ('rows' in step) {
        const w = await writeBatch(dir, n, k, step, last);
        for (const r of w.refs) allRefs.add(r);
        const flags = [...common, ...(step.merge ? ['--merge-documents'] : []), ...(step.swap ? ['--fund-by-swap'] : [])];
        if (step.swap) {
          const d = await drainWallet(sb, OTHER_KEY, 'GBP', `fuzz-drain-${n}-${k}`);
          if (d) drains.push(d);
        }
        const since = Date.now();
        if (step.t === 'run' || step.t === 'dry') {
          const c = await cli(what, ['run', w.file, ...flags, ...(step.t === 'dry' ? ['--dry-run'] : [])]);
          judgeSend(what, step.t, c, w);
          if (step.t === 'dry' && c.used.sending.length) v(`(a) ${what}: --dry-run sent ${c.used.sending.map((e) => e.route).join(', ')}`);
        } else if (step.t === 'planRun') {
          const plan = join(dir, `batch-${k}.plan.json`);
          const p = await cli(`${what}: plan --out`, [
            'plan',
            w.file,
            '--out',
            plan,
            '--json',
            ...(step.merge ? ['--merge-documents'] : []),
          ]);
          const est = judgeSend(`${what}: plan --out`, 'plan --out', p, w, true);
          const quotes = p.used.first('quote');
          const groups = new Set(w.refs.map((r) => w.groups.get(r)).filter(Boolean)).size;
          if (quotes > groups + w.swiftRows)
            v(`(d) ${what}: ${quotes} quotes for ${groups} corridors and methods (${w.swiftRows} SWIFT rows)`);
          if (est && quotes !== est.quotes) out.notes.push(`  the plan counted ${est.quotes} quotes, the log ${quotes}`);
          // (--merge-documents is refused under --plan: the approvers signed each file)
          const c = await cli(`${what}: run --plan`, [
            'run',
            '--plan',
            plan,
            ...common.filter((f) => f !== '--allow-partial'),
            ...(step.swap ? [] : []),
          ]);
          judgeSend(`${what}: run --plan`, 'run --plan', c, w);
          if (est && c.r.code === 0)
            out.notes.push(
              `  plan + run --plan: ${p.used.keyed.length + c.used.keyed.length} requests, the plan's estimate ${est.estimate}`,
            );
        } else if (step.t === 'max' || step.t === 'watch') {
          const p = await cli(`${what}: plan --json`, [
            'plan',
            w.file,
            '--json',
            '--allow-partial',
            // (plan counts the swap that funds a short wallet without being asked: it takes no --fund-by-swap)
            ...(step.merge ? ['--merge-documents'] : []),
          ]);
          const est = estimateOf(p.r);
          judgeSend(`${what}: plan --json`, 'plan', p, undefined, true);
          if (!est) {
            out.notes.push(`  no estimate: step skipped`);
            continue;
          }
          const delta = step.t === 'max' ? step.delta : step.delta;
          const max = delta === null ? undefined : Math.max(0, est.estimate! + delta);
          let c: Awaited<ReturnType<typeof cli>>;
          if (step.t === 'max') c = await cli(`${what} N=${max}`, ['run', w.file, ...flags, '--max-requests', String(max)]);
          else {
            const wd = join(dir, `watch-${k}`);
            await mkdir(join(wd, 'inbox'), { recursive: true });
            const config = {
              environment: 'sandbox',
              baseUrl: sb.url,
              settleSeconds: 0,
              rate: 500,
              allowPartial: true,
              allowDocumentsOutside: true,
              mergeDocuments: step.merge,
              ...(max === undefined ? {} : { maxRequests: max }),
              ...(step.swap ? { fundBySwap: { GBP: '100000' } } : {}),
            };
            await writeFile(join(wd, 'payout-batch.json'), JSON.stringify(config));
            await copyFile(w.file, join(wd, 'inbox', 'batch.csv'));
            c = await cliNoService(`${what} maxRequests=${max}`, ['watch', wd, '--once']);
          }
          const n2 = c.used.keyed.length;
          if (max !== undefined && est.estimate! > max) {
            out.refusedByMax++;
            if (step.t === 'max' && c.r.code !== 3) v(`(b) ${what}: estimate ${est.estimate} over --max-requests ${max}, exit ${c.r.code}`);
            if (c.used.sending.length)
              v(
                `(b) ${what}: estimate ${est.estimate} over ${max}, yet sent ${c.used.sending.map((e) => `${e.method} ${e.route}`).join(', ')}`,
              );
            if (c.used.keyed.some((e) => e.method !== 'GET')) v(`(b) ${what}: refused, yet sent a request other than a GET`);
            figure(`${step.t} refused`, n2, c.paid);
          } else if (max !== undefined) {
            // (b'): REFERENCE promises the plan's count at most N; retries the log explains come on top (it is silent on them)
            const retries = c.used.retried.explained;
            if (n2 - retries > max) v(`(b) ${what}: allowed by ${max}, spent ${n2} (${retries} of them retries the log explains)`);
            else if (n2 > max) {
              out.overMaxByRetries++;
              out.notes.push(`  (b') allowed by ${max}, spent ${n2}: ${n2 - max} over N, all retries the log explains`);
            }
            if (step.t === 'max') judgeSend(what, 'max allowed', c, w);
            else figure('watch', n2, c.paid, est.estimate! - n2);
          } else figure('watch', n2, c.paid, est.estimate! - n2);
          if (step.t === 'watch' && (max === undefined || est.estimate! <= max) && n2 - c.used.retried.explained > est.estimate!)
            v(`(a) ${what}: the tick spent ${n2} (${c.used.retried.explained} retries), the plan's estimate ${est.estimate}`);
        } else if (step.t === 'kill') {
          const k1 = await cli(`${what} (killed after ${step.after})`, ['run', w.file, ...flags], { killAfter: step.after });
          figure('killed run', k1.used.keyed.length, k1.paid);
          await judgeCount(`${what} (killed)`);
          const c = await cli(`${what}: run again`, ['run', w.file, ...flags]);
          judgeSend(`${what}: run again`, 'run after a kill', c, w);
          storedOnce(what, since, !!k1.r.signal);
        } else if (step.t === 'other') {
          const o =
            step.how === 'flag'
              ? { args: ['--state-dir', join(dir, `state-${k}`)], env }
              : { args: [], env: { ...env, PAYOUT_BATCH_STATE_DIR: otherUser } };
          if (step.how === 'env') folders.add(otherUser);
          const c = await cli(`${what} (${step.how})`, ['run', w.file, ...flags, ...o.args], { env: o.env });
          judgeSend(what, `other state (${step.how})`, c, w);
        }
        if (step.t !== 'kill') storedOnce(what, since, false);
        for (const d of drains.splice(0)) await creditBack(sb, d);
        last = w;
      } else if (step.t === 'retry') {
        if (!lastResults || !last) continue;
        const ours = new Set(last.refs.flatMap((r) => [1, 2, 3].map((a) => idempotencyKey(r, a))));
        const made = serviceRecords(sb).filter((p) => p.made && ours.has(p.made.key) && p.status !== 'FAILED');
        for (const p of made.slice(0, step.fail)) await setStatus(sb, p.id, 'FAILED');
        // (retry reads the results file: `status` writes the FAILED into it first)
        await cli(`${what}: status first`, ['status', lastResults, '--json']);
        const c = await cli(`${what} (${Math.min(step.fail, made.length)} FAILED)`, [
          'retry',
          lastResults,
          '--resend-failed',
          '--yes',
          '--json',
        ]);
        judgeSend(what, 'retry --resend-failed', c, undefined);
      } else {
        if (!lastResults) continue;
        const c = await cli(what, [step.t, lastResults, '--json', ...(step.t === 'reconcile' ? ['--no-report'] : [])]);
        const rows = last?.refs.length ?? 0;
        figure(step.t, c.used.keyed.length, rows);
        const total = sb.snapshot().payouts.length;
        if (c.used.first('listPayouts') > Math.ceil(total / 100) + 1)
          v(
            `(d) ${what}: ${c.used.first('listPayouts')} payout list reads (retries apart) for ${total} payouts at the service (100 a page)`,
          );
        if (c.used.first('getPayout') > rows)
          v(`(d) ${what}: ${c.used.first('getPayout')} GET payout (retries apart) for a batch of ${rows} rows`);
      }
      await judgeCount(what);
    }

    newKeys();

    // (c): what `account --json` says the key used, against the log before and after it
    const before = sb.requestLog().filter((e) => e.apiKey === KEY).length;
    const acc = await cli('account', ['account', '--json']);
    const after = sb.requestLog().filter((e) => e.apiKey === KEY).length;
    const shown = (parseJson(acc.r.stdout) as { quota?: { used?: number } } | undefined)?.quota?.used;
    const others = folders.has(otherUser) ? await counted([otherUser]) : 0;
    if (shown === undefined) v(`(c) account --json showed no quota.used: ${acc.r.stdout.slice(0, 300)}`);
    else if (shown + others < before - slack || shown + others > after)
      v(`(c) account --json: quota.used ${shown} (+ ${others} another user's folder counts), the log ${before} before it, ${after} after`);
  } catch (e) {
    v(threw('f', e));
  } finally {
    for (const d of drains) await creditBack(sb, d).catch(() => undefined);
    await sb.close();
    await leave(dir, KEEP);
  }
  return out;

  /**
   * (a'): by the log, an initiate under a reference's key n + 1 only once the service proved key n holds no payout
   * (it refused key n: a 4xx but 429, spec §7) or key n's payout FAILED or was REJECTED (`retry --resend-failed`).
   */
  function newKeys() {
    const keyOf = new Map<string, { ref: string; attempt: number }>();
    for (const ref of allRefs) for (let a = 1; a <= 8; a++) keyOf.set(idempotencyKey(ref, a), { ref, attempt: a });
    const held = new Map(serviceRecords(sb).flatMap((p) => (p.made ? [[p.made.key, p.status] as const] : [])));
    const log = sb.requestLog().filter((e) => e.apiKey === KEY && e.route === 'initiate');
    const judged = new Set<string>();
    for (const [i, e] of log.entries()) {
      const k = e.idempotencyKey ? keyOf.get(e.idempotencyKey) : undefined;
      if (!k || k.attempt === 1 || judged.has(e.idempotencyKey!)) continue;
      judged.add(e.idempotencyKey!);
      const old = idempotencyKey(k.ref, k.attempt - 1);
      const answers = log.slice(0, i).filter((x) => x.idempotencyKey === old);
      const status = held.get(old);
      const why =
        status !== undefined
          ? status === 'FAILED' || status === 'REJECTED'
            ? undefined
            : `key ${k.attempt - 1} holds a ${status} payout`
          : answers.some((x) => x.status >= 400 && x.status < 500 && x.status !== 429)
            ? undefined
            : `key ${k.attempt - 1} was answered ${answers.map((x) => x.status).join(', ') || 'never'} (no refusal: unknown)`;
      if (why) out.violations.push(`(a') ${k.ref}: an initiate under key ${k.attempt} while ${why}`);
    }
  }

  /** Until the sandbox has answered or dropped every request it received. */
  async function settled() {
    while (sb.inFlight() > 0) await new Promise((r) => setTimeout(r, 5));
  }

  async function cliNoService(what: string, args: string[]) {
    // (a watch's configuration names the service)
    const from = Date.now();
    const payoutsBefore = sb.snapshot().payouts.length;
    const r = await runCli(args, { cwd: dir, env, timeoutMs: 180_000 });
    await settled();
    const { used, paid } = tally(what, from, payoutsBefore);
    if (STACK.test(r.stdout + r.stderr)) out.violations.push(`(f) ${what}: ${(r.stdout + r.stderr).slice(0, 1200)}`);
    out.notes.push(`${what}: exit ${r.code}; ${used.keyed.length} requests, ${paid} payouts`);
    return { r, used, paid };
  }
}

const started = Date.now();
const scenarios = GIVEN ? [GIVEN] : fc.sample(scenarioArb, { seed: SEED, numRuns: RUNS });
const totals = noCounts();
console.log(`cost-fuzz: seed ${SEED}, ${scenarios.length} scenario(s)`);
const failures = await runScenarios(scenarios, { only: ONLY, given: !!GIVEN, verbose: VERBOSE }, (sc, i) => runScenario(sc, i), totals);
console.log(`\n| step kind | steps | requests | payouts made | requests a payout | estimate above the truth (mean) |`);
console.log(`|---|---|---|---|---|---|`);
for (const [kind, f] of [...FIGURES].sort()) {
  const per = f.paid ? (f.requests / f.paid).toFixed(2) : '-';
  const over = f.judged ? (f.over / f.judged).toFixed(1) : '-';
  console.log(`| ${kind} | ${f.steps} | ${f.requests} | ${f.paid} | ${per} | ${over} |`);
}
console.log(
  `\n${scenarios.length} scenarios, ${totals.commands} commands, ${totals.requests} requests, ${totals.paid} payouts, ` +
    `${totals.kills} kills (${totals.uncounted} requests not in usage.json at the end), ${totals.refusedByMax} over their max; ` +
    `${totals.faulted} answered 5xx, 429 or dropped, ${totals.retries} retries, ${totals.overMaxByRetries} allowed runs over N by retries, ${totals.refusals} refusals (4xx); ` +
    `${failures} failed; ${Math.round((Date.now() - started) / 1000)} s`,
);
process.exit(failures ? 1 : 0);
