// Fuzz: approved plans tampered with after approval, then run with random flags, judged by the sandbox's own
// records (the key and body that created each payout, the bytes of each document it attached), never by the
// tool's journal or results.
//   npx tsx test/chaos/plan-fuzz.ts [--seed S] [--runs N] [--verbose] [--only I] [--scenario JSON] [--keep]
//
// Each run (a scenario fast-check draws from the seed): a batch of 5 to 10 rows (GBP, EUR, NGN; CSV or XLSX;
// some rows with one or two documents, PDF files on disk; an invalid row sometimes), a maker's plan (`plan
// --out`, signed by the maker sometimes), approvals by 1 to 4 signers (listed approvers, the maker, an unlisted
// key, a listed name under another's key), four eyes asked by `--require-approvals N` (flag) or by the account's
// policy (`policy set`, an installation of the package of its own: its runs are processes). Then 0 to 3
// mutations after approval: the plan's bytes (a body's amount, account, name as a look-alike, currency; a row's
// reference or number; a document digest; rows reordered, duplicated, deleted; whitespace, key order, BOM, CRLF,
// numbers as 1e3 or 1.50), a document edited, replaced or deleted (before the run, or as its first initiate
// arrives), the batch file edited, deleted or moved, approvals.json (a signature copied to another name, an
// approver twice, signedAt changed, the maker's signature dropped, a name in other case), approvers.json (a
// key swapped, a name twice, the maker listed). Then 1 to 3 steps: `run --plan` (flags drawn: --allow-partial,
// --rate, --state-dir another folder, --merge-documents, --batch-id, --sheet), the same as a process killed
// (SIGKILL) at its first to third initiate, `retry` of the last results, `run FILE` without the plan (under a
// policy); a wallet drained as a step's first initiate arrives (the service refuses its rows), everything put
// back as approved before a step sometimes; a watch step: `watch DIR --once` (a process) with the batch dropped into
// DIR/inbox with its plan and approvals (companionsOf's names), or without them, or them after the batch (a later tick),
// or a plan approved for other content; four eyes from DIR/payout-batch.json ("requireApprovals", "approvers"), the
// account's policy (with `--above` sometimes) or both; the step's mutations before the drop, between the drop and the
// tick, or as its first initiate arrives (to the claimed copies); the tick SIGKILLed at its 1st to 3rd initiate and ticked
// again; two ticks at once sometimes. Checked after each step:
//   (a) every payout the service created came from the signed plan's body for its key's reference (the body it
//       recorded, less the upload's URL); a step refused (exit 2 or 3) made no initiate, upload or PATCH; a step
//       the model says must be refused (approvals short, the plan, batch file or a document not as approved)
//       sent nothing;
//   (b) no reference has two payouts; no payout under a key of no reference;
//   (c) each document the service attached to a payout is one of the signed documents of its reference (sha256
//       of the bytes in its storage);
//   (d) no "unexpected error" nor stack trace;
//   (w) a watch step's file ends in done/ or failed/ (or processing/, a reason printed), a failed/ one's reason names
//       commands whose files exist, and a file the rule must refuse sent no request at all (the sandbox's log).
// Under a policy with `--above`, a payout of no approved plan (a run without the plan, a plan short of approvals, a
// watch given no plan) matches a row of the batch file, in a currency --above names, all of them within its amounts.
// A `retry` without a policy carries no four eyes (src/approvals/REFERENCE.md: only a policy binds retry): its
// payouts are judged by (b) and (d), and counted apart. Exits 1 when any check fails, printing the scenario.
import { copyFile, cp, mkdir, readFile, rename, rm, writeFile, appendFile } from 'node:fs/promises';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { parse } from 'csv-parse/sync';
import { stringify } from 'csv-stringify/sync';
import * as XLSX from 'xlsx';
import { newKeyPair, type NewKeyPair } from '../../src/approvals/approvals-file.ts';
import { bodyDigest } from '../../src/engine/plan-file.ts';
import { idempotencyKey } from '../../src/engine/identity.ts';
import { Dec } from '../../src/money.ts';
import { companionsOf } from '../../src/watch/inbox.ts';
import { startSandbox, type LocalSandbox } from '../../src/sandbox/start-sandbox.ts';
import { approveAs, cleanEnv, generateCsv, ROOT, runCli, runMain, workDir, type CliRun } from '../engine/helpers.ts';
import { install } from '../approvals/install.ts';
import {
  attachedDigests,
  creditBack,
  drainWallet,
  fuzzFlags,
  matches,
  parseJson,
  runScenarios,
  serviceRecords,
  twicePaid,
  threw,
  leave,
} from './fuzz-judge.ts';

const { given: GIVEN, seed: SEED, runs: RUNS, verbose: VERBOSE, only: ONLY, keep: KEEP } = fuzzFlags<Scenario>();

const PEOPLE = ['Alice', 'Bob', 'Carol', 'Dan', 'Eve'] as const; // Dan makes the plan; Eve is listed nowhere
type Person = (typeof PEOPLE)[number];
// prettier-ignore
const MUTATIONS = [
  'planAmount', 'planAccount', 'planName', 'planCurrency', 'planReference', 'planRowNumber', 'planDigest', 'planReorder',
  'planDuplicate', 'planDelete', 'planWhitespace', 'planKeyOrder', 'planBom', 'planCrlf', 'planNumber',
  'docEdit', 'docReplace', 'docDelete', 'docMidRun', 'batchEdit', 'batchDelete', 'batchMove', 'batchSame',
  'apCopySignature', 'apDuplicate', 'apSignedAt', 'apDropMaker', 'apNameCase', 'apFolder', 'apGarbage', 'alSwapKeys', 'alTwice', 'alMaker',
  'alGarbage', 'none',
] as const;
type MutationKind = (typeof MUTATIONS)[number];
interface Mutation {
  kind: MutationKind;
  row: number;
  pick: number;
  /** Before the step of this index (modulo their number): most before the first, some between a kill and its rerun. */
  at: number;
}
/** A watch step's draws (`watch DIR --once` on the scenario's folder). */
interface WatchDraw {
  /** The step's mutations: to the maker's files before the drop, to the inbox's copies after it, to the claimed copies as the first initiate arrives. */
  at: 'before' | 'dropped' | 'initiate';
  /** The plan and approvals: dropped with the batch, not at all, after it (a later tick), or a plan approved for other content. */
  companions: 'with' | 'missing' | 'later' | 'other';
  /** "requireApprovals" and "approvers" in DIR/payout-batch.json (under no policy: always). */
  config: boolean;
  /** SIGKILLed at the step's `kill`-th initiate, then ticked again. */
  kill: boolean;
  /** Two ticks at once on the folder. */
  twice: boolean;
}
interface Step {
  kind: 'plan' | 'kill' | 'retry' | 'direct' | 'watch';
  watch?: WatchDraw;
  allowPartial: boolean;
  rate: boolean;
  otherState: boolean;
  merge: boolean;
  batchId: boolean;
  sheet: boolean;
  /** A wallet of this currency drained as the step's first initiate arrives, credited back after it. */
  drain: 'none' | 'GBP' | 'EUR' | 'NGN';
  /** The drained wallet short already at the step's preflight (drained before it), rather than from its first initiate. */
  early: boolean;
  fundBySwap: boolean;
  other: 'none' | 'sanctions' | 'encoding' | 'results';
  kill: number;
  /** Everything put back as approved before this step. */
  restore: boolean;
}
interface Scenario {
  rows: number;
  xlsx: boolean;
  docsEvery: number;
  twoDocs: boolean;
  invalidRow: boolean;
  mode: 'flag' | 'policy';
  /** Under a policy: `--above` GBP only, or each currency, at this many times the batch's total in it. */
  above?: { all: boolean; times: number };
  required: number;
  /** `required` as drawn, else no more than the signers (with their own key) drawn. */
  short: boolean;
  makerSigns: boolean;
  signers: { name: Person; key: Person }[];
  storeRefusals: boolean;
  mutations: Mutation[];
  steps: Step[];
}

