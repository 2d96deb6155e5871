// Fuzz: `listen`, `status`, `attach` and `reconcile` after a run, while the payouts move at the service, judged by
// the sandbox's own records (its payouts and their statuses, wallet transactions, request log), never by the tool's.
//   npx tsx test/chaos/listen-fuzz.ts [--seed S] [--runs N] [--verbose] [--only I] [--scenario JSON] [--keep]
//
// Each scenario (fast-check draws them from the seed): a batch of 5 to 10 rows (GBP, EUR, NGN; or USD from a short
// wallet with `--fund-by-swap`) run by main() in this process, a `listen` started first (a process, or main() here)
// behind a proxy the sandbox's subscription names. Then a random schedule: status moves through the sandbox's control
// route (every legal move, information requests, FAILED and REJECTED with their refunds, the swap confirmed or
// reversed); deliveries duplicated (same id, a new id), answered 503 after arriving (resent), refused once (resent
// later: out of order), held and delivered late (a stale PROCESSING after SUCCESSFUL), replayed tampered with their
// signature or signed with an old secret; the listen SIGKILLed (or stopped) and restarted, sometimes with deliveries
// under way; a second listen on its state folder, or two started at once; sometimes a second listen with a state
// folder of its own sharing the deliveries (a balancer); `status`, `attach` and `reconcile` interleaved, sometimes as
// a payout moves; the results file re-saved as XLSX beside it, or edited (rows reordered, a note column, a status
// typed over, a payoutId, status or every updatedAt cleared, another row's payoutId pasted). Checked:
//   (a) after a final `status` of each results file, every row's status (and detail) is its payout's at the service,
//       a row shows only the payout its own reference's key created, the exit code says what the payouts say, and
//       the batch's cells are what the run or the person last wrote;
//   (b) a listen never moves a row backwards: in the results between checks (unless a person edited the file),
//       in the journal's fold ever; no row shows a status its payout never had (a forged delivery applied);
//   (c) `reconcile` after everything ties out, its debits, refunds and swap equal the sandbox's wallet transactions;
//   (d) no initiate nor swap reaches the service after the run (listen, status, reconcile, attach change no money);
//   (e) no "unexpected error" nor stack trace, no API key nor webhook secret in any output or file.
// Exits 1 when any check fails, printing the scenario: `--scenario JSON --only I` replays it.
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import type { ChildProcess } from 'node:child_process';
import fc from 'fast-check';
import { main } from '../../src/cli/main.ts';
import { idempotencyKey } from '../../src/engine/identity.ts';
import { foldAll } from '../../src/ledger/account-ledger.ts';
import { ledgersIn } from '../../src/ledger/open.ts';
import { Dec } from '../../src/money.ts';
import { readResults, writeResults } from '../../src/results/results.ts';
import { isFinalStatus, PAYOUT_TRANSITIONS, type PayoutStatus } from '../../src/spec/codes.ts';
import { statusRank } from '../../src/spec/status-order.ts';
import { startSandbox, type LocalSandbox } from '../../src/sandbox/start-sandbox.ts';
import { registerSubscription } from '../../src/follow-up/webhook-receiver.ts';
import { KEY, ROOT, cleanEnv, filesUnder, runCli, runMain, workDir, writeBatch } from '../engine/helpers.ts';
import { connectionTo, signPayload } from '../ops/helpers.ts';
import { fuzzFlags, parseJson, runScenarios, threw, leave } from './fuzz-judge.ts';

const { given: GIVEN, seed: SEED, runs: RUNS, verbose: VERBOSE, only: ONLY, keep: KEEP } = fuzzFlags<Scenario>();

const SECRET = 'whsec_listen_fuzz_4b1e9c07d2a8';
const OLD_SECRET = 'whsec_listen_fuzz_old_77f0a3';
// prettier-ignore
const MODES = ['forward', 'forward', 'forward', 'forward', 'lose', 'refuse', 'refuse', 'hold', 'hold', 'dup', 'newId', 'forge', 'oldSecret'] as const;
type Mode = (typeof MODES)[number];
const EDITS = ['reorder', 'note', 'staleStatus', 'blankId', 'blankStatus', 'blankTimes', 'otherId'] as const;

type Step =
  | { k: 'move'; row: number; pick: number; info: boolean; chain: number }
  | { k: 'swapMove'; reject: boolean }
  | { k: 'release' }
  | { k: 'stale'; row: number; pick: number }
  | { k: 'kill'; down: number; hard: number }
  | { k: 'second'; race: boolean }
  | { k: 'status' | 'reconcile'; xlsx: boolean; busy: number }
  | { k: 'attach'; row: number; xlsx: boolean; busy: number }
  | { k: 'resave' }
  | { k: 'edit'; kind: (typeof EDITS)[number]; row: number; xlsx: boolean };
interface Scenario {
  rows: number;
  swap: boolean;
  variant: boolean;
  /** The listen a process (killed with SIGKILL), else main() in this process (stopped and started again). */
  process: boolean;
  modes: Mode[];
  /** A second listen (main() here) on a state folder of its own behind the proxy, which shares the deliveries between the two (a balancer). */
  pair: boolean;
  steps: Step[];
}

