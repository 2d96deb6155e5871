// Fuzz: supporting documents (spec §4.2, §4.5, §4.6): uploads, PATCHes, merges, `attach` and kills, judged by the sandbox's
// own records (each payout's documents and the bytes its storage holds, the upload URLs it issued), never by the journal.
//   npx tsx test/chaos/docs-fuzz.ts [--seed S] [--runs N] [--verbose] [--only I] [--scenario JSON] [--keep]
//
// Each scenario (fast-check, from the seed): a pool of 3 to 8 files (PDFs of 1 to 3 pages, JPEG, PNG; the same bytes
// under another name; the same name in another folder; a missing one; a .docx; a .pdf that is text; a PDF whose
// structure is broken; a PNG named .jpg, a PDF named .docx) and a batch of 2 to 10 GBP/EUR rows naming 0 to 6 of them
// (a withdrawal row without any), `--merge-documents` or not. The first run: in-process through the engine with a
// client whose fetch injects faults (upload-url answered 503 or its answer lost; the storage PUT answered 500/403,
// hanging to the client's timeout or its answer lost; the PATCH answered 503, or 502 after it took effect), initiates
// dropped after create by the sandbox; or a process SIGKILLed after its Nth request to the sandbox; or `plan` + two
// approvals (+ a document changed on disk) + `run --plan`. Then 1 to 4 steps: the same file run again (faults or not,
// or as a process SIGKILLed), `retry` of the last results (a document path fixed, or a document replaced by other
// bytes), `attach` of 1 to 7 files to a payout (some already attached, fresh ones past 5, merged or not; the payout
// moved to SUCCESSFUL or FAILED first sometimes). A last clean run. Checked:
//   (a) one payout per reference;
//   (b) each payout holds only the bytes its row named at a run that could send it (merged: one PDF of their pages),
//       plus what an `attach` named; never more than 5; a payout `run --plan` made, only the approved bytes;
//   (c) every upload URL the service issued was PUT to, unless a fault or a kill hit it; each content stored at most
//       once, plus the PUTs whose answer a fault lost and the kills;
//   (d) every row of the file in the results; a payout lacking its row's documents says DOCUMENTS_NOT_ATTACHED and, not
//       final, how to finish; after an `attach`, a row whose payout holds its documents no longer says so;
//   (e) no `unexpected error` nor stack trace.
import { createHash } from 'node:crypto';
import { copyFile, mkdir, readFile, writeFile } from 'node:fs/promises';
import { isAbsolute, join, resolve } from 'node:path';
import { crc32, deflateSync } from 'node:zlib';
import fc from 'fast-check';
import { parse } from 'csv-parse/sync';
import { stringify } from 'csv-stringify/sync';
import { PDFDocument } from 'pdf-lib';
import { PayoutClient } from '../../src/client/client.ts';
import { execute, prepareRun } from '../../src/engine/pipeline.ts';
import { idempotencyKey } from '../../src/engine/identity.ts';
import { newKeyPair } from '../../src/approvals/approvals-file.ts';
import { readResults } from '../../src/results/read.ts';
import { isFinalStatus } from '../../src/spec/codes.ts';
import { startSandbox } from '../../src/sandbox/start-sandbox.ts';
import { approveAs, cleanEnv, generateCsv, KEY, runCli, runMain, workDir, type CliRun } from '../engine/helpers.ts';
import { setStatus, unattended } from '../ops/helpers.ts';
import {
  heldDocuments,
  pagesOf,
  type Held,
  fuzzFlags,
  leave,
  parseJson,
  runScenarios,
  sameCells,
  serviceRecords,
  threw,
  twicePaid,
} from './fuzz-judge.ts';

const { given: GIVEN, seed: SEED, runs: RUNS, verbose: VERBOSE, only: ONLY, keep: KEEP } = fuzzFlags<Scenario>();

// prettier-ignore
const DOC_KINDS = [
  'pdf', 'pdf', 'pdf', 'pdf', 'pdf', 'jpeg', 'jpeg', 'png', 'png', 'same', 'same', 'samename', 'samename', 'missing', 'docx', 'notpdf', 'brokenpdf',
  'misnamed',
] as const;
type DocKind = (typeof DOC_KINDS)[number];
interface Fault {
  route: 'uploadUrl' | 'storagePut' | 'patch';
  kind: 'before' | 'lost' | 'hang' | 'after';
  skip: number;
  times: number;
}
interface Step {
  t: 'rerun' | 'retry' | 'attach' | 'kill';
  faults: Fault[];
  /** retry: 0 none, 1 a document path fixed, 2 a document replaced by other bytes. attach: which payout. */
  pick: number;
  edit: 0 | 1 | 2;
  /** attach: pool files named, then fresh ones; merged; the payout moved first. */
  files: number[];
  fresh: number;
  merge: boolean;
  move: 'none' | 'SUCCESSFUL' | 'FAILED';
}
interface Scenario {
  docs: DocKind[];
  rows: { docs: number[]; withdrawal: boolean; absolute: boolean }[];
  merge: boolean;
  first: 'run' | 'kill' | 'plan';
  killAfter: number;
  planChange: boolean;
  faults: Fault[];
  drop: number;
  steps: Step[];
}