const stepArb: fc.Arbitrary<Step> = fc.record({
  kind: fc.constantFrom<Step['kind']>('plan', 'plan', 'plan', 'kill', 'kill', 'retry', 'direct', 'watch', 'watch', 'watch'),
  watch: fc.record({
    at: fc.constantFrom<WatchDraw['at']>('before', 'before', 'dropped', 'initiate'),
    companions: fc.constantFrom<WatchDraw['companions']>('with', 'with', 'with', 'missing', 'later', 'other'),
    config: fc.boolean(),
    kill: fc.constantFrom(false, false, true),
    twice: fc.constantFrom(false, false, false, true),
  }),
  allowPartial: fc.boolean(),
  rate: fc.boolean(),
  otherState: fc.constantFrom(false, false, false, true),
  merge: fc.constantFrom(false, false, false, true),
  batchId: fc.constantFrom(false, false, false, false, true),
  sheet: fc.constantFrom(false, false, false, false, true),
  drain: fc.constantFrom<Step['drain']>('none', 'none', 'GBP', 'EUR', 'NGN'),
  early: fc.boolean(),
  fundBySwap: fc.constantFrom(false, false, true),
  other: fc.constantFrom<Step['other']>('none', 'none', 'none', 'sanctions', 'encoding', 'results'),
  kill: fc.integer({ min: 1, max: 3 }),
  restore: fc.boolean(),
});
const scenarioArb: fc.Arbitrary<Scenario> = fc
  .record({
    rows: fc.integer({ min: 5, max: 10 }),
    xlsx: fc.constantFrom(false, false, false, true),
    docsEvery: fc.integer({ min: 1, max: 3 }),
    twoDocs: fc.boolean(),
    invalidRow: fc.constantFrom(false, false, true),
    mode: fc.constantFrom<Scenario['mode']>('flag', 'flag', 'policy'),
    above: fc.option(fc.record({ all: fc.constantFrom(true, true, false), times: fc.constantFrom(0.5, 1.5, 3) }), { nil: undefined }),
    required: fc.constantFrom(1, 1, 2, 2, 3),
    makerSigns: fc.constantFrom(true, true, false),
    // mostly listed approvers with their own keys, sometimes one more: the maker, an unlisted key, a name under another's key
    signers: fc
      .tuple(
        fc.shuffledSubarray<Person>(['Alice', 'Bob', 'Carol'], { minLength: 1 }),
        fc.option(fc.record({ name: fc.constantFrom<Person>(...PEOPLE), key: fc.constantFrom<Person>(...PEOPLE) }), { freq: 2 }),
      )
      .map(([good, odd]) => [...good.map((name) => ({ name, key: name })), ...(odd ? [odd] : [])]),
    storeRefusals: fc.boolean(),
    mutations: fc.oneof(
      { weight: 2, arbitrary: fc.constant<Mutation[]>([]) },
      {
        weight: 3,
        arbitrary: fc.array(
          fc.record({ kind: fc.constantFrom(...MUTATIONS), row: fc.nat(40), pick: fc.nat(1000), at: fc.constantFrom(0, 0, 0, 1, 2) }),
          { minLength: 1, maxLength: 3 },
        ),
      },
    ),
    steps: fc.array(stepArb, { minLength: 1, maxLength: 4 }),
    short: fc.constantFrom(false, false, false, true),
  })
  // (mostly no more approvals required than listed approvers signed: the runs then get past the gate)
  .map((sc) => (sc.short ? sc : { ...sc, required: Math.min(sc.required, sc.signers.filter((x) => x.name === x.key).length) || 1 }));

const STACK = /unexpected error|\n\s+at .+:\d+:\d+\)?/i;
/** The routes of a request that sends something (a payment, a document, a swap). */
const SENDING = new Set(['initiate', 'uploadUrl', 'storagePut', 'patchDocuments', 'swap']);
const sha = (b: Buffer | string) => createHash('sha256').update(b).digest('hex');

interface Outcome {
  violations: string[];
  notes: string[];
  steps: number;
  refused: number;
  made: number;
  kills: number;
  unbound: number;
  goodRefused: number;
  watches: number;
  /** Payouts a watch step created. */
  watchMade: number;
  allowance: number;
}
/** A watch step's draws in a scenario written before them. */
const WATCH: WatchDraw = { at: 'before', companions: 'with', config: true, kill: false, twice: false };

/** A batch of `rows` rows whose documents are files in `dir/documents` (a watch's documents folder when dir is its DIR; named relative to the batch), one row made invalid. */
async function writeBatchWithDocs(dir: string, sc: Scenario, n: number): Promise<{ file: string; docs: string[] }> {
  // (the currencies in turn: a drained wallet then holds back rows of any batch)
  const of = (c: string) =>
    parse<Record<string, string>>(generateCsv({ rows: sc.rows, currencies: [c], documentsEvery: 1 }), { columns: true });
  const byCurrency = [of('GBP'), of('EUR'), of('NGN')];
  const rows: Record<string, string>[] = Array.from({ length: sc.rows }, (_, i) => ({
    ...byCurrency[i % 3]![Math.floor(i / 3)]!,
    reference: `PF${n}-${i + 1}`,
  }));
  for (const [i, r] of rows.entries()) if (i % sc.docsEvery) Object.assign(r, { documents: '', withdrawal: 'true' });
  await mkdir(join(dir, 'documents'), { recursive: true });
  const docs: string[] = [];
  for (const [i, r] of rows.entries()) {
    if (!r.documents) continue;
    const names = [`documents/${r.reference}.pdf`];
    await copyFile(r.documents.split(';')[0]!, join(dir, names[0]!));
    if (sc.twoDocs && i % 2 === 0) {
      names.push(`documents/${r.reference}-invoice.pdf`);
      await copyFile(join(ROOT, 'samples/documents/invoice-uk-c1.pdf'), join(dir, names[1]!));
    }
    r.documents = names.join(';');
    docs.push(...names);
  }
  if (sc.invalidRow) rows[1]!.accountName = '';
  const header = Object.keys(rows[0]!);
  const aoa = [header, ...rows.map((r) => header.map((h) => r[h] ?? ''))];
  if (!sc.xlsx) {
    const file = join(dir, 'pay.csv');
    await writeFile(file, stringify(aoa));
    return { file, docs };
  }
  const ws = XLSX.utils.aoa_to_sheet(aoa);
  for (const [addr, cell] of Object.entries(ws) as [string, XLSX.CellObject][]) if (!addr.startsWith('!') && cell.t === 's') cell.z = '@';
  const wb = XLSX.utils.book_new();
  XLSX.utils.book_append_sheet(wb, ws, 'Payroll');
  const file = join(dir, 'pay.xlsx');
  await writeFile(file, XLSX.write(wb, { type: 'buffer', bookType: 'xlsx' }) as Buffer);
  return { file, docs };
}