/** A command run while a payout moves and its deliveries are applied (-1: after everything settled), the moved row's index. */
const BUSY = fc.constantFrom(-1, -1, 0, 1, 2, 3);
const stepArb: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 10,
    arbitrary: fc.record({
      k: fc.constant('move' as const),
      row: fc.oneof(fc.nat(2), fc.nat(20)),
      pick: fc.nat(100),
      info: fc.boolean(),
      chain: fc.constantFrom(1, 1, 2, 3),
    }),
  },
  { weight: 1, arbitrary: fc.record({ k: fc.constant('swapMove' as const), reject: fc.boolean() }) },
  { weight: 2, arbitrary: fc.constant({ k: 'release' as const }) },
  { weight: 2, arbitrary: fc.record({ k: fc.constant('stale' as const), row: fc.nat(20), pick: fc.nat(100) }) },
  { weight: 2, arbitrary: fc.record({ k: fc.constant('kill' as const), down: fc.nat(2), hard: fc.constantFrom(-1, -1, 0, 5, 20, 60) }) },
  { weight: 1, arbitrary: fc.record({ k: fc.constant('second' as const), race: fc.boolean() }) },
  {
    weight: 2,
    arbitrary: fc.record({ k: fc.constantFrom('status' as const, 'reconcile' as const), xlsx: fc.boolean(), busy: BUSY }),
  },
  { weight: 2, arbitrary: fc.record({ k: fc.constant('attach' as const), row: fc.nat(20), xlsx: fc.boolean(), busy: BUSY }) },
  { weight: 1, arbitrary: fc.constant({ k: 'resave' as const }) },
  {
    weight: 2,
    arbitrary: fc.record({ k: fc.constant('edit' as const), kind: fc.constantFrom(...EDITS), row: fc.nat(20), xlsx: fc.boolean() }),
  },
);
const scenarioArb: fc.Arbitrary<Scenario> = fc.record({
  rows: fc.integer({ min: 5, max: 10 }),
  swap: fc.constantFrom(false, false, true),
  variant: fc.boolean(),
  process: fc.boolean(),
  modes: fc.array(fc.constantFrom(...MODES), { minLength: 3, maxLength: 12 }),
  pair: fc.constantFrom(false, false, false, true),
  steps: fc.array(stepArb, { minLength: 8, maxLength: 30 }),
});

const STACK = /unexpected error|\n\s+at .+:\d+:\d+\)?/i;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const DOCS = ['invoice-de-c1.pdf', 'invoice-eu-c1.pdf', 'invoice-ng-c1.pdf'].map((d) => join(ROOT, 'samples/documents', d));

interface Outcome {
  violations: string[];
  notes: string[];
  moves: number;
  deliveries: number;
  stale: number;
  refused: number;
  kills: number;
  /** SIGKILLs that left a delivery recorded, not applied. */
  unapplied: number;
  commands: number;
}

/** A listen: its URL once listening, and how to stop it (gracefully, or SIGKILL for a process). */
interface Listen {
  url?: string;
  done: Promise<{ code: number | null; out: string }>;
  stop(kill: boolean): Promise<void>;
}

function startListen(
  sc: Scenario,
  dir: string,
  env: Record<string, string>,
  results: string[],
  outputs: string[],
  stateDir = 'listen-state',
): Listen {
  const args = [
    'listen',
    '--port',
    '0',
    '--secret-file',
    'webhook.secret',
    '--state-dir',
    stateDir,
    ...results.flatMap((r) => ['--results', r]),
  ];
  const l: Listen = { done: Promise.resolve({ code: 0, out: '' }), stop: async () => {} };
  let text = '';
  const seen = (s: string) => {
    text += s;
    l.url ??= /Listening on (http:\/\/\S+?\/) /.exec(text)?.[1];
  };
  if (sc.process) {
    let child: ChildProcess | undefined;
    l.done = runCli(args, {
      cwd: dir,
      env,
      timeoutMs: 3_600_000,
      onSpawn: (c) => {
        child = c;
        c.stdout?.on('data', (d: Buffer) => seen(d.toString()));
      },
    }).then((r) => {
      outputs.push(r.stdout, r.stderr);
      return { code: r.code, out: r.stdout + r.stderr };
    });
    l.stop = async (kill) => {
      child?.kill(kill ? 'SIGKILL' : 'SIGTERM');
      await l.done;
    };
  } else {
    let stop = () => {};
    const stopSignal = new Promise<void>((r) => (stop = r));
    const [o, e] = [new PassThrough(), new PassThrough()];
    let err = '';
    o.on('data', (d: Buffer) => seen(d.toString()));
    e.on('data', (d: Buffer) => (err += d.toString()));
    const stdin = Readable.from([]);
    l.done = main(args, { stdout: o, stderr: e, stdin, env, cwd: dir, stopSignal }).then((code) => {
      outputs.push(text, err);
      return { code, out: text + err };
    });
    l.stop = async () => {
      stop();
      await l.done;
    };
  }
  return l;
}