const faultArb: fc.Arbitrary<Fault> = fc
  .record({
    route: fc.constantFrom('uploadUrl', 'storagePut', 'patch'),
    kind: fc.constantFrom('before', 'before', 'lost', 'lost', 'hang', 'after'),
    skip: fc.nat(2),
    times: fc.oneof({ weight: 3, arbitrary: fc.integer({ min: 1, max: 2 }) }, { weight: 1, arbitrary: fc.constant(6) }),
  })
  .map((f) => ({
    ...f,
    // (upload-url answers no later effect; a PATCH does not hang here; a hang costs the client's timeout: rare, once)
    kind: f.route === 'uploadUrl' && f.kind === 'after' ? 'lost' : f.route === 'patch' && f.kind === 'hang' ? 'after' : f.kind,
    times: f.kind === 'hang' ? 1 : f.times,
  }));
const stepArb: fc.Arbitrary<Step> = fc.record({
  t: fc.constantFrom('rerun', 'retry', 'retry', 'attach', 'attach', 'kill'),
  faults: fc.array(faultArb, { maxLength: 2 }),
  pick: fc.nat(50),
  edit: fc.constantFrom(0, 1, 2),
  files: fc.array(fc.nat(7), { maxLength: 4 }),
  fresh: fc.nat(3),
  merge: fc.boolean(),
  move: fc.constantFrom('none', 'none', 'SUCCESSFUL', 'FAILED'),
});
const scenarioArb: fc.Arbitrary<Scenario> = fc
  .record({
    docs: fc.array(fc.constantFrom(...DOC_KINDS), { minLength: 3, maxLength: 8 }),
    rows: fc.array(
      fc.record({
        docs: fc.oneof(
          { weight: 6, arbitrary: fc.array(fc.nat(7), { maxLength: 4 }) },
          { weight: 1, arbitrary: fc.array(fc.nat(7), { minLength: 5, maxLength: 6 }) },
        ),
        withdrawal: fc.boolean(),
        absolute: fc.boolean(),
      }),
      { minLength: 2, maxLength: 10 },
    ),
    merge: fc.boolean(),
    first: fc.constantFrom('run', 'run', 'kill', 'plan'),
    killAfter: fc.integer({ min: 3, max: 16 }),
    planChange: fc.boolean(),
    faults: fc.array(faultArb, { maxLength: 3 }),
    drop: fc.constantFrom(0, 0, 0.3),
    steps: fc.array(stepArb, { minLength: 1, maxLength: 4 }),
  })
  .map((s) => ({
    ...s,
    docs: s.docs.map((k, i) => (i === 0 && (k === 'same' || k === 'samename') ? 'pdf' : k)),
    rows: s.rows.map((r) => ({ ...r, docs: r.docs.map((d) => d % s.docs.length), withdrawal: r.docs.length ? false : r.withdrawal })),
  }));

// --- documents ---

const sha = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');

async function pdf(tag: string, pages: number): Promise<Uint8Array> {
  const d = await PDFDocument.create();
  for (let i = 0; i < pages; i++) d.addPage([200 + (tag.length % 50), 200 + i]);
  d.setTitle(tag);
  d.setCreationDate(new Date(0));
  d.setModificationDate(new Date(0));
  return d.save();
}
function png(tag: string): Buffer {
  const chunk = (type: string, data: Buffer) => {
    const td = Buffer.concat([Buffer.from(type, 'latin1'), data]);
    const len = Buffer.alloc(4);
    len.writeUInt32BE(data.length);
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(crc32(td));
    return Buffer.concat([len, td, crc]);
  };
  const ihdr = Buffer.from([0, 0, 0, 1, 0, 0, 0, 1, 8, 2, 0, 0, 0]);
  const h = createHash('sha256').update(tag).digest();
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', ihdr),
    chunk('IDAT', deflateSync(Buffer.from([0, h[0]!, h[1]!, h[2]!]))),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}
/** A JPEG as far as its markers go (SOI, a comment naming it, SOF0 of 1x1, EOI): what pdf-lib embeds. */
function jpeg(tag: string): Buffer {
  const com = Buffer.from(tag, 'latin1');
  const len = Buffer.alloc(2);
  len.writeUInt16BE(com.length + 2);
  return Buffer.concat([
    Buffer.from([0xff, 0xd8, 0xff, 0xfe]),
    len,
    com,
    Buffer.from([0xff, 0xc0, 0x00, 0x0b, 0x08, 0x00, 0x01, 0x00, 0x01, 0x01, 0x01, 0x11, 0x00, 0xff, 0xd9]),
  ]);
}