interface PlanJson {
  rows: {
    rowNumber: number;
    reference: string;
    sourceAmount: string;
    body: Record<string, unknown>;
    documents: { file: string; sha256: string }[];
  }[];
  [k: string]: unknown;
}

/** Applies one mutation to the scenario's files; says what it did. */
async function mutate(m: Mutation, f: Files, sc: Scenario): Promise<string> {
  // (a watch's copy may be missing, or garbage: no rows)
  const read = parseJson((await readFile(f.plan, 'utf8').catch(() => '')).replace(/^\uFEFF/, ''));
  if (!read && m.kind.startsWith('plan')) return 'no plan to change';
  const plan = (Array.isArray(read?.rows) ? read : { rows: [] }) as PlanJson;
  const rows = plan.rows;
  const r = rows[m.row % Math.max(rows.length, 1)];
  const o = rows[(m.row + 1 + (m.pick % 3)) % Math.max(rows.length, 1)];
  const writePlan = (p: unknown) => writeFile(f.plan, JSON.stringify(p, null, 2) + '\n');
  // (a list an earlier mutation made a folder or garbage: none)
  const list = async (path: string) => {
    const v = parseJson(`{"v":${await readFile(path, 'utf8').catch(() => '[]')}}`)?.v;
    return (Array.isArray(v) ? v : []) as Record<string, string>[];
  };
  const approvals = () => list(f.approvals);
  const docOf = (i: number) => f.docs[i % Math.max(f.docs.length, 1)];
  if (m.kind.startsWith('batch') && !existsSync(f.batch)) return 'no batch file to change';
  switch (m.kind) {
    case 'planAmount': {
      if (!r) return 'no row';
      const to = new Dec(r.sourceAmount).plus(m.pick % 2 ? '0.01' : '100').toFixed(2);
      Object.assign(r, { sourceAmount: to });
      r.body.sourceAmount = Number(to);
      await writePlan(plan);
      return `plan: ${r.reference} amount -> ${to}`;
    }
    case 'planAccount': {
      if (!r || !o) return 'no row';
      r.body.beneficiary = { ...(o.body.beneficiary as object) };
      await writePlan(plan);
      return `plan: ${r.reference} beneficiary <- ${o.reference}'s`;
    }
    case 'planName': {
      if (!r) return 'no row';
      const b = r.body.beneficiary as Record<string, string>;
      b.accountName = [b.accountName!.replace('a', '\u0430'), b.accountName!.replace('o', '\u043e'), `${b.accountName} `][m.pick % 3]!;
      await writePlan(plan);
      return `plan: ${r.reference} accountName -> ${JSON.stringify(b.accountName)}`;
    }
    case 'planCurrency': {
      if (!r) return 'no row';
      r.body.sourceCurrency = ['GBP', 'EUR', 'USD'][m.pick % 3];
      await writePlan(plan);
      return `plan: ${r.reference} sourceCurrency -> ${String(r.body.sourceCurrency)}`;
    }
    case 'planReference': {
      if (!r || !o) return 'no row';
      r.reference = m.pick % 2 ? o.reference : `${r.reference}-X`;
      await writePlan(plan);
      return `plan: a row's reference -> ${r.reference}`;
    }
    case 'planRowNumber': {
      if (!r || !o) return 'no row';
      [r.rowNumber, o.rowNumber] = [o.rowNumber, r.rowNumber];
      await writePlan(plan);
      return `plan: rows ${r.reference} and ${o.reference} swap their numbers`;
    }
    case 'planDigest': {
      const withDoc = rows.find((x) => x.documents.length);
      if (!withDoc) return 'no row with a document';
      const other = await readFile(join(ROOT, 'samples/documents/invoice-ch-88231.pdf'));
      withDoc.documents[0]!.sha256 = sha(other);
      await writePlan(plan);
      // the plan and the document on disk both changed to the other file
      if (m.pick % 2) await writeFile(join(f.dir, withDoc.documents[0]!.file.replace(/^.*\/documents\//, 'documents/')), other);
      return `plan: ${withDoc.reference}'s document digest -> another file's${m.pick % 2 ? ', that file put in its place' : ''}`;
    }
    case 'planReorder':
      rows.reverse();
      await writePlan(plan);
      return 'plan: rows reversed';
    case 'planDuplicate':
      if (!r) return 'no row';
      rows.push(m.pick % 2 ? { ...r } : { ...r, rowNumber: 99 });
      await writePlan(plan);
      return `plan: ${r.reference} twice`;
    case 'planDelete':
      if (!r) return 'no row';
      rows.splice(rows.indexOf(r), 1);
      await writePlan(plan);
      return `plan: ${r.reference} deleted`;
    case 'planWhitespace':
      await writeFile(f.plan, m.pick % 2 ? JSON.stringify(plan) : JSON.stringify(plan, null, 4) + '\n');
      return 'plan: re-indented';
    case 'planKeyOrder':
      await writePlan(Object.fromEntries(Object.entries(plan).reverse()));
      return 'plan: keys reversed';
    case 'planBom':
      await writeFile(f.plan, `\uFEFF${await readFile(f.plan, 'utf8')}`);
      return 'plan: BOM';
    case 'planCrlf':
      await writeFile(f.plan, (await readFile(f.plan, 'utf8')).replace(/\n/g, '\r\n'));
      return 'plan: CRLF';
    case 'planNumber': {
      const text = await readFile(f.plan, 'utf8');
      const at = /"sourceAmount": (\d+)(\.\d+)?,/.exec(text);
      if (!at) return 'no number';
      const v = new Dec(at[1]! + (at[2] ?? ''));
      const as = m.pick % 2 ? `${v.toFixed(2)}0` : `${v.toFixed()}e0`;
      await writeFile(f.plan, text.replace(at[0], `"sourceAmount": ${as},`));
      return `plan: the number ${at[1]}${at[2] ?? ''} written ${as}`;
    }
    case 'docEdit': {
      const d = docOf(m.pick);
      if (!d) return 'no document';
      await appendFile(join(f.dir, d), m.pick % 2 ? '\n' : '%%EOF\n');
      return `${d}: a line added`;
    }
    case 'docReplace': {
      const d = docOf(m.pick);
      if (!d) return 'no document';
      await copyFile(join(ROOT, 'samples/documents', m.pick % 2 ? 'invoice-ch-88231.pdf' : 'invoice-uk-c1.pdf'), join(f.dir, d));
      return `${d}: replaced by another PDF`;
    }
    case 'docDelete': {
      const d = docOf(m.pick);
      if (!d) return 'no document';
      await rm(join(f.dir, d), { force: true });
      return `${d}: deleted`;
    }
    case 'docMidRun':
      f.midRun = docOf(m.pick);
      return f.midRun ? `${f.midRun}: replaced as the first initiate arrives` : 'no document';
    case 'batchEdit': {
      if (sc.xlsx) {
        await appendFile(f.batch, Buffer.from([0]));
        return 'batch file: a byte added';
      }
      const text = await readFile(f.batch, 'utf8');
      await writeFile(
        f.batch,
        m.pick % 2
          ? text.replace(/\n/g, '\r\n')
          : text.replace(/,(\d+)\.(\d\d),/, (_m, a: string, b: string) => `,${a}.${b === '99' ? '98' : '99'},`),
      );
      return `batch file: ${m.pick % 2 ? 'CRLF' : 'an amount edited'}`;
    }
    case 'batchDelete':
      await rm(f.batch, { force: true });
      return 'batch file deleted';
    case 'batchMove':
      await mkdir(join(f.dir, 'moved'), { recursive: true });
      await rename(f.batch, join(f.dir, 'moved', 'pay.csv')).catch(() => {});
      return 'batch file moved';
    case 'batchSame':
      await writeFile(f.batch, await readFile(f.batch));
      return 'batch file saved again, the same bytes';
    case 'apCopySignature': {
      const a = await approvals();
      const from = a.find((x) => x.name !== 'Dan');
      if (!from) return 'no approval';
      const to = ['Alice', 'Bob', 'Carol'].find((x) => !a.some((y) => y.name === x)) ?? 'Carol';
      a.push({ ...from, name: to });
      await writeFile(f.approvals, JSON.stringify(a, null, 2));
      return `approvals: ${from.name}'s signature copied to ${to}`;
    }
    case 'apDuplicate': {
      const a = await approvals();
      if (!a.length) return 'no approval';
      a.push({ ...a[m.pick % a.length]! });
      await writeFile(f.approvals, JSON.stringify(a, null, 2));
      return 'approvals: one twice';
    }
    case 'apSignedAt': {
      const a = await approvals();
      if (!a.length) return 'no approval';
      a[m.pick % a.length]!.signedAt = '2020-01-01T00:00:00.000Z';
      await writeFile(f.approvals, JSON.stringify(a, null, 2));
      return 'approvals: a signedAt changed';
    }
    case 'apDropMaker': {
      const a = await approvals();
      await writeFile(f.approvals, JSON.stringify(a.filter((x) => x.name !== 'Dan')));
      return "approvals: the maker's signature dropped";
    }
    case 'apNameCase': {
      const a = await approvals();
      if (!a.length) return 'no approval';
      const x = a[m.pick % a.length]!;
      x.name = m.pick % 2 ? x.name!.toLowerCase() : `${x.name} `;
      await writeFile(f.approvals, JSON.stringify(a, null, 2));
      return `approvals: a name -> ${JSON.stringify(x.name)}`;
    }
    case 'apFolder':
      await rm(f.approvals, { force: true });
      await mkdir(f.approvals, { recursive: true });
      return 'approvals: a folder in its place';
    case 'apGarbage':
      await writeFile(f.approvals, m.pick % 2 ? '[{"name": "Alice"}]' : '{not json');
      return 'approvals: not an approvals file';
    case 'alGarbage':
      await writeFile(f.approvers, m.pick % 2 ? '[{"name": "Alice", "publicKey": "bm90IGEga2V5"}]' : '');
      return 'approvers: not a list of keys';
    case 'alSwapKeys': {
      const l = await list(f.approvers);
      if (l.length < 2) return 'approvers: no list';
      [l[0]!.publicKey, l[1]!.publicKey] = [l[1]!.publicKey ?? '', l[0]!.publicKey ?? ''];
      await writeFile(f.approvers, JSON.stringify(l));
      return `approvers: ${l[0]!.name}'s and ${l[1]!.name}'s keys swapped`;
    }
    case 'alTwice': {
      const l = await list(f.approvers);
      if (l.length < 2) return 'approvers: no list';
      l.push({ ...l[0]!, ...(m.pick % 2 ? { name: 'Alicia' } : {}) });
      await writeFile(f.approvers, JSON.stringify(l));
      return `approvers: ${l[0]!.name}'s key twice`;
    }
    case 'alMaker': {
      const l = await list(f.approvers);
      if (l.length < 2) return 'approvers: no list';
      l.push({ name: m.pick % 2 ? 'Dan' : 'Daniel', publicKey: f.keys.Dan.publicKey });
      await writeFile(f.approvers, JSON.stringify(l));
      return `approvers: the maker's key listed as ${m.pick % 2 ? 'Dan' : 'Daniel'}`;
    }
    case 'none':
      return 'nothing';
  }
}

interface Files {
  dir: string;
  batch: string;
  plan: string;
  approvals: string;
  approvers: string;
  docs: string[];
  keys: Record<Person, NewKeyPair>;
  /** A document replaced as the next step's first initiate arrives. */
  midRun?: string;
}

/** Every file as approved (bytes; undefined: absent), to restore and to compare. */
async function snapshotFiles(f: Files): Promise<Map<string, Buffer | undefined>> {
  const all = [f.batch, f.plan, f.approvals, f.approvers, ...f.docs.map((d) => join(f.dir, d))];
  return new Map(await Promise.all(all.map(async (p) => [p, await readFile(p).catch(() => undefined)] as const)));
}

/** An outcome's counts, and the campaign's totals of them, from zero. */
const counts = () => ({
  steps: 0,
  refused: 0,
  made: 0,
  kills: 0,
  unbound: 0,
  goodRefused: 0,
  watches: 0,
  watchMade: 0,
  allowance: 0,
});

async function runScenario(sc: Scenario, n: number): Promise<Outcome> {
  const out: Outcome = { violations: [], notes: [], ...counts() };
  const dir = await workDir('pb-plan-fuzz-');
  const state = join(dir, 'state');
  let onInitiate = () => {};
  const sb: LocalSandbox = await startSandbox({
    rateLimitPerSecond: null,
    monthlyQuota: null,
    storeRefusals: sc.storeRefusals,
    randomSeed: SEED + n,
    onRequest: (e) => void (e.route === 'initiate' && e.apiKey && onInitiate()),
  });
  try {
    const { file, docs } = await writeBatchWithDocs(dir, sc, n);
    const keys = Object.fromEntries(PEOPLE.map((p) => [p, newKeyPair()])) as Record<Person, NewKeyPair>;
    for (const p of PEOPLE) await writeFile(join(dir, `${p}.pem`), keys[p].privatePem, { mode: 0o600 });
    const approvers = join(dir, 'approvers.json');
    await writeFile(
      approvers,
      JSON.stringify(['Alice', 'Bob', 'Carol'].map((name) => ({ name, publicKey: keys[name as Person].publicKey }))),
    );
    const plan = join(dir, 'pay.plan.json');
    const f: Files = { dir, batch: file, plan, approvals: `${plan}.approvals.json`, approvers, docs, keys };
    const env = cleanEnv({ PAYOUT_BATCH_STATE_DIR: state, PAYOUT_BATCH_RATE: '1000' });
    const service = ['--base-url', sb.url];
    const inst = sc.mode === 'policy' ? install(join(dir, 'installation')) : undefined;
    // (under a policy every step is a process of the installation: main() here reads this package's host folder)
    const cmd = (args: string[], o: { process?: boolean; onSpawn?: Parameters<typeof runCli>[1]['onSpawn'] } = {}): Promise<CliRun> =>
      inst || o.process ? runCli(args, { cwd: dir, env, bin: inst?.bin, onSpawn: o.onSpawn }) : runMain(args, { cwd: dir, env });
    const batchRows = async (path: string) =>
      existsSync(path) ? parse<Record<string, string>>(await readBatchText(path), { columns: true, relax_column_count: true }) : [];
    const approvedRows = await batchRows(file);
    // `--above`: CUR:AMOUNT at `times` the batch's total in that currency (GBP only, or each)
    const totals = new Map<string, Dec>();
    for (const r of approvedRows)
      totals.set(r.sourceCurrency!, (totals.get(r.sourceCurrency!) ?? new Dec(0)).plus(new Dec(r.sourceAmount!)));
    const above =
      sc.mode === 'policy' && sc.above
        ? new Map(
            [...totals]
              .filter(([c]) => sc.above!.all || c === 'GBP')
              .map(([c, t]) => [c, t.times(String(sc.above!.times)).floor()] as const),
          )
        : undefined;
    if (inst) {
      const aboveFlags = [...(above ?? [])].flatMap(([c, a]) => ['--above', `${c}:${a.toFixed()}`]);
      const set = await cmd([
        'policy',
        'set',
        '--require-approvals',
        String(sc.required),
        '--approvers',
        approvers,
        ...aboveFlags,
        ...service,
      ]);
      if (set.code !== 0) throw new Error(`policy set: exit ${set.code}: ${set.stderr}`);
    }
    const maker = sc.makerSigns || sc.mode === 'policy' ? ['--as', 'Dan', '--approver-key', 'Dan.pem'] : ['--prepared-by', 'Dan'];
    const made = await cmd(['plan', file, '--out', plan, ...maker, '--allow-partial', ...service]);
    if (STACK.test(made.stderr + made.stdout)) out.violations.push(`(d) plan: ${made.stderr.slice(0, 800)}`);
    if (made.code !== 0 && made.code !== 1) throw new Error(`plan: exit ${made.code}: ${made.stderr}`);
    for (const s of sc.signers) await approveAs(plan, s.name, keys[s.key].privatePem, `${s.key}.pem`);
    // the model of the rule: the last signature under each name counts (a name signing again replaces its approval); listed
    // approvers signing with their own key, not a key the maker signed with
    const last = new Map<string, Person>(maker[0] === '--as' ? [['Dan', 'Dan']] : []);
    for (const s of sc.signers) last.set(s.name, s.key);
    const valid = new Set(
      [...last]
        .filter(([name, key]) => name === key && ['Alice', 'Bob', 'Carol'].includes(name) && last.get('Dan') !== key)
        .map(([x]) => x),
    );
    const approvedOk = valid.size >= sc.required;
    const signed = JSON.parse(await readFile(plan, 'utf8')) as PlanJson;
    const signedBody = new Map(signed.rows.map((r) => [r.reference, bodyDigest(r.body)]));
    const signedSwaps = new Set(((signed.swaps ?? []) as { reference: string }[]).map((w) => w.reference));
    const signedDocs = new Map(signed.rows.map((r) => [r.reference, new Set(r.documents.map((d) => d.sha256))]));
    const refs = new Set(approvedRows.map((r) => r.reference!));
    const refOfKey = new Map<string, string>();
    for (const ref of refs) for (let a = 1; a <= 8; a++) refOfKey.set(idempotencyKey(ref, a), ref);
    out.notes.push(
      `plan: ${signed.rows.length} rows of ${refs.size}; approvals ${[...valid].join(', ') || 'none'} valid of ${sc.required} (${sc.mode}${
        above ? `, above ${[...above].map(([c, a]) => `${c} ${a.toFixed()}`).join(', ')}` : ''
      })`,
    );
    const approved = await snapshotFiles(f);

    let approvalsTouched = false;
    /** A step ran in another state folder: the results it wrote are another ledger's (refused as such, by design). */
    let otherStateBefore = false;
    let lastResults: string | undefined;
    /** Payouts a retry without a policy created (no four eyes binds it). */
    const unbound = new Set<string>();
    /** Under `--above`: payouts of no approved plan, judged against the file's rows and the allowance when made; the sum per currency. */
    const allowed = new Set<string>();
    const unapproved = new Map<string, Dec>();
    /** Swaps `--fund-by-swap` asked of a run without a plan that needed no approvals (--above). */
    const freeSwaps = new Set<string>();
    /** Claims a watch step judged already. */
    const claimsSeen = new Set<string>();
    /** A plan approved for other content (a watch's `companions: 'other'`), made once. */
    let otherPlan: string | undefined;
    const inbox = join(dir, 'inbox');
    for (const [k, step] of sc.steps.entries()) {
      if (step.restore && k) {
        for (const [p, b] of approved) {
          await rm(p, { recursive: true, force: true });
          if (b) await writeFile(p, b);
        }
        approvalsTouched = false;
        f.midRun = undefined;
        out.notes.push(`step ${k + 1}: every file put back as approved`);
      }
      const w = step.kind === 'watch' ? { ...WATCH, ...step.watch } : undefined;
      const ours = sc.mutations.filter((x) => x.at % sc.steps.length === k);
      const did: string[] = [];
      /** Approvals touched for this step only (a watch's copies in the inbox). */
      let touchedHere = false;
      const apply = async (ms: Mutation[], to: Files, where: string) => {
        for (const m of ms) {
          did.push(`${where}${await mutate(m, to, sc)}`);
          if (m.kind.startsWith('al') || (m.kind.startsWith('ap') && to === f)) approvalsTouched = true;
          if (m.kind.startsWith('ap')) touchedHere = true;
        }
      };
      if (!w || w.at === 'before') await apply(ours, f, '');
      // a watch step: the folder is dir (documents/ beside the inbox), the batch dropped into its inbox with its companions as drawn
      const name = basename(file);
      const { plan: planName, approvals: approvalsName } = companionsOf(name);
      const fi: Files = { ...f, batch: join(inbox, name), plan: join(inbox, planName), approvals: join(inbox, approvalsName) };
      const dropCompanions = async (from: Pick<Files, 'plan' | 'approvals'>) => {
        for (const [a, b] of [
          [from.plan, fi.plan],
          [from.approvals, fi.approvals],
        ] as const)
          if (existsSync(a)) await cp(a, b, { recursive: true });
      };
      let processingBefore = false;
      if (w) {
        const useConfig = sc.mode === 'flag' || w.config;
        await writeFile(
          join(dir, 'payout-batch.json'),
          JSON.stringify({
            environment: 'sandbox',
            baseUrl: sb.url,
            // (its own ledger, DIR/.state, as a watch folder's default; `otherState`: the runs' ledger, which then refuses content sent before)
            ...(step.otherState ? { stateDir: 'state' } : {}),
            settleSeconds: 0,
            claimStaleSeconds: 10,
            rate: 1000,
            allowPartial: step.allowPartial,
            mergeDocuments: step.merge,
            ...(useConfig ? { requireApprovals: sc.required, approvers: 'approvers.json' } : {}),
          }),
        );
        await mkdir(inbox, { recursive: true });
        for (const p of [fi.batch, fi.plan, fi.approvals]) await rm(p, { recursive: true, force: true });
        processingBefore = existsSync(join(dir, 'processing')) && readdirSync(join(dir, 'processing')).length > 0;
        if (w.companions === 'with') await dropCompanions(f);
        if (w.companions === 'other')
          await dropCompanions({ plan: (otherPlan ??= await planForOther()), approvals: `${otherPlan}.approvals.json` });
        if (existsSync(f.batch)) await copyFile(f.batch, fi.batch);
        if (w.at === 'dropped') await apply(ours, fi, 'in the inbox: ');
        if (fi.midRun) f.midRun = fi.midRun;
      }
      if (did.length) out.notes.push(`step ${k + 1}: mutations: ${did.join('; ')}`);
      const [runBatch, runPlan] = w ? [fi.batch, fi.plan] : [f.batch, f.plan];
      const now = await snapshotFiles({ ...f, batch: runBatch, plan: runPlan });
      const asApproved = [f.batch, f.plan, ...f.docs.map((d) => join(dir, d))].every((p, i) => {
        const [a, b] = [approved.get(p), now.get(i === 0 ? runBatch : i === 1 ? runPlan : p)];
        return a && b && a.equals(b);
      });
      const touched = approvalsTouched || (!!w && touchedHere);
      const planUsed = step.kind === 'plan' || step.kind === 'kill' || w?.companions === 'with';
      /** The step runs a plan the rule lets through: the plan, batch and documents as approved, approvals enough and untouched. */
      const approvedStep = planUsed && !touched && approvedOk && asApproved;
      /** Under --above (a policy alone: a watch's "requireApprovals" binds whatever the policy says), the engine's guard judges what no approved plan covers. */
      const byAllowance = !!above && !(w && (sc.mode === 'flag' || w.config));
      // a step the rule must refuse: approvals short, or the plan, the batch file or a document not as approved; under a policy
      // a retry or a run without the plan (it needs approvals for anything: no --above); a watch given no plan or another's
      const mustRefuse = byAllowance
        ? w?.companions === 'other'
        : (!touched && !approvedOk) ||
          !asApproved ||
          (sc.mode === 'policy' && step.kind !== 'plan' && step.kind !== 'kill' && step.kind !== 'watch') ||
          (!!w && w.companions !== 'with');
      const stateDir = step.otherState ? ['--state-dir', join(dir, `state-${k}`)] : [];
      // (a watch's own ledger is another state folder to the runs)
      otherStateBefore ||= w ? !step.otherState : step.otherState;
      const flags = [
        ...(step.allowPartial ? ['--allow-partial'] : []),
        ...(step.rate ? ['--rate', '7'] : []),
        ...stateDir,
        ...(step.merge ? ['--merge-documents'] : []),
        ...(step.batchId ? ['--batch-id', `other-${k}`] : []),
        ...(step.sheet ? ['--sheet', 'Payroll'] : []),
        ...(step.fundBySwap ? ['--fund-by-swap'] : []),
        ...{
          none: [],
          sanctions: ['--sanctions-list', join(ROOT, 'samples/sanctions/sdn.csv')],
          encoding: ['--encoding', 'windows-1252'],
          results: ['--results', join(dir, `other-${k}.results.csv`)],
        }[step.other],
      ];
      const four = sc.mode === 'flag' ? ['--require-approvals', String(sc.required), '--approvers', approvers] : [];
      const common = ['--yes', '--json', ...service];
      let args: string[];
      if (w) args = ['watch', dir, '--once'];
      else if (step.kind === 'retry') {
        if (!lastResults) {
          out.notes.push(`step ${k + 1}: retry, no results yet`);
          continue;
        }
        args = ['retry', lastResults, ...common, ...stateDir];
      } else if (step.kind === 'direct') {
        if (sc.mode !== 'policy') {
          out.notes.push(`step ${k + 1}: a run without the plan, no policy (not four eyes)`);
          continue;
        }
        args = ['run', file, ...flags, ...common];
      } else args = ['run', '--plan', plan, ...flags, ...four, ...common];
      // the drain and the document replaced mid-run, as the step's first initiate arrives
      let seen = 0;
      const early = step.drain !== 'none' && step.early ? drain(sb, step.drain, `fuzz-drain-${k}`) : undefined;
      await early?.settled;
      const logAt = sb.requestLog().length;
      const before = new Set(serviceRecords(sb).map((p) => p.id));
      const swapsBefore = new Set(sb.snapshot().swaps.map((s) => String(s.id)));
      let back: () => Promise<unknown> = early ?? (async () => {});
      let replaced: Promise<unknown> = Promise.resolve();
      const midRun = f.midRun;
      f.midRun = undefined;
      const firstInitiate = () => {
        if (step.drain !== 'none' && !step.early) back = drain(sb, step.drain, `fuzz-drain-${k}`);
        if (midRun) replaced = copyFile(join(ROOT, 'samples/documents/invoice-ch-88231.pdf'), join(dir, midRun));
        // a watch's mutations to the claimed copies
        if (w?.at === 'initiate') {
          const claim = readdirSync(join(dir, 'processing')).find((id) => existsSync(join(dir, 'processing', id, name)));
          const at = (x: string) => join(dir, 'processing', claim ?? '-', x);
          const fc_: Files = { ...f, batch: at(name), plan: at(planName), approvals: at(approvalsName) };
          const done = replaced;
          replaced = done.then(() => apply(ours, fc_, 'to the claimed copies at the first initiate: '));
        }
      };
      let r: CliRun;
      const what = `step ${k + 1} ${step.kind}${step.drain === 'none' ? '' : ` (${step.drain} drained${step.early ? ' before it' : ''})`} [${(w
        ? [
            ...args,
            `(${w.companions}, mutations ${w.at}${w.config || sc.mode === 'flag' ? ', requireApprovals' : ''}${w.kill ? `, killed at ${step.kill}` : ''}${w.twice ? ', two ticks' : ''})`,
          ]
        : args.slice(0, -common.length)
      )
        .join(' ')
        .replaceAll(dir + '/', '')
        .replaceAll(dir, 'DIR')}]`;
      /** Every tick of a watch step (for (d) and the reasons it printed). */
      const ticks: CliRun[] = [];
      const tick = async (onSpawn?: Parameters<typeof runCli>[1]['onSpawn']) => {
        const t = await runCli(['watch', dir, '--once'], { cwd: dir, env, bin: inst?.bin, onSpawn, timeoutMs: 180_000 });
        ticks.push(t);
        return t;
      };
      if (w) {
        out.watches++;
        onInitiate = () => void (++seen === 1 && firstInitiate());
        let killed = false;
        const onSpawn: Parameters<typeof runCli>[1]['onSpawn'] = (c) =>
          (onInitiate = () => {
            if (++seen === 1) firstInitiate();
            if (w.kill && seen === step.kill) killed = c.kill('SIGKILL');
          });
        await Promise.all([tick(onSpawn), ...(w.twice ? [tick()] : [])]);
        onInitiate = () => {};
        await replaced;
        if (killed) {
          out.kills++;
          await waitIdle(sb);
          await tick();
        }
        if (w.companions === 'later') {
          await dropCompanions(f);
          await tick();
        }
        r = ticks.at(-1)!;
      } else if (step.kind === 'kill') {
        r = await cmd(args, {
          process: true,
          onSpawn: (c) =>
            (onInitiate = () => {
              if (++seen === 1) firstInitiate();
              if (seen === step.kill) c.kill('SIGKILL');
            }),
        });
        out.kills += r.signal ? 1 : 0;
      } else {
        onInitiate = () => void (++seen === 1 && firstInitiate());
        // (--merge-documents as a process, as written when tsx could not load pdf-lib in this process)
        r = await cmd(args, { process: step.merge });
      }
      onInitiate = () => {};
      await waitIdle(sb);
      await back();
      await replaced;
      out.steps++;
      const said = (x: CliRun) => (w ? x.stdout.trim().replaceAll('\n', ' | ') : (x.stderr.trim().split('\n').at(-1) ?? '')).slice(0, 400);
      out.notes.push(
        `${what}: ${(w ? ticks : [r]).map((x) => `${x.signal ? `killed after ${seen} initiates` : `exit ${x.code}`}: ${said(x)}`).join('; then ')}${
          mustRefuse ? ' (must refuse)' : ''
        }`,
      );
      for (const x of w ? ticks : [r])
        if (STACK.test(x.stderr + x.stdout)) out.violations.push(`(d) ${what}: ${(x.stderr + x.stdout).slice(0, 800)}`);
      const json = parseJson(r.stdout.trim().split('\n').at(-1) ?? '') ?? parseJson(r.stdout);
      if (!w && typeof json?.results === 'string' && (r.code === 0 || r.code === 1 || r.code === 5)) lastResults = json.results;
      const log = sb.requestLog().slice(logAt);
      const sent = log.filter((e) => SENDING.has(e.route));
      if (!w && (r.code === 2 || r.code === 3)) {
        out.refused++;
        if (sent.length)
          out.violations.push(`(a) ${what}: refused (exit ${r.code}) after ${sent.map((e) => `${e.method} ${e.route}`).join(', ')}`);
        const legit = step.sheet || otherStateBefore || step.merge || step.other !== 'none' || (step.early && step.drain !== 'none');
        if (!mustRefuse && step.kind === 'plan' && approvedStep && !legit) {
          out.goodRefused++;
          out.notes.push(`  (refused a plan run the model lets through)`);
        }
      }
      const created = serviceRecords(sb).filter((p) => !before.has(p.id) && !p.made?.key.startsWith('fuzz-drain-'));
      if (mustRefuse && (step.kind !== 'retry' || sc.mode === 'policy') && created.length)
        out.violations.push(`(a) ${what}: must be refused, yet created ${created.map((p) => p.id).join(', ')}`);
      // (w) where the watch step's files ended
      if (w) {
        const fresh: { where: string; id: string; reason?: string }[] = [];
        for (const where of ['done', 'failed', 'processing'])
          for (const id of existsSync(join(dir, where)) ? readdirSync(join(dir, where)) : []) {
            if (claimsSeen.has(`${where}/${id}`)) continue;
            if (where !== 'processing') claimsSeen.add(`${where}/${id}`);
            const summary = readdirSync(join(dir, where, id)).find((x) => x.endsWith('.summary.json'));
            const reason = summary && parseJson(readFileSync(join(dir, where, id, summary), 'utf8'))?.reason;
            fresh.push({ where, id, reason: typeof reason === 'string' ? reason : undefined });
          }
        for (const c of fresh) {
          if (c.where === 'failed' && !c.reason) out.violations.push(`(w) ${what}: failed/${c.id} has no reason in its summary`);
          for (const m of (c.reason ?? '').matchAll(/`payout-batch (?:run|retry|plan) (\/[^ `]+)/g))
            if (!['processing', 'done', 'failed'].some((x) => existsSync(m[1]!.replace('/processing/', `/${x}/`))))
              out.violations.push(`(w) ${what}: failed/${c.id}'s reason names ${m[1]}, which is nowhere: ${c.reason}`);
          // every file a reason names is there (a claim's own file: in failed/ now, not processing/; a state folder a command
          // names is made by the command)
          for (const m of (c.reason ?? '')
            .replaceAll(/--state-dir [^ `]+/g, '')
            .matchAll(new RegExp(`${dir.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}/[^\\s\`'",;)]*[^\\s\`'",;).:…]`, 'g')))
            if (!existsSync(m[0]))
              out.violations.push(
                `(w) ${what}: ${c.where}/${c.id}'s reason names ${m[0].replace(dir, 'DIR')}, which is not there: ${c.reason}`,
              );
          if (c.where === 'processing' && !ticks.at(-1)!.stdout.includes(`${name}: processing`))
            out.violations.push(`(w) ${what}: processing/${c.id} left there without a reason in the last tick`);
          if (mustRefuse && c.where === 'done') out.violations.push(`(w) ${what}: must be refused, yet done/${c.id}`);
          // a file edited after its claim (a mutation as the first initiate arrives) goes to failed/, never done/
          const claimed = parseJson(readFileSync(join(dir, c.where, c.id, '.claim.json'), 'utf8').toString())?.sha256;
          const held = join(dir, c.where, c.id, name);
          if (c.where === 'done' && (!existsSync(held) || sha(readFileSync(held)) !== claimed))
            out.violations.push(`(w) ${what}: done/${c.id}'s file is not the content claimed (sha256 ${String(claimed).slice(0, 16)})`);
        }
        const left = readdirSync(inbox).filter((x) => !x.startsWith('.') && !/\.(plan|approvals)\.json$/.test(x));
        if (left.length) out.violations.push(`(w) ${what}: left in the inbox: ${left.join(', ')}`);
        const asked = log.filter((e) => !e.path.startsWith('/_sandbox'));
        if (mustRefuse && !processingBefore && asked.length)
          out.violations.push(`(w) ${what}: refused by the rule, yet sent ${asked.map((e) => `${e.method} ${e.route}`).join(', ')}`);
        const failedOnly = fresh.length > 0 && fresh.every((c) => c.where === 'failed') && !created.length;
        if (failedOnly) out.refused++;
        const legit =
          (sc.invalidRow && !step.allowPartial) ||
          step.merge ||
          (step.early && step.drain !== 'none') ||
          // (a tick killed after the drain: the next one finds the wallet short)
          (w.kill && step.drain !== 'none') ||
          // (content sent before: by this ledger, or by another, the service refusing its keys again)
          fresh.some((c) => /already processed|CONFLICT|ALREADY_PAID/.test(c.reason ?? ''));
        if (failedOnly && !mustRefuse && approvedStep && !legit) {
          out.goodRefused++;
          out.notes.push(`  (refused a watch the model lets through: ${fresh.map((c) => c.reason?.slice(0, 300)).join('; ')})`);
        }
      }
      // under --above: what no approved plan covers, a row of the file within the allowance
      const fileRows = [...approvedRows, ...(await batchRows(runBatch).catch(() => []))];
      for (const p of created) {
        out.made++;
        if (w) out.watchMade++;
        if (step.kind === 'retry' && sc.mode === 'flag') unbound.add(p.id);
        if (!above || approvedStep) continue;
        const ref = p.made && refOfKey.get(p.made.key);
        // (a plan run with approvals touched: the model cannot tell; a body the approvers signed passes either way)
        if (touched && planUsed && ref && p.made && signedBody.get(ref) === bodyDigest(p.made.body)) continue;
        allowed.add(p.id);
        out.allowance++;
        const body = p.made?.body ?? {};
        const cur = String(body.sourceCurrency);
        const sum = (unapproved.get(cur) ?? new Dec(0)).plus(new Dec(String(body.sourceAmount)));
        unapproved.set(cur, sum);
        if (!fileRows.some((x) => x.reference === ref && matches(x, body)))
          out.violations.push(
            `(a) ${what}: payout ${p.id} of ${ref}, of no approved plan, matches no row of the file: ${JSON.stringify(body)}`,
          );
        if (!above.has(cur) || sum.gt(above.get(cur)!))
          out.violations.push(
            `(a) ${what}: ${cur} ${sum.toFixed()} sent without an approved plan, over --above (${above.get(cur)?.toFixed() ?? 'none for it'})`,
          );
      }
      // (a), (c): every payout so far, by the signed plan
      const attached = attachedDigests(sb);
      for (const p of serviceRecords(sb)) {
        if (p.made?.key.startsWith('fuzz-drain-') || unbound.has(p.id) || allowed.has(p.id)) continue;
        const ref = p.made && refOfKey.get(p.made.key);
        const want = ref === undefined ? undefined : signedBody.get(ref);
        if (!p.made || !want) out.violations.push(`(a) after ${what}: payout ${p.id} (key ${p.made?.key}) pays no row of the signed plan`);
        else if (bodyDigest(p.made.body) !== want)
          out.violations.push(
            `(a) after ${what}: payout ${p.id} of ${ref} was made by a body the approvers did not sign: ${JSON.stringify(p.made.body)}`,
          );
        for (const d of attached.get(p.id) ?? [])
          if (!ref || !signedDocs.get(ref)?.has(d))
            out.violations.push(
              `(c) after ${what}: payout ${p.id} of ${ref} carries a document (sha256 ${d.slice(0, 16)}) not signed for it`,
            );
      }
      // (a) a swap only as the plan names it (the plans here name none), or asked by a run without a plan the allowance lets through
      for (const s of sb.snapshot().swaps)
        if (byAllowance && !planUsed && step.fundBySwap && !swapsBefore.has(String(s.id))) freeSwaps.add(String(s.id));
        else if (!signedSwaps.has(String(s.reference)) && !freeSwaps.has(String(s.id)))
          out.violations.push(`(a) after ${what}: swap ${String(s.id)} (${String(s.reference)}) not in the signed plan`);
      // (b)
      out.violations.push(...twicePaid(serviceRecords(sb), refs).map((v) => `(b) after ${what}: ${v}`));
    }
    out.unbound = unbound.size;

    /** A plan of the batch with one amount changed, approved by the same signers: a plan for other content. */
    async function planForOther(): Promise<string> {
      const rows = approvedRows.map((r) => ({ ...r }));
      rows[0]!.sourceAmount = new Dec(rows[0]!.sourceAmount!).plus(1).toFixed(2);
      const other = join(dir, 'other.csv');
      await writeFile(other, stringify(rows, { header: true }));
      const to = join(dir, 'other.plan.json');
      const r = await cmd(['plan', other, '--out', to, ...maker, '--allow-partial', ...service]);
      if (r.code !== 0 && r.code !== 1) throw new Error(`plan of other content: exit ${r.code}: ${r.stderr}`);
      for (const s of sc.signers) await approveAs(to, s.name, keys[s.key].privatePem, `${s.key}.pem`);
      return to;
    }
  } catch (e) {
    out.violations.push(threw('d', e));
  } finally {
    await sb.close();
    await leave(dir, KEEP);
  }
  out.violations = [...new Set(out.violations)];
  return out;
}

/** The batch's rows as CSV text (an XLSX read through its first sheet). */
async function readBatchText(file: string): Promise<string> {
  if (!file.endsWith('.xlsx')) return readFile(file, 'utf8');
  const wb = XLSX.read(await readFile(file));
  return XLSX.utils.sheet_to_csv(wb.Sheets[wb.SheetNames[0]!]!);
}

/** Until the sandbox answered every request it received (a killed process's too). */
async function waitIdle(sb: LocalSandbox): Promise<void> {
  for (let i = 0; i < 200 && sb.inFlight() > 0; i++) await new Promise((r) => setTimeout(r, 10));
}

/** Drains the wallet to less than a row and its fee; returns its credit back. */
function drain(sb: LocalSandbox, currency: 'GBP' | 'EUR' | 'NGN', key: string): (() => Promise<unknown>) & { settled: Promise<unknown> } {
  const done = drainWallet(sb, cleanEnv().PAYOUT_API_KEY!, currency, key);
  return Object.assign(async () => creditBack(sb, await done), { settled: done });
}

const scenarios = GIVEN ? [GIVEN] : fc.sample(scenarioArb, { seed: SEED, numRuns: RUNS });
const t0 = performance.now();
const totals = { ...counts(), mutations: 0 };
const failures = await runScenarios(scenarios, { only: ONLY, given: !!GIVEN, verbose: VERBOSE }, runScenario, totals);
for (const sc of scenarios) totals.mutations += sc.mutations.length;
console.log(
  `\nseed ${SEED}, ${ONLY === undefined && !GIVEN ? RUNS : 1} scenarios, ${totals.mutations} mutations, ${totals.steps} steps ` +
    `(${totals.watches} watch steps; ${totals.refused} refused, exit 2 or 3 or a watch's file to failed/ with nothing made; ${totals.kills} SIGKILLs; ` +
    `${totals.goodRefused} plan runs or watches refused the model lets through), ` +
    `${totals.made} payouts created (${totals.watchMade} by watches, ${totals.unbound} by retries under no policy, ${totals.allowance} under --above's allowance), ${failures} scenarios with a violation, ` +
    `${((performance.now() - t0) / 1000).toFixed(0)} s`,
);
process.exitCode = failures ? 1 : 0;