/** How many of these listens have ended. */
const ended = async (ls: Listen[]) =>
  (await Promise.all(ls.map((l) => Promise.race([l.done.then(() => 1), sleep(0).then(() => 0)])))).reduce((a, b) => a + b, 0);

/** The command by main() in this process. */
const runHere = (args: string[], dir: string, env: Record<string, string>) => runMain(args, { cwd: dir, env });

const readBody = (req: IncomingMessage) =>
  new Promise<Buffer>((ok) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => ok(Buffer.concat(chunks)));
  });

async function runScenario(sc: Scenario, n: number): Promise<Outcome> {
  const out: Outcome = { violations: [], notes: [], moves: 0, deliveries: 0, stale: 0, refused: 0, kills: 0, unapplied: 0, commands: 0 };
  const dir = await workDir('pb-listen-fuzz-');
  const state = join(dir, 'state');
  const env = cleanEnv({ PAYOUT_BATCH_STATE_DIR: state, PAYOUT_BATCH_RATE: '1000' });
  const outputs: string[] = [];
  const world = JSON.parse(readFileSync(join(ROOT, 'src/sandbox/default-seed.json'), 'utf8')) as {
    businesses: { wallets: { currency: string; balance: string }[] }[];
  };
  if (sc.swap) for (const w of world.businesses[0]!.wallets) if (w.currency === 'USD') w.balance = '10.00';
  const sb: LocalSandbox = await startSandbox({
    seed: world,
    rateLimitPerSecond: null,
    monthlyQuota: null,
    shapes: sc.variant ? 'variant' : 'strict',
    randomSeed: SEED + n,
    webhookRetryDelaysMs: [100, 300, 700, 1500],
  });
  // the network between the service and the listen: what each delivery meets, by the scenario's modes in turn
  const held: { body: string; id: string; sig: string }[] = [];
  const modeOf = new Map<string, Mode>();
  let turns = 0;
  /** Payouts whose next status delivery is held ('stale' steps). */
  const holdNext = new Set<string>();
  let proxyBusy = 0;
  let listen: Listen | undefined;
  let second: Listen | undefined;
  let pair: Listen | undefined;
  let turn = 0;
  const post = async (body: string, id: string, sig: string): Promise<number> => {
    const up = [listen, pair].flatMap((l) => (l?.url ? [l.url] : []));
    if (!up.length) return 502;
    try {
      const r = await fetch(up[turn++ % up.length]!, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-service-delivery-id': id, 'x-service-signature': sig },
        body,
      });
      await r.arrayBuffer();
      return r.status;
    } catch {
      return 502;
    }
  };
  /** Another body (or the same one) signed with another secret, or a tampered body under the genuine signature: must be 401. */
  const forged = async (body: string, sig: string, how: 'forge' | 'oldSecret') => {
    const e = parseJson(body) ?? {};
    const data = (e.data ?? {}) as Record<string, unknown>;
    if ('newStatus' in data) data.newStatus = data.newStatus === 'FAILED' ? 'SUCCESSFUL' : 'FAILED';
    else data.amount = 999999;
    const tampered = JSON.stringify({ ...e, data });
    const s = how === 'forge' ? sig : signPayload(tampered, OLD_SECRET);
    const status = await post(tampered, randomUUID(), s);
    if (status !== 401 && status !== 502)
      out.violations.push(`(e) a delivery ${how === 'forge' ? 'tampered' : 'signed with an old secret'} answered ${status}, not 401`);
    else if (status === 401) out.refused++;
  };
  const proxy: Server = createServer((req, res) => {
    proxyBusy++;
    void (async () => {
      const body = (await readBody(req)).toString('utf8');
      const id = String(req.headers['x-service-delivery-id'] ?? '');
      const sig = String(req.headers['x-service-signature'] ?? '');
      const first = !modeOf.has(id);
      // (the modes in turn for status changes; wallet events, many at the run, forwarded or held once in five)
      const wallet = !body.includes('"payout.status.changed"');
      const of = String((parseJson(body)?.data as Record<string, unknown> | undefined)?.payoutId);
      if (first)
        modeOf.set(
          id,
          wallet ? (modeOf.size % 5 ? 'forward' : 'hold') : holdNext.delete(of) ? 'hold' : sc.modes[turns++ % sc.modes.length]!,
        );
      const mode = first ? modeOf.get(id)! : 'forward';
      let status = 200;
      if (mode === 'refuse') status = 503;
      else if (mode === 'hold') held.push({ body, id, sig });
      else {
        const sent = await Promise.all([post(body, id, sig), ...(mode === 'dup' ? [post(body, id, sig)] : [])]);
        status = mode === 'lose' && sent[0] === 200 ? 503 : (sent[0] ?? 502);
        if (mode === 'newId') await post(body, randomUUID(), sig);
        if (mode === 'forge' || mode === 'oldSecret') await forged(body, sig, mode);
      }
      out.deliveries += first ? 1 : 0;
      res.writeHead(status).end();
    })().finally(() => proxyBusy--);
  });
  await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', () => r()));
  const proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}/`;

  const csv = join(dir, 'pay.results.csv');
  const xlsx = join(dir, 'pay.results.xlsx');
  const files = [csv];
  /** Each payout's statuses at the service (status and detail), sampled after each step. */
  const history = new Map<string, Set<string>>();
  const pointOf = (p: { status: string; statusDetail?: string }) => `${p.status}${p.statusDetail ? `/${p.statusDetail}` : ''}`;
  /** Payouts asked for information again after it was under review (spec §3's one move down), and each one's last point. */
  const askedAgain = new Set<string>();
  const lastPoint = new Map<string, string>();
  const seen = (id: string, point: string) => {
    const h = history.get(id) ?? history.set(id, new Set()).get(id)!;
    h.add(point);
    if (point === 'ADDITIONAL_INFO_REQUIRED' && lastPoint.get(id) === 'PENDING/ADDITIONAL_INFO_UNDER_REVIEW') askedAgain.add(id);
    lastPoint.set(id, point);
  };
  const sample = () => {
    for (const p of sb.snapshot().payouts)
      seen(String(p.id), pointOf({ status: String(p.status), statusDetail: p.statusDetail as string | undefined }));
  };
  let runEnd = Infinity;
  try {
    await writeFile(join(dir, 'webhook.secret'), `${SECRET}\n`, { mode: 0o600 });
    const file = await writeBatch(dir, 'pay.csv', {
      rows: sc.rows,
      currencies: sc.swap ? ['USD', 'GBP', 'EUR'] : ['GBP', 'EUR', 'NGN'],
      prefix: `LF${n}`,
    });
    await registerSubscription(connectionTo(sb).client, proxyUrl, SECRET);
    const begin = async () => {
      listen = startListen(sc, dir, env, files, outputs);
      const t0 = Date.now();
      while (!listen.url && Date.now() - t0 < 30_000) {
        const ended = await Promise.race([listen.done.then(() => true), sleep(25).then(() => false)]);
        if (ended) break;
      }
      if (!listen.url) {
        const r = await listen.done;
        out.violations.push(`(e) listen did not start: exit ${r.code}: ${r.out.slice(0, 500)}`);
        listen = undefined;
      }
    };
    await begin();
    if (sc.pair) {
      pair = startListen({ ...sc, process: false }, dir, env, files, outputs, 'listen-state-2');
      while (!pair.url && !(await ended([pair]))) await sleep(25);
    }
    const run = await runHere(['run', file, '--base-url', sb.url, '--yes', '--json', ...(sc.swap ? ['--fund-by-swap'] : [])], dir, env);
    outputs.push(run.stdout, run.stderr);
    runEnd = sb.requestLog().length;
    out.notes.push(`run: exit ${run.code}${run.code ? `: ${run.stderr.trim().split('\n').slice(-2).join(' | ').slice(0, 300)}` : ''}`);
    if (STACK.test(run.stderr + run.stdout)) out.violations.push(`(e) run: ${run.stderr.slice(0, 800)}`);
    sample();

    /** Deliveries the listen recorded and applied (its inbox). */
    const inbox = async (stateDir = 'listen-state') => {
      const lines = (await readFile(join(dir, stateDir, 'inbox.jsonl'), 'utf8').catch(() => ''))
        .split('\n')
        .flatMap((l) => (l ? [parseJson(l) ?? {}] : []));
      const recorded = new Set(lines.filter((l) => l.t === 'delivery').map((l) => String(l.deliveryId)));
      const applied = new Set(lines.filter((l) => l.t === 'applied').map((l) => String(l.deliveryId)));
      return { recorded, applied };
    };
    /** The sandbox has nothing left to deliver, the proxy nothing in hand, the listen nothing unapplied. */
    const settle = async (what: string) => {
      const t0 = Date.now();
      for (;;) {
        const { recorded, applied } = await inbox();
        const two = await inbox('listen-state-2');
        const unapplied = [
          ...(listen ? [...recorded].filter((d) => !applied.has(d)) : []),
          ...(pair ? [...two.recorded].filter((d) => !two.applied.has(d)) : []),
        ];
        if (sb.pendingDeliveries() === 0 && proxyBusy === 0 && unapplied.length === 0) return;
        if (Date.now() - t0 > 30_000) {
          out.violations.push(
            `(b) ${what}: not settled in 30 s (${sb.pendingDeliveries()} deliveries pending, ${unapplied.length} recorded, not applied)`,
          );
          return;
        }
        await sleep(30);
      }
    };

    // (b): each (file, payout)'s rank when last read; a person's edit of a file forgets its
    const lastRank = new Map<string, { rank: number; point: string }>();
    const lastFold = new Map<string, number>();
    /** Each file's batch cells as the run or a person last wrote them: what a listen or status never changes. */
    const cellsWas = new Map<string, string>();
    const pasted = new Set<string>();
    const cellsOf = async (f: string) => JSON.stringify((await readResults(f)).rows.map((r) => r.cells));
    cellsWas.set(csv, await cellsOf(csv));
    const check = async (what: string) => {
      sample();
      for (const f of files) {
        const t = await readResults(f).catch(() => undefined);
        if (!t) {
          out.violations.push(`(a) ${what}: ${f.slice(dir.length + 1)} cannot be read`);
          continue;
        }
        if (JSON.stringify(t.rows.map((r) => r.cells)) !== cellsWas.get(f))
          out.violations.push(`(a) ${what}: the batch's cells of ${f.slice(dir.length + 1)} changed`);
        for (const r of t.rows) {
          const id = r.result.payoutId;
          const st = r.result.status ?? '';
          // (a row given another's payout id by a person: judged after the final status, (a))
          if (!id || !history.has(id) || pasted.has(`${f}\u0000${r.cells.reference}`)) continue;
          const point = pointOf({ status: st, statusDetail: r.result.statusDetail });
          if (!history.get(id)!.has(point) && statusRank({ status: st }) >= 0)
            out.violations.push(
              `(b) ${what}: ${f.slice(dir.length + 1)} row ${r.rowNumber} shows ${point}, a status payout ${id} never had (it had ${[...history.get(id)!].join(', ')})`,
            );
          const k = `${f}\u0000${r.cells.reference}\u0000${id}`;
          const rank = statusRank({ status: st, statusDetail: r.result.statusDetail });
          const before = lastRank.get(k);
          if (
            before &&
            rank >= 0 &&
            (rank < before.rank ? !(before.rank === 2 && rank === 1 && askedAgain.has(id)) : before.rank === 4 && point !== before.point)
          )
            out.violations.push(
              `(b) ${what}: ${f.slice(dir.length + 1)} row ${r.rowNumber} (payout ${id}) moved back: ${before.point} -> ${point}`,
            );
          if (rank >= 0) lastRank.set(k, { rank, point });
        }
      }
      for (const b of await foldAll(await ledgersIn([state])))
        for (const s of b.folded.rows.values()) {
          const p = s.payout;
          if (!p) continue;
          const rank = statusRank(p);
          const before = lastFold.get(p.id);
          if (before !== undefined && rank < before && !(before === 2 && rank === 1 && askedAgain.has(p.id)))
            out.violations.push(`(b) ${what}: the journal's fold moved payout ${p.id} back to ${pointOf(p)}`);
          lastFold.set(p.id, rank);
        }
    };
    const forget = async (f: string) => {
      cellsWas.set(f, await cellsOf(f));
      for (const k of [...lastRank.keys()]) if (k.startsWith(`${f}\u0000`)) lastRank.delete(k);
    };
    const command = async (args: string[], label: string) => {
      out.commands++;
      const r = await runHere([...args, '--base-url', sb.url], dir, env);
      outputs.push(r.stdout, r.stderr);
      out.notes.push(`${label}: exit ${r.code}${r.code ? `: ${r.stderr.trim().split('\n').slice(-1)[0]?.slice(0, 200) ?? ''}` : ''}`);
      if (STACK.test(r.stdout + r.stderr)) out.violations.push(`(e) ${label}: ${r.stderr.slice(0, 800)}`);
      return r;
    };
    const pickFile = (xl: boolean) => (xl && files.includes(xlsx) ? xlsx : csv);
    const move = async (row: number, pick: number, info: boolean) => {
      const payouts = sb.snapshot().payouts;
      if (!payouts.length) return;
      const p = payouts[row % payouts.length]!;
      const moves = PAYOUT_TRANSITIONS[p.status as PayoutStatus];
      if (!moves.length) return;
      // (mostly on towards SUCCESSFUL; a quarter FAILED or REJECTED)
      const on = moves.filter((m) => !isFinalStatus(m) || m === 'SUCCESSFUL');
      const off = moves.filter((m) => !on.includes(m));
      const to = (pick < 75 && on.length ? on[pick % on.length] : off[pick % off.length]) ?? moves[0]!;
      const body: Record<string, unknown> = { status: to };
      if (to === 'ADDITIONAL_INFO_REQUIRED' && info)
        body.informationRequests = [{ title: `Purpose ${pick}`, description: 'What is it for?', type: 'TEXT' }];
      if (to === 'FAILED' || to === 'REJECTED') body.reason = info ? 'Beneficiary bank declined' : 'Compliance review';
      const r = await fetch(`${sb.url}/_sandbox/payouts/${String(p.id)}/status`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      // (its new status into the history now: an attach may move it on before the step's sample)
      const now = parseJson(await r.text());
      if (r.status === 200 && now)
        seen(String(p.id), pointOf({ status: String(now.status), statusDetail: now.statusDetail as string | undefined }));
      out.moves++;
      out.notes.push(`${String(p.payoutRef)} ${String(p.status)} -> ${to}: ${r.status}`);
    };
    let down = 0;

    for (const [i, step] of sc.steps.entries()) {
      const what = `step ${i + 1} ${JSON.stringify(step)}`;
      if (down > 0 && --down === 0) await begin();
      switch (step.k) {
        case 'move':
          // (a chain: the next move before the last one's deliveries arrived, so that a resent one arrives after a later one)
          for (let c = 0; c < (step.chain ?? 1); c++) await move(step.row, step.pick, step.info);
          break;
        case 'swapMove': {
          const s = sb.snapshot().swaps.find((x) => x.status === 'PROCESSING');
          if (!s) break;
          const r = await fetch(`${sb.url}/_sandbox/swaps/${String(s.id)}/status`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ status: step.reject ? 'REJECTED' : 'SUCCESSFUL' }),
          });
          out.notes.push(`swap -> ${step.reject ? 'REJECTED' : 'SUCCESSFUL'}: ${r.status}`);
          break;
        }
        case 'stale': {
          // a payout's status change held, the payout moved on, then the held one delivered: stale
          const ps = sb.snapshot().payouts;
          const p = ps[step.row % ps.length];
          if (!p || isFinalStatus(String(p.status))) break;
          holdNext.add(String(p.id));
          await move(step.row, step.pick, false);
          await settle(what);
          await move(step.row, step.pick, false);
          await settle(what);
          holdNext.delete(String(p.id));
        }
        // falls through: the held deliveries delivered
        case 'release':
          if (!listen?.url) break;
          await settle(what);
          await check(`${what} (before the late deliveries)`);
          for (const h of held.splice(0)) {
            out.stale++;
            out.notes.push(
              `held delivery ${JSON.stringify(parseJson(h.body)?.data).slice(0, 160)} delivered late: ${await post(h.body, h.id, h.sig)}`,
            );
          }
          break;
        case 'kill': {
          if (!listen) break;
          if (step.hard < 0) await settle(`${what} (before)`);
          else {
            // a payout moved, its deliveries under way when the listen dies
            await move(step.hard, step.hard * 7, false);
            await sleep(step.hard);
          }
          await listen.stop(true);
          out.kills += sc.process ? 1 : 0;
          const left = await inbox();
          if (sc.process && [...left.recorded].some((d) => !left.applied.has(d))) out.unapplied++;
          out.notes.push(`listen ${sc.process ? 'killed (SIGKILL)' : 'stopped'}, down for ${step.down} steps`);
          listen = undefined;
          if (step.down === 0) await begin();
          else down = step.down + 1;
          break;
        }
        case 'second': {
          if (!listen) break;
          if (step.race) {
            // two started at once on the state folder the listen left: one listens, the other is refused
            await listen.stop(true);
            const both = [startListen(sc, dir, env, files, outputs), startListen({ ...sc, process: false }, dir, env, files, outputs)];
            const t0 = Date.now();
            while (Date.now() - t0 < 30_000 && both.filter((l) => l.url).length + (await ended(both)) < 2) await sleep(25);
            const up = both.filter((l) => l.url);
            out.notes.push(`two listens started at once: ${up.length} listening`);
            if (up.length !== 1) out.violations.push(`${what}: ${up.length} of two listens started at once on one state folder listen`);
            for (const l of both.filter((l) => !l.url))
              if (!/another listener uses/.test((await l.done).out)) out.violations.push(`${what}: ${(await l.done).out.slice(0, 300)}`);
            listen = up[0];
            for (const l of up.slice(1)) await l.stop(false);
            if (!listen) await begin();
            break;
          }
          second = startListen({ ...sc, process: false }, dir, env, files, outputs);
          const r = await Promise.race([second.done, sleep(10_000).then(() => undefined)]);
          if (!r) {
            out.violations.push(`${what}: a second listen runs on the same state folder`);
            await second.stop(false);
          } else if (r.code === 0 || !/another listener uses/.test(r.out))
            out.violations.push(`${what}: exit ${r.code}: ${r.out.slice(0, 300)}`);
          out.notes.push(`a second listen on the state folder: exit ${r?.code}`);
          second = undefined;
          break;
        }
        case 'status':
          if (step.busy >= 0) await move(step.busy, step.busy * 13, false);
          await command(['status', pickFile(step.xlsx), '--json'], `status ${pickFile(step.xlsx).slice(dir.length + 1)}`);
          break;
        case 'reconcile':
          if (step.busy >= 0) await move(step.busy, step.busy * 13, false);
          await command(
            ['reconcile', pickFile(step.xlsx), '--json', '--no-report'],
            `reconcile ${pickFile(step.xlsx).slice(dir.length + 1)}`,
          );
          break;
        case 'attach': {
          const t = await readResults(pickFile(step.xlsx)).catch(() => undefined);
          const row = t?.rows[step.row % (t?.rows.length || 1)];
          if (!row) break;
          if (step.busy >= 0) await move(step.row, step.busy * 13, false);
          await command(
            ['attach', row.cells.reference ?? '', DOCS[step.row % DOCS.length]!, '--results', pickFile(step.xlsx)],
            `attach ${row.cells.reference} (${row.result.status})`,
          );
          break;
        }
        case 'resave': {
          await settle(what);
          const t = await readResults(csv);
          await writeResults(xlsx, { ...t, format: 'xlsx' });
          if (!files.includes(xlsx)) files.push(xlsx);
          await forget(xlsx);
          for (const k of pasted) if (k.startsWith(`${csv}\u0000`)) pasted.add(k.replace(csv, xlsx));
          out.notes.push('results re-saved as pay.results.xlsx');
          break;
        }
        case 'edit': {
          await settle(what);
          const f = pickFile(step.xlsx);
          const t = await readResults(f);
          const r = t.rows[step.row % t.rows.length]!;
          if (step.kind === 'reorder') t.rows.reverse();
          if (step.kind === 'note') {
            t.inputColumns = [...t.inputColumns, 'note'];
            for (const x of t.rows) x.cells.note = `checked ${x.rowNumber}`;
          }
          if (step.kind === 'staleStatus') r.result.status = 'PENDING';
          if (step.kind === 'blankId') delete r.result.payoutId;
          if (step.kind === 'blankStatus') delete r.result.status;
          // (a paste slip: the next row's payout id)
          if (step.kind === 'otherId') {
            r.result.payoutId = t.rows[(step.row + 1) % t.rows.length]!.result.payoutId;
            pasted.add(`${f}\u0000${r.cells.reference}`);
          }
          if (step.kind === 'blankTimes') for (const x of t.rows) delete x.result.updatedAt;
          t.rows.forEach((x, j) => (x.rowNumber = j + 2));
          await writeResults(f, t);
          await forget(f);
          out.notes.push(`${f.slice(dir.length + 1)} edited: ${step.kind} (row ${r.rowNumber})`);
          break;
        }
      }
      if (listen) await settle(what);
      await check(what);
    }

    // the end: a listen up, held deliveries delivered (stale), everything applied, then the final status of each file
    if (!listen) await begin();
    await settle('the end');
    await check('the end (before the late deliveries)');
    for (const h of held.splice(0)) {
      out.stale++;
      await post(h.body, h.id, h.sig);
    }
    await settle('the end');
    await check('the end');
    await listen?.stop(false);
    await pair?.stop(false);
    listen = pair = undefined;
    sample();
    const service = new Map(sb.snapshot().payouts.map((p) => [String(p.id), p]));
    const refOfKey = new Map<string, string>();
    const refs = new Set((await readResults(csv)).rows.map((r) => r.cells.reference ?? ''));
    for (const ref of refs) for (let a = 1; a <= 4; a++) refOfKey.set(idempotencyKey(ref, a), ref);
    const keyOf = new Map<string, string>();
    for (const e of sb.snapshot().idempotency) {
      if (!e.recordId) continue;
      const [route] = e.fingerprint.split('\u0000');
      if (route === 'initiate') keyOf.set(String(e.recordId), e.slot.split('\u0000')[1]!);
    }
    for (const f of files) {
      const final = await command(['status', f, '--json'], `final status ${f.slice(dir.length + 1)}`);
      await check(`final status ${f.slice(dir.length + 1)}`);
      // (a) its exit code says what the service's payouts say (README, "Exit codes"): 1 failed or waiting for us, 5 in progress
      const all = [...service.values()].map((p) => String(p.status));
      const code = all.some((x) => ['FAILED', 'REJECTED', 'ADDITIONAL_INFO_REQUIRED'].includes(x))
        ? 1
        : all.every((x) => x === 'SUCCESSFUL')
          ? 0
          : 5;
      if (final.code !== code)
        out.violations.push(`(a) final status of ${f.slice(dir.length + 1)}: exit ${final.code}, the service's payouts say ${code}`);
      // (a)
      const t = await readResults(f);
      const shown = new Set<string>();
      for (const r of t.rows) {
        const id = r.result.payoutId;
        const ref = r.cells.reference ?? '';
        const mine = [...service.values()].find((p) => refOfKey.get(keyOf.get(String(p.id)) ?? '') === ref);
        if (!id) {
          if (mine)
            out.violations.push(
              `(a) ${f.slice(dir.length + 1)} row ${r.rowNumber} (${ref}) shows no payout; its payout is ${String(mine.id)}`,
            );
          continue;
        }
        const p = service.get(id);
        if (!p) {
          out.violations.push(`(a) ${f.slice(dir.length + 1)} row ${r.rowNumber} shows payout ${id}, none of the service's`);
          continue;
        }
        if (refOfKey.get(keyOf.get(id) ?? '') !== ref)
          out.violations.push(`(a) ${f.slice(dir.length + 1)} row ${r.rowNumber} (${ref}) shows payout ${id}, another row's`);
        if (shown.has(id)) out.violations.push(`(a) ${f.slice(dir.length + 1)}: payout ${id} on two rows`);
        shown.add(id);
        const want = pointOf({ status: String(p.status), statusDetail: p.statusDetail as string | undefined });
        const got = pointOf({ status: r.result.status ?? '', statusDetail: r.result.statusDetail });
        if (want !== got)
          out.violations.push(`(a) ${f.slice(dir.length + 1)} row ${r.rowNumber} (${ref}) shows ${got}, the service ${want}`);
      }
    }
    // (c) reconcile ties out, its figures the sandbox's transactions of the payouts the rows name and of the swap
    const rec = await command(['reconcile', csv, '--json', '--no-report'], 'final reconcile');
    const json = parseJson(rec.stdout);
    if (rec.code !== 0 || json?.tiesOut !== true)
      out.violations.push(
        `(c) reconcile: exit ${rec.code}, tiesOut ${String(json?.tiesOut)}: ${JSON.stringify(json?.problems ?? rec.stderr).slice(0, 600)}`,
      );
    const named = new Set((await readResults(csv)).rows.flatMap((r) => (r.result.payoutId ? [r.result.payoutId] : [])));
    const want = new Map<string, { debited: Dec; refunded: Dec; swapped: Dec }>();
    const zero = () => ({ debited: new Dec(0), refunded: new Dec(0), swapped: new Dec(0) });
    for (const tx of sb.snapshot().transactions) {
      const m = tx.metadata as Record<string, unknown>;
      const c = String(tx.currency);
      const w = want.get(c) ?? want.set(c, zero()).get(c)!;
      const amount = new Dec(String(tx.amount));
      if (m.kind === 'payout' && named.has(String(m.payoutId))) w.debited = w.debited.plus(amount);
      else if (m.kind === 'payout_refund' && named.has(String(m.payoutId))) w.refunded = w.refunded.plus(amount);
      else if (m.kind === 'swap' || m.kind === 'swap_reversal') w.swapped = w.swapped.plus(amount);
    }
    const totals = (json?.totals ?? []) as Record<string, string>[];
    for (const t of totals) {
      const w = want.get(t.currency!) ?? zero();
      const num = (v: string | undefined) => new Dec((v ?? '0').replaceAll(',', ''));
      for (const f of ['debited', 'refunded', 'swapped'] as const)
        if (!num(t[f]).eq(w[f]))
          out.violations.push(`(c) reconcile ${t.currency} ${f} ${t[f] ?? '0'}, the sandbox's transactions ${w[f].toFixed()}`);
    }
    for (const [c, w] of want)
      if (!w.debited.isZero() && !totals.some((t) => t.currency === c))
        out.violations.push(`(c) reconcile names no ${c}, the sandbox debited ${w.debited.toFixed()}`);
    // (d)
    for (const e of sb.requestLog().slice(runEnd))
      if (e.route === 'initiate' || e.route === 'swap') out.violations.push(`(d) ${e.method} ${e.path} after the run (${e.status})`);
    // (e) secrets
    const SECRETS = Object.entries({ 'API key': KEY, 'webhook secret': SECRET });
    for (const [k, secret] of SECRETS)
      if (outputs.some((o) => o.includes(secret))) out.violations.push(`(e) the ${k} in a command's output`);
    for (const f of await filesUnder(dir)) {
      if (f.endsWith('webhook.secret')) continue;
      const text = await readFile(f).catch(() => Buffer.alloc(0));
      for (const [k, secret] of SECRETS) if (text.includes(secret)) out.violations.push(`(e) the ${k} in ${f.slice(dir.length + 1)}`);
    }
    for (const o of outputs) if (STACK.test(o)) out.violations.push(`(e) a stack trace: ${o.slice(0, 600)}`);
  } catch (e) {
    out.violations.push(threw('e', e));
  } finally {
    await second?.stop(false);
    await listen?.stop(false);
    await pair?.stop(false);
    await sb.close();
    await new Promise<void>((r) => proxy.close(() => r()));
    proxy.closeAllConnections();
    await leave(dir, KEEP);
  }
  return out;
}

const scenarios = GIVEN ? [GIVEN] : fc.sample(scenarioArb, { seed: SEED, numRuns: RUNS });
const t0 = performance.now();
const totals = { moves: 0, deliveries: 0, stale: 0, refused: 0, kills: 0, unapplied: 0, commands: 0 };
const failures = await runScenarios(scenarios, { only: ONLY, given: !!GIVEN, verbose: VERBOSE }, runScenario, totals);
console.log(
  `\nseed ${SEED}, ${ONLY === undefined && !GIVEN ? RUNS : 1} scenarios, ${totals.moves} status moves, ${totals.deliveries} deliveries ` +
    `(${totals.stale} held and delivered late, ${totals.refused} forged refused), ${totals.kills} SIGKILLs (${totals.unapplied} with a delivery recorded, not applied), ${totals.commands} status/attach/reconcile runs, ` +
    `${failures} scenarios with a violation, ${((performance.now() - t0) / 1000).toFixed(0)} s`,
);
process.exitCode = failures ? 1 : 0;