interface PoolDoc {
  /** As the batch names it, relative to the batch's folder. */
  rel: string;
  kind: DocKind;
}

async function writePool(dir: string, kinds: DocKind[], n: number): Promise<PoolDoc[]> {
  const out: PoolDoc[] = [];
  await mkdir(join(dir, 'docs', 'other'), { recursive: true });
  for (const [i, kind] of kinds.entries()) {
    const tag = `scenario ${n} doc ${i}`;
    const put = async (rel: string, b: Uint8Array) => (await writeFile(join(dir, rel), b), out.push({ rel, kind }));
    if (kind === 'pdf') await put(`docs/d${i}.pdf`, await pdf(tag, 1 + (i % 3)));
    else if (kind === 'jpeg') await put(`docs/d${i}.jpg`, jpeg(tag));
    else if (kind === 'png') await put(`docs/d${i}.png`, png(tag));
    else if (kind === 'docx') await put(`docs/d${i}.docx`, Buffer.from(`PK\u0003\u0004 not a supporting document ${tag}`));
    else if (kind === 'notpdf') await put(`docs/d${i}.pdf`, Buffer.from(`an invoice, as text: ${tag}\n`));
    else if (kind === 'brokenpdf') await put(`docs/d${i}.pdf`, Buffer.from(`%PDF-1.4\n% not a PDF past its first line: ${tag}\n`));
    else if (kind === 'missing') out.push({ rel: `docs/gone-${i}.pdf`, kind });
    // (a PNG saved as .jpg, a PDF as .docx: valid by their bytes)
    else if (kind === 'misnamed') await (i % 2 ? put(`docs/d${i}.jpg`, png(tag)) : put(`docs/d${i}.docx`, await pdf(tag, 1)));
    else {
      // the same bytes under another name, or the same name in another folder with other bytes
      const src = out[i % out.length]!;
      const ext = src.rel.split('.').pop()!;
      if (kind === 'same' && src.kind !== 'missing') {
        await copyFile(join(dir, src.rel), join(dir, `docs/copy-${i}.${ext}`));
        out.push({ rel: `docs/copy-${i}.${ext}`, kind: src.kind });
      } else
        await put(
          `docs/other/${src.rel
            .split('/')
            .pop()!
            .replace(/\.\w+$/, '.pdf')}`,
          await pdf(`${tag} (same name)`, 1),
        );
    }
  }
  return out;
}

/** What a payout's document may be: these bytes, or a merged PDF of this many pages. */
type Want = { sha: string } | { pages: number };

/** The documents a row's cell names, as on disk now: what a run given it may attach; undefined when it cannot be sent. */
async function wantOf(dir: string, cell: string, merge: boolean, most = 5): Promise<Want[] | undefined> {
  const paths = cell.split(/\s*;\s*/).filter(Boolean);
  if (paths.length > most) return undefined;
  const files: Uint8Array[] = [];
  for (const p of paths) {
    const b = await readFile(isAbsolute(p) ? p : resolve(dir, p)).catch(() => undefined);
    if (!b) return undefined;
    files.push(b);
  }
  const distinct = files.filter((f, i) => files.findIndex((x) => sha(x) === sha(f)) === i);
  if (merge && distinct.length > 1) {
    let pages = 0;
    for (const f of distinct) pages += (await pagesOf(f)) ?? NaN;
    return Number.isNaN(pages) ? undefined : [{ pages }];
  }
  return distinct.map((f) => ({ sha: sha(f) }));
}

// --- faults: a fetch in front of the sandbox ---

const realFetch = globalThis.fetch;
class FaultyFetch {
  faults: (Fault & { seen: number })[] = [];
  /** Upload tokens a fault hit (an answer lost, a PUT failed), and the sha256 of each PUT whose answer was lost. */
  readonly hitTokens = new Set<string>();
  readonly lostPuts: string[] = [];
  injected = 0;
  set(f: Fault[]): void {
    this.faults = f.map((x) => ({ ...x, seen: 0 }));
  }
  readonly fetch = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const url = new URL(typeof input === 'string' ? input : input instanceof URL ? input.href : input.url);
    const method = (init?.method ?? 'GET').toUpperCase();
    const route =
      method === 'POST' && url.pathname.endsWith('/documents/upload-url')
        ? 'uploadUrl'
        : method === 'PUT' && url.pathname.startsWith('/_storage/uploads/')
          ? 'storagePut'
          : method === 'PATCH' && url.pathname.endsWith('/documents')
            ? 'patch'
            : undefined;
    // (each fault of the route counts the request; the first firing decides)
    const firing = this.faults.filter((f) => f.route === route && f.seen++ >= f.skip && f.seen <= f.skip + f.times);
    const fault = firing[0];
    if (!fault) return realFetch(input, init);
    this.injected++;
    const token = route === 'storagePut' ? url.pathname.split('/')[3]! : undefined;
    if (token) this.hitTokens.add(token);
    const status = route === 'storagePut' ? [500, 403][fault.seen % 2]! : 503;
    if (fault.kind === 'before')
      return new Response(`<Error><Code>Injected</Code><Message>${status}</Message></Error>`, {
        status,
        headers: { 'content-type': 'application/xml' },
      });
    if (fault.kind === 'hang')
      return new Promise((_, reject) => {
        const s = init?.signal;
        if (s?.aborted) return reject(s.reason as Error);
        s?.addEventListener('abort', () => reject(s.reason as Error), { once: true });
      });
    const res = await realFetch(input, init);
    const text = await res.text();
    if (route === 'uploadUrl') {
      const t = /\/_storage\/uploads\/([^?"]+)/.exec(text)?.[1];
      if (t) this.hitTokens.add(t);
    }
    if (route === 'storagePut' && res.status === 200 && init?.body instanceof Uint8Array) this.lostPuts.push(sha(init.body));
    if (fault.kind === 'lost')
      throw new TypeError('fetch failed', { cause: Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }) });
    return new Response(JSON.stringify({ code: 'BAD_GATEWAY', message: 'injected after the effect' }), {
      status: 502,
      headers: { 'content-type': 'application/json' },
    });
  };
}

// --- the scenario ---

const STACK = /unexpected error|\n\s+at .+:\d+:\d+\)?/i;
const HOST_COLUMNS = ['documents', 'withdrawal'];

interface Outcome {
  violations: string[];
  notes: string[];
  runs: number;
  payouts: number;
  docsHeld: number;
  uploads: number;
  faults: number;
  kills: number;
  attaches: number;
}

async function runScenario(sc: Scenario, n: number): Promise<Outcome> {
  const out: Outcome = { violations: [], notes: [], runs: 0, payouts: 0, docsHeld: 0, uploads: 0, faults: 0, kills: 0, attaches: 0 };
  const dir = await workDir('pb-docs-fuzz-');
  const state = join(dir, 'state');
  process.env.PAYOUT_BATCH_STATE_DIR = state;
  let onRequest = () => {};
  const sb = await startSandbox({ rateLimitPerSecond: null, monthlyQuota: null, randomSeed: SEED + n, onRequest: () => onRequest() });
  const faulty = new FaultyFetch();
  globalThis.fetch = faulty.fetch;
  try {
    const pool = await writePool(dir, sc.docs, n);
    const file = join(dir, 'pay.csv');
    const rows = parse<Record<string, string>>(generateCsv({ rows: sc.rows.length, currencies: ['GBP', 'EUR'], prefix: `DF${n}` }), {
      columns: true,
    });
    for (const [i, r] of rows.entries()) {
      const spec = sc.rows[i]!;
      r.documents = spec.docs.map((d) => (spec.absolute ? join(dir, pool[d]!.rel) : pool[d]!.rel)).join(';');
      r.withdrawal = String(spec.withdrawal);
    }
    const header = Object.keys(rows[0]!);
    for (const c of HOST_COLUMNS) if (!header.includes(c)) throw new Error(`no ${c} column`);
    await writeFile(file, stringify([header, ...rows.map((r) => header.map((h) => r[h] ?? ''))]));
    const refs = new Set(rows.map((r) => r.reference!));
    const refOfKey = new Map<string, string>();
    for (const ref of refs) for (let a = 1; a <= 8; a++) refOfKey.set(idempotencyKey(ref, a), ref);
    /** What each reference's payout may hold: one list per run that could send it; and what `attach` named for it. */
    const wants = new Map<string, Want[][]>();
    const attached = new Map<string, Want[]>();
    const noteWants = async (cellsOf: Record<string, string>[], merge: boolean) => {
      for (const r of cellsOf) {
        const w = await wantOf(dir, r.documents ?? '', merge);
        if (w && r.reference) wants.set(r.reference.trim(), [...(wants.get(r.reference.trim()) ?? []), w]);
      }
    };
    const env = cleanEnv({ PAYOUT_BATCH_STATE_DIR: state, PAYOUT_BATCH_RATE: '1000' });
    const common = ['--base-url', sb.url, '--yes', '--json', '--allow-partial', ...(sc.merge ? ['--merge-documents'] : [])];
    const client = () =>
      new PayoutClient({
        baseUrl: sb.url,
        apiKey: KEY,
        requestsPerSecond: 1000,
        timeoutMs: 1500,
        retry: { maxAttempts: 3, baseDelayMs: 5, maxDelayMs: 20 },
        fetch: faulty.fetch,
      });
    let lastResults: string | undefined;
    const killedTokens = new Set<string>();
    const tokens = () => new Set(sb.snapshot().documents.map((d) => d.uploadToken));

    /** After each command: the judge. `given`: the rows given (for d); `planned`: the digests a plan signed, per reference. */
    const judge = async (
      what: string,
      r: CliRun | undefined,
      given: Record<string, string>[] | undefined,
      written: string | undefined,
      planned?: Map<string, Set<string>>,
      before?: Set<string>,
    ) => {
      if (r && STACK.test(r.stderr + r.stdout)) out.violations.push(`(e) ${what}: ${(r.stderr + r.stdout).slice(0, 800)}`);
      const recs = serviceRecords(sb);
      out.violations.push(...twicePaid(recs, refs).map((v) => `(a) after ${what}: ${v}`));
      const held = await heldDocuments(sb);
      const incomplete = new Set<string>();
      for (const p of recs) {
        const ref = p.made && refOfKey.get(p.made.key);
        if (!ref) continue;
        const docs = held.get(p.id) ?? [];
        if (docs.length > 5) out.violations.push(`(b) after ${what}: payout ${p.id} (${ref}) holds ${docs.length} documents`);
        const extra = attached.get(ref) ?? [];
        const options = wants.get(ref) ?? [];
        const fits = options.some((w) => fitsWithin([...w, ...extra], docs));
        if (!fits) {
          const others = [...wants].filter(([r2]) => r2 !== ref).flatMap(([, ws]) => ws.flat());
          const foreign = docs.filter((d) => others.some((w) => matchOne(w, d)) && !options.some((ws) => ws.some((w) => matchOne(w, d))));
          out.violations.push(
            `(b) after ${what}: payout ${p.id} (${ref}) holds ${JSON.stringify(docs)}; its row named ${JSON.stringify(options)}` +
              (extra.length ? `, attach ${JSON.stringify(extra)}` : '') +
              (foreign.length ? ` (another row's: ${JSON.stringify(foreign)})` : ''),
          );
        }
        if (planned && before && !before.has(p.id)) {
          const signed = planned.get(ref);
          const bad = docs.filter((d) => !('sha' in d) || !signed?.has(d.sha));
          if (bad.length)
            out.violations.push(`(b) ${what}: payout ${p.id} (${ref}) made by run --plan holds unsigned ${JSON.stringify(bad)}`);
        }
        if (!options.some((w) => holdsAll(docs, w))) incomplete.add(p.id);
      }
      // (d)
      if (written && given) {
        const after = (await readResults(written)).rows;
        if (
          !sameCells(
            given,
            after.map((x) => x.cells),
          )
        )
          out.violations.push(`(d) ${what}: ${given.length} rows given, ${after.length} in ${written}; cells differ`);
        for (const x of after) {
          if (x.result.errorCode === 'DOCUMENTS_NOT_ATTACHED') out.notes.push(`${what}: ${x.cells.reference} ${x.result.errorMessage}`);
          if (
            x.result.errorCode === 'DOCUMENTS_NOT_ATTACHED' &&
            !isFinalStatus(x.result.status ?? '') &&
            !/retry|payout-batch attach/.test(x.result.errorMessage ?? '')
          )
            out.violations.push(
              `(d) ${what}: row ${x.rowNumber} (${x.cells.reference}) DOCUMENTS_NOT_ATTACHED, not saying how to finish: ${x.result.errorMessage}`,
            );
          if (
            x.result.payoutId &&
            incomplete.has(x.result.payoutId) &&
            x.result.errorCode !== 'DOCUMENTS_NOT_ATTACHED' &&
            x.result.status !== 'ALREADY_PAID'
          )
            out.violations.push(
              `(d) ${what}: row ${x.rowNumber} (${x.cells.reference}) payout ${x.result.payoutId} lacks its documents, results say ${x.result.status} ${x.result.errorCode ?? ''}`,
            );
        }
      } else if (r && !r.signal && r.code !== 0 && !r.stderr.trim() && !r.stdout.trim())
        out.violations.push(`(d) ${what}: exit ${r.code} saying nothing`);
    };

    const viaMain = async (what: string, args: string[], faults: Fault[] = []) => {
      faulty.set(faults);
      const r = await runMain(args, { cwd: dir, env });
      faulty.set([]);
      out.runs++;
      const json = parseJson(r.stdout.trim().split('\n').at(-1) ?? '') ?? parseJson(r.stdout);
      const written = typeof json?.results === 'string' ? json.results : undefined;
      out.notes.push(
        `${what}: exit ${r.code}${written ? ` -> ${written.slice(dir.length + 1)}` : ''}: ${r.stderr.trim().split('\n').slice(-2).join(' | ').slice(0, 300)}`,
      );
      return { r, written };
    };
    const fileRows = async () => parse<Record<string, string>>(await readFile(file, 'utf8'), { columns: true });

    // the first run
    await noteWants(rows, sc.merge);
    if (sc.first === 'run') {
      faulty.set(sc.faults);
      if (sc.drop) sb.setFaults({ dropAfterCreate: sc.drop, routes: ['initiate'] });
      const prepared = await prepareRun({
        file,
        conn: {
          client: client(),
          environment: { name: 'custom', keyClass: 'sandbox', baseUrl: sb.url },
          usage: undefined,
          sandbox: undefined,
          close: async () => {},
        },
        stateDir: state,
        ...unattended({ settleDelayMs: 1, mergeDocuments: sc.merge }, { allowPartial: true }),
      });
      const first = await execute(prepared, { confirmed: true }).catch((e: unknown) => {
        out.notes.push(`run (engine): threw ${e instanceof Error ? e.message : String(e)}`);
        if (STACK.test(e instanceof Error ? e.message : String(e))) out.violations.push(threw('e', e));
        return undefined;
      });
      sb.setFaults({});
      faulty.set([]);
      out.runs++;
      const written = first && first.resultsWritten !== false ? first.resultsPath : undefined;
      out.notes.push(`run (engine, faults ${JSON.stringify(sc.faults)}, drop ${sc.drop}): ${first?.kind}`);
      lastResults = written ?? lastResults;
      await judge('the first run', undefined, rows, written);
    } else if (sc.first === 'kill') {
      const before = tokens();
      let seen = 0;
      const k = await runCli(['run', file, ...common], {
        cwd: dir,
        env,
        onSpawn: (c) => (onRequest = () => void (++seen === sc.killAfter && c.kill('SIGKILL'))),
      });
      onRequest = () => {};
      out.runs++;
      out.kills += k.signal ? 1 : 0;
      for (const t of tokens()) if (!before.has(t)) killedTokens.add(t);
      out.notes.push(`run as a process: ${k.signal ? `killed after ${seen} requests` : `exit ${k.code}`}`);
      await judge('the killed run', k, undefined, undefined);
      const again = await viaMain('run after the kill', ['run', file, ...common]);
      lastResults = again.written ?? lastResults;
      await judge('the run after the kill', again.r, rows, again.written);
    } else {
      const keys = { Alice: newKeyPair(), Bob: newKeyPair() };
      const approvers = join(dir, 'approvers.json');
      await writeFile(approvers, JSON.stringify(Object.entries(keys).map(([name, k]) => ({ name, publicKey: k.publicKey }))));
      const plan = join(dir, 'pay.plan.json');
      const made = await viaMain('plan', ['plan', file, '--out', plan, '--prepared-by', 'Dan', '--allow-partial', '--base-url', sb.url]);
      await judge('plan', made.r, undefined, undefined);
      const signed = parseJson(await readFile(plan, 'utf8').catch(() => '')) as
        { rows?: { reference: string; documents?: { sha256: string }[] }[] } | undefined;
      const planned = new Map((signed?.rows ?? []).map((r) => [r.reference, new Set((r.documents ?? []).map((d) => d.sha256))]));
      for (const [name, k] of Object.entries(keys)) await approveAs(plan, name, k.privatePem);
      if (sc.planChange) {
        const victim = pool.find((d) => d.kind === 'pdf');
        if (victim) {
          await writeFile(join(dir, victim.rel), await pdf(`changed after approval ${n}`, 2));
          out.notes.push(`${victim.rel} changed after approval`);
        }
      }
      const before = new Set(serviceRecords(sb).map((p) => p.id));
      const r = await viaMain('run --plan', ['run', '--plan', plan, '--require-approvals', '2', '--approvers', approvers, ...common]);
      lastResults = r.written ?? lastResults;
      await judge('run --plan', r.r, r.written ? rows : undefined, r.written, planned, before);
      await noteWants(rows, sc.merge);
    }

    for (const [k, step] of sc.steps.entries()) {
      const what = `step ${k + 1} ${step.t}`;
      // (the CLI's client waits 30 s for an answer and retries 8 times: no hang, at most two failures in a row here)
      step.faults = step.faults.map((f) => ({ ...f, kind: f.kind === 'hang' ? 'before' : f.kind, times: Math.min(f.times, 2) }));
      if (step.t === 'kill') {
        // the same file run again as a process, killed after its Nth request (what is left: documents to PATCH, rows to settle)
        const [before, at] = [tokens(), 1 + (step.pick % 8)];
        let seen = 0;
        const k = await runCli(['run', file, ...common], {
          cwd: dir,
          env,
          onSpawn: (c) => (onRequest = () => void (++seen === at && c.kill('SIGKILL'))),
        });
        onRequest = () => {};
        out.runs++;
        out.kills += k.signal ? 1 : 0;
        for (const t of tokens()) if (!before.has(t)) killedTokens.add(t);
        out.notes.push(`${what} as a process: ${k.signal ? `killed after ${seen} requests` : `exit ${k.code}`}`);
        await judge(what, k, undefined, undefined);
      } else if (step.t === 'rerun') {
        const r = await viaMain(`${what} (faults ${JSON.stringify(step.faults)})`, ['run', file, ...common], step.faults);
        lastResults = r.written ?? lastResults;
        await noteWants(await fileRows(), sc.merge);
        await judge(what, r.r, await fileRows(), r.written);
      } else if (step.t === 'retry') {
        if (!lastResults) continue;
        const table = parse<Record<string, string>>(await readFile(lastResults, 'utf8'), { columns: true, bom: true });
        let did = 'no edit';
        if (step.edit === 1) {
          const bad = table.find((x) => x.status === 'INVALID' && /DOCUMENT|TOO_MANY/.test(x.errorCode ?? ''));
          const good = pool.filter((d) => ['pdf', 'jpeg', 'png'].includes(d.kind));
          if (bad && good.length) {
            bad.documents = good[step.pick % good.length]!.rel;
            did = `${bad.reference} documents -> ${bad.documents}`;
          }
        } else if (step.edit === 2) {
          const victim = pool.filter((d) => d.kind === 'pdf')[step.pick % 3];
          if (victim) {
            await writeFile(join(dir, victim.rel), await pdf(`replaced ${n} ${k}`, 1 + (step.pick % 2)));
            did = `${victim.rel} replaced by other bytes`;
          }
        }
        const edited = join(dir, `edited-${k}.results.csv`);
        await writeFile(edited, stringify(table, { header: true }));
        const inputCols = Object.keys(parse<Record<string, string>>(await readFile(file, 'utf8'), { columns: true })[0]!);
        const given = table.map((x) => Object.fromEntries(inputCols.map((c) => [c, x[c] ?? ''])));
        await noteWants(given, sc.merge);
        const r = await viaMain(`${what} [${did}] (faults ${JSON.stringify(step.faults)})`, ['retry', edited, ...common], step.faults);
        lastResults = r.written ?? lastResults;
        await judge(what, r.r, r.written ? given : undefined, r.written);
      } else {
        const recs = serviceRecords(sb).filter((p) => p.made && refOfKey.has(p.made.key));
        if (!recs.length) continue;
        const p = recs[step.pick % recs.length]!;
        const ref = refOfKey.get(p.made!.key)!;
        if (step.move !== 'none') {
          await setStatus(sb, p.id, 'PROCESSING').catch(() => {});
          await setStatus(sb, p.id, step.move).catch((e: unknown) => out.notes.push(`move: ${String(e)}`));
        }
        const files = step.files.map((i) => pool[i % pool.length]!.rel);
        for (let j = 0; j < step.fresh; j++) {
          const rel = `docs/fresh-${k}-${j}.pdf`;
          await writeFile(join(dir, rel), await pdf(`fresh ${n} ${k} ${j}`, 1));
          files.push(rel);
        }
        if (!files.length) continue;
        const heldBefore = (await heldDocuments(sb)).get(p.id) ?? [];
        const statusBefore = String(sb.snapshot().payouts.find((x) => String(x.id) === p.id)?.status);
        const w = await wantOf(dir, files.join(';'), false, Infinity);
        // (attach --merge merges only the files the payout lacks: its pages are unknown here; any merged PDF of theirs)
        if (w) attached.set(ref, [...(attached.get(ref) ?? []), ...w, ...(step.merge ? [{ pages: -1 }] : [])]);
        const args = [
          'attach',
          ref,
          ...files,
          ...(lastResults ? ['--results', lastResults] : []),
          '--base-url',
          sb.url,
          '--json',
          ...(step.merge ? ['--merge'] : []),
        ];
        const r = await viaMain(
          `${what} ${ref} (${p.id}, ${statusBefore}) ${files.join(' ')}${step.merge ? ' --merge' : ''}`,
          args,
          step.faults,
        );
        out.attaches++;
        const heldAfter = (await heldDocuments(sb)).get(p.id) ?? [];
        if (isFinalStatus(statusBefore) && heldAfter.length !== heldBefore.length)
          out.violations.push(`(b) ${what}: payout ${p.id} ${statusBefore} got documents (${heldBefore.length} -> ${heldAfter.length})`);
        await judge(what, r.r, undefined, undefined);
        // the results file attach brought up to date: a row whose payout holds its documents does not say they are missing
        if (lastResults && r.r.code === 0) {
          const held = await heldDocuments(sb);
          for (const x of (await readResults(lastResults)).rows) {
            const docs = held.get(x.result.payoutId ?? '');
            const w = wants.get(x.cells.reference?.trim() ?? '') ?? [];
            if (docs && x.result.payoutId === p.id && x.result.errorCode === 'DOCUMENTS_NOT_ATTACHED' && w.some((ws) => holdsAll(docs, ws)))
              out.violations.push(
                `(d) ${what}: ${lastResults.slice(dir.length + 1)} row ${x.rowNumber} says DOCUMENTS_NOT_ATTACHED; its payout holds them`,
              );
          }
        }
      }
    }

    // the last clean run
    const last = await viaMain('last run', ['run', file, ...common]);
    await judge('the last run', last.r, await fileRows(), last.written);
    const written = last.written ?? lastResults;
    if (written) {
      const held = await heldDocuments(sb);
      for (const x of (await readResults(written)).rows) {
        const id = x.result.payoutId;
        const ref = x.cells.reference?.trim() ?? '';
        if (!id || !held.has(id) || x.result.status === 'ALREADY_PAID') continue;
        const docs = held.get(id)!;
        const options = wants.get(ref) ?? [];
        if (!options.some((w) => holdsAll(docs, w)) && x.result.errorCode !== 'DOCUMENTS_NOT_ATTACHED')
          out.violations.push(`(d) last: ${ref} payout ${id} holds ${docs.length} of its documents; results say ${x.result.status}`);
      }
    }

    // (c) the upload URLs the service issued, and the contents stored
    const snap = sb.snapshot();
    for (const d of snap.documents)
      if (!d.uploaded && !faulty.hitTokens.has(d.uploadToken) && !killedTokens.has(d.uploadToken))
        out.violations.push(`(c) upload URL ${d.uploadToken.slice(0, 8)} issued, never PUT to, no fault nor kill on it`);
    const stored = new Map<string, number>();
    for (const d of snap.documents)
      if (d.uploaded)
        stored.set(sha(Buffer.from(d.uploaded.base64, 'base64')), (stored.get(sha(Buffer.from(d.uploaded.base64, 'base64'))) ?? 0) + 1);
    for (const [s, c] of stored) {
      const allowed = 1 + faulty.lostPuts.filter((x) => x === s).length + out.kills;
      if (c > allowed) out.violations.push(`(c) the content ${s.slice(0, 12)} stored ${c} times (at most ${allowed})`);
    }
    out.uploads += snap.documents.filter((d) => d.uploaded).length;
    out.faults += faulty.injected;
    const recs = serviceRecords(sb);
    const heldAtEnd = await heldDocuments(sb);
    out.notes.push(
      `held at the end: ${recs.map((p) => `${p.made ? refOfKey.get(p.made.key) : p.id} ${p.status} ${heldAtEnd.get(p.id)?.length}`).join(', ')}`,
    );
    out.payouts += recs.length;
    out.docsHeld += [...(await heldDocuments(sb)).values()].reduce((a, d) => a + d.length, 0);
  } catch (e) {
    out.violations.push(threw('e', e));
  } finally {
    globalThis.fetch = realFetch;
    await sb.close();
    await leave(dir, KEEP);
  }
  return out;
}

const matchOne = (w: Want, d: Held): boolean =>
  'sha' in w ? w.sha === d.sha : d.pages !== undefined && (w.pages === -1 || w.pages === d.pages);

/** Whether each document held is one of `allowed` (each used once). */
function fitsWithin(allowed: Want[], held: Held[]): boolean {
  const left = [...allowed];
  for (const d of held) {
    const i = left.findIndex((w) => matchOne(w, d));
    if (i < 0) return false;
    left.splice(i, 1);
  }
  return true;
}

/** Whether each document wanted is held (each held one used once). */
function holdsAll(held: Held[], want: Want[]): boolean {
  const left = [...held];
  for (const w of want) {
    const i = left.findIndex((d) => matchOne(w, d));
    if (i < 0) return false;
    left.splice(i, 1);
  }
  return true;
}

const scenarios = GIVEN ? [GIVEN] : fc.sample(scenarioArb, { seed: SEED, numRuns: RUNS });
const t0 = performance.now();
const totals = { runs: 0, payouts: 0, docsHeld: 0, uploads: 0, faults: 0, kills: 0, attaches: 0 };
const failures = await runScenarios(scenarios, { only: ONLY, given: !!GIVEN, verbose: VERBOSE }, runScenario, totals);
console.log(
  `\nseed ${SEED}, ${ONLY === undefined && !GIVEN ? RUNS : 1} scenarios, ${totals.runs} commands, ${totals.kills} SIGKILLs, ${totals.attaches} attaches, ` +
    `${totals.faults} faults injected, ${totals.payouts} payouts holding ${totals.docsHeld} documents, ${totals.uploads} uploads stored, ` +
    `${failures} scenarios with a violation, ${((performance.now() - t0) / 1000).toFixed(0)} s`,
);
process.exitCode = failures ? 1 : 0;
