// Fuzz: `run` of the user's batch file re-saved and edited at random, judged by the sandbox's own records
// (its payouts, and the key and body that created each), never by the tool's journal.
//   npx tsx test/chaos/run-fuzz.ts [--seed S] [--runs N] [--verbose] [--only I] [--scenario JSON] [--keep]
//
// Each run (a scenario fast-check draws from the seed): a batch of 6 to 12 rows (GBP, EUR, NGN; a row invalid
// sometimes) runs in-process, one wallet drained between its preflight and its sends (its rows refused
// INSUFFICIENT_FUNDS by the service, then credited back), answers lost after create sometimes. Then 1 to 3
// rounds: the batch file edited (re-saved as CSV or XLSX, rows reordered, duplicated, deleted; amount, account,
// name, currency, reference edited; a reference changed in case or whitespace only; leading zeros lost; a
// blank line; renamed or copied to another folder) and run again through main() in this process: plainly,
// with a --batch-id, as `plan --out` then `run --plan` (the file edited between them or not), or first as a
// process killed (SIGKILL) at its first to third initiate. Checked after each run:
//   (a) no reference (outer spaces aside) has two payouts; no payout under a key of no reference (references
//       differing only in case are two references to the tool: a payout of each is counted apart, as a note);
//   (b) every payout matches a row (payee, amount, currencies) of a file some run was given, and a payout a
//       run created, of the file that run was given (after a kill: a journalled key and body resent, I2);
//   (c) `run --plan` creates only payouts whose body the plan names;
//   (d) every row of the file is in the run's results (cells compared), or the run refused whole saying why;
//   (e) no "unexpected error" nor stack trace, from a killed process either.
// Exits 1 when any check fails, printing the scenario: `--scenario JSON --only I` replays it.
import { mkdir, readFile, rename, copyFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import fc from 'fast-check';
import { parse } from 'csv-parse/sync';
import { stringify } from 'csv-stringify/sync';
import * as XLSX from 'xlsx';
import { execute, prepareRun } from '../../src/engine/pipeline.ts';
import { initiateBody } from '../../src/engine/execute.ts';
import { bodyDigest } from '../../src/engine/plan-file.ts';
import { loadBatch } from '../../src/engine/prepare.ts';
import { Dec } from '../../src/money.ts';
import { canonicalJson } from '../../src/text.ts';
import { readResults } from '../../src/results/read.ts';
import { startSandbox } from '../../src/sandbox/start-sandbox.ts';
import { cleanEnv, runCli, runMain, workDir, writeBatch } from '../engine/helpers.ts';
import { connectionTo, unattended } from '../ops/helpers.ts';
import {
  fuzzFlags,
  journalledSends,
  matches,
  parseJson,
  runScenarios,
  sameCells,
  serviceRecords,
  twicePaid,
  threw,
  leave,
} from './fuzz-judge.ts';

const { given: GIVEN, seed: SEED, runs: RUNS, verbose: VERBOSE, only: ONLY, keep: KEEP } = fuzzFlags<Scenario>();

// prettier-ignore
const EDIT_KINDS = [
  'reorder', 'duplicate', 'delete', 'amount', 'account', 'name', 'currency', 'reference', 'refCase', 'zeros', 'blankLine', 'none',
  'fix', 'add', 'add',
] as const;
type EditKind = (typeof EDIT_KINDS)[number];
interface Edit {
  kind: EditKind;
  row: number;
  other: number;
  pick: number;
}
interface Round {
  edits: Edit[];
  xlsx: boolean;
  /** Where the edited file goes: 0 over the file, 1 renamed, 2 copied to another folder. */
  where: 0 | 1 | 2;
  mode: 'run' | 'batchId' | 'plan' | 'kill';
  /** The file edited again between `plan --out` and `run --plan`, or between the killed process and the run after it. */
  between: boolean;
  /** `kill`: the process is killed as its kill-th initiate arrives. */
  kill: number;
  /** `kill`: the scenario's wallet drained while the killed process runs (its sends refused), credited back after. */
  drainKill: boolean;
  drop: number;
}
interface Scenario {
  rows: number;
  drain: 'none' | 'GBP' | 'EUR' | 'NGN';
  storeRefusals: boolean;
  drop: number;
  invalidRow: boolean;
  /** The first run under `--batch-id fz-N`, and every rerun but a plain `run` (mode 'run') under it too. */
  label: boolean;
  rounds: Round[];
}

const editArb: fc.Arbitrary<Edit> = fc.record({
  kind: fc.constantFrom(...EDIT_KINDS),
  row: fc.nat(40),
  other: fc.nat(40),
  pick: fc.nat(1000),
});
const scenarioArb: fc.Arbitrary<Scenario> = fc.record({
  rows: fc.integer({ min: 6, max: 12 }),
  drain: fc.constantFrom('none', 'GBP', 'EUR', 'NGN'),
  storeRefusals: fc.boolean(),
  drop: fc.constantFrom(0, 0, 0.4),
  invalidRow: fc.boolean(),
  // (mostly: an edited file run without it is refused whole, its references sent by another batch; a kill then kills nothing)
  label: fc.constantFrom(true, true, true, false),
  rounds: fc.array(
    fc.record({
      edits: fc.array(editArb, { minLength: 1, maxLength: 4 }),
      xlsx: fc.boolean(),
      where: fc.constantFrom<0 | 1 | 2>(0, 0, 1, 2),
      mode: fc.constantFrom<Round['mode']>('run', 'run', 'batchId', 'plan', 'kill'),
      between: fc.boolean(),
      kill: fc.integer({ min: 1, max: 3 }),
      drainKill: fc.boolean(),
      drop: fc.constantFrom(0, 0, 0.4),
    }),
    { minLength: 1, maxLength: 3 },
  ),
});

const ACCOUNT_FIELDS = ['accountName', 'accountNumber', 'iban', 'sortCode', 'swiftCode', 'bankName', 'bankCode', 'accountCurrency'];
const AMOUNTS = ['1.23', '12.34', '99.99', '0', 'abc', '1,234.56', '10', '10.005', ' 12.30 ', '12.3'];

/** The user's file as a table of text cells; a `null` row is a blank line. */
interface Sheet {
  header: string[];
  rows: (Record<string, string> | null)[];
}

function applyEdit(s: Sheet, e: Edit, n: number): string {
  const real = s.rows.filter((r): r is Record<string, string> => r !== null);
  if (!real.length) return 'none (no rows)';
  const r = real[e.row % real.length]!;
  const o = real[e.other % real.length]!;
  const at = s.rows.indexOf(r);
  switch (e.kind) {
    case 'reorder':
      s.rows.reverse();
      if (e.pick % 2) s.rows.push(s.rows.shift()!);
      return 'rows reordered';
    case 'duplicate': {
      const copy = { ...r };
      if (e.pick % 3 === 1) copy.reference = `FZ-DUP-${n}`;
      s.rows.splice(e.other % (s.rows.length + 1), 0, copy);
      return `${r.reference} duplicated${e.pick % 3 === 1 ? ' under a new reference' : ''}`;
    }
    case 'delete':
      s.rows.splice(at, 1);
      return `${r.reference} deleted`;
    case 'amount':
      r.sourceAmount = AMOUNTS[e.pick % AMOUNTS.length]!;
      return `${r.reference} sourceAmount -> "${r.sourceAmount}"`;
    case 'account':
      for (const f of ACCOUNT_FIELDS) if (f in r) r[f] = o[f] ?? '';
      if (e.pick % 3 === 0) r.accountNumber = `${r.accountNumber ?? ''}${e.pick % 10}`;
      return `${r.reference} account <- ${o.reference}'s${e.pick % 3 === 0 ? ' (a digit more)' : ''}`;
    case 'name':
      r.accountName = ['Grace Hopper', '', 'Ada Lovelace Ltd'][e.pick % 3]!;
      return `${r.reference} accountName -> "${r.accountName}"`;
    case 'currency': {
      const c = ['GBP', 'EUR', 'USD'][e.pick % 3]!;
      r.sourceCurrency = c;
      if (e.pick % 2) Object.assign(r, { destinationCurrency: c, accountCurrency: c });
      return `${r.reference} currency -> ${c}${e.pick % 2 ? ' (all three cells)' : ''}`;
    }
    case 'reference': {
      const was = r.reference;
      r.reference = [`FZ-NEW-${n}`, o.reference ?? '', ''][e.pick % 3]!;
      return `${was} reference -> "${r.reference}"`;
    }
    case 'refCase': {
      const was = r.reference ?? '';
      r.reference = [was.toLowerCase(), ` ${was} `, `${was}\t`, was.replace(/^./, (c) => c.toLowerCase())][e.pick % 4]!;
      return `${was} reference -> ${JSON.stringify(r.reference)}`;
    }
    case 'zeros': {
      const cut = ['accountNumber', 'bankCode', 'sortCode'].filter((f) => /^0+\d/.test(r[f] ?? ''));
      for (const f of cut) r[f] = r[f]!.replace(/^0+/, '');
      return `${r.reference} leading zeros lost in ${cut.join(', ') || 'nothing'}`;
    }
    case 'blankLine':
      s.rows.splice(e.other % (s.rows.length + 1), 0, null);
      return 'a blank line';
    case 'none':
      return 'no edit';
    case 'fix': {
      // the invalid row (its name blank) given a name again
      const bad = real.find((x) => !x.accountName?.trim());
      if (bad) bad.accountName = 'Fixed Payee';
      return bad ? `${bad.reference} accountName -> "Fixed Payee"` : 'nothing to fix';
    }
    case 'add':
      s.rows.splice(e.other % (s.rows.length + 1), 0, {
        ...o,
        reference: `FZ-ADD-${n}`,
        sourceAmount: `${5 + (e.pick % 20)}.${e.pick % 10}0`,
      });
      return `a row added as FZ-ADD-${n} (${o.reference}'s payee)`;
  }
}

async function save(s: Sheet, path: string, xlsx: boolean): Promise<void> {
  const aoa = [s.header, ...s.rows.map((r) => (r ? s.header.map((h) => r[h] ?? '') : s.header.map(() => '')))];
  if (!xlsx) return writeFile(path, stringify(aoa.map((l) => (l.every((c) => c === '') ? [] : l))));
  const ws = XLSX.utils.aoa_to_sheet(aoa);
  for (const [addr, cell] of Object.entries(ws) as [string, XLSX.CellObject][]) {
    if (addr.startsWith('!') || cell.t !== 's') continue;
    // a number typed as one (leading zeros a spreadsheet cut are what this file shows)
    if (/^[1-9]\d{0,14}$/.test(String(cell.v))) ws[addr] = { t: 'n', v: Number(cell.v) };
    else cell.z = '@';
  }
  const wb = XLSX.utils.book_new();
  XLSX.utils.book_append_sheet(wb, ws, 'Sheet1');
  await writeFile(path, XLSX.write(wb, { type: 'buffer', bookType: 'xlsx' }) as Buffer);
}

const STACK = /unexpected error|\n\s+at .+:\d+:\d+\)?/i;

interface Outcome {
  violations: string[];
  notes: string[];
  edits: number;
  runs: number;
  refusedWhole: number;
  made: number;
  caseOnly: number;
  kills: number;
}

async function runScenario(sc: Scenario, n: number): Promise<Outcome> {
  const out: Outcome = { violations: [], notes: [], edits: 0, runs: 0, refusedWhole: 0, made: 0, caseOnly: 0, kills: 0 };
  const dir = await workDir('pb-run-fuzz-');
  const state = join(dir, 'state');
  process.env.PAYOUT_BATCH_STATE_DIR = state;
  let onInitiate = () => {};
  const sb = await startSandbox({
    rateLimitPerSecond: null,
    monthlyQuota: null,
    storeRefusals: sc.storeRefusals,
    randomSeed: SEED + n,
    onRequest: (e) => void (e.route === 'initiate' && onInitiate()),
  });
  try {
    let file = await writeBatch(dir, 'pay.csv', { rows: sc.rows, currencies: ['GBP', 'EUR', 'NGN'], prefix: `FZ${n}` });
    const sheet: Sheet = { header: [], rows: [] };
    {
      const rows = parse<Record<string, string>>(await readFile(file, 'utf8'), { columns: true });
      sheet.header = Object.keys(rows[0]!);
      sheet.rows = rows;
      if (sc.invalidRow) sheet.rows[2]!.accountName = '';
      await save(sheet, file, false);
    }
    const refs = new Set<string>();
    const everGiven: Record<string, string>[] = [];
    const note = (s: Sheet) => {
      for (const r of s.rows) {
        if (r) everGiven.push({ ...r });
        if (r?.reference) refs.add(r.reference.trim());
      }
    };
    note(sheet);
    // the first run, in-process: a wallet drained between its preflight and its sends
    const conn = connectionTo(sb);
    const prepared = await prepareRun({
      file,
      conn,
      stateDir: state,
      ...(sc.label ? { batchId: `fz-${n}` } : {}),
      ...unattended({ settleDelayMs: 1 }, { yes: false, interactive: true, allowPartial: true }),
    });
    // (a row of the file as first written: an edited one may name no corridor)
    const row = (await loadBatch(file)).rows.find((r) => r.payout?.sourceCurrency === sc.drain)?.payout;
    /** Drains the scenario's wallet to less than a row and its fee (by another payment of the business); returns its credit back. */
    const drain = async (key: string): Promise<() => Promise<unknown>> => {
      if (sc.drain === 'none') return async () => {};
      const w = (await conn.client.listWallets()).data.find((x) => x.currency === sc.drain)!;
      if (!row) return async () => {};
      const amount = new Dec(w.balance!).minus({ GBP: 7, EUR: 10, NGN: 105 }[sc.drain]).floor();
      await conn.client.initiate(initiateBody({ ...row, sourceAmount: amount }), { idempotencyKey: key });
      return () =>
        fetch(`${sb.url}/_sandbox/wallets/${w.walletId}/credit`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ amount: amount.toFixed() }),
        });
    };
    const creditBack = await drain('fuzz-drain-1');
    if (sc.drop) sb.setFaults({ dropAfterCreate: sc.drop, routes: ['initiate'] });
    const first = await execute(prepared, { confirmed: true });
    sb.setFaults({});
    await creditBack();
    const t0 = await readResults(first.resultsPath);
    out.notes.push(`run: ${first.kind}; ${t0.rows.map((r) => `${r.cells.reference}:${r.result.status}`).join(' ')}`);
    const env = cleanEnv({ PAYOUT_BATCH_STATE_DIR: state, PAYOUT_BATCH_RATE: '1000' });
    const common = ['--base-url', sb.url, '--yes', '--json', '--allow-partial'];

    for (const [k, round] of sc.rounds.entries()) {
      const did = round.edits.map((e, j) => applyEdit(sheet, e, n * 100 + k * 10 + j));
      // (a kill needs rows to send: three new payments of the batch's payees)
      if (round.mode === 'kill')
        for (const j of [5, 6, 7])
          did.push(applyEdit(sheet, { kind: 'add', row: j, other: j + k, pick: j * 31 + k }, n * 100 + k * 10 + j));
      out.edits += round.edits.length;
      const ext = round.xlsx ? 'xlsx' : 'csv';
      const target =
        round.where === 2
          ? join(dir, `other-${k}`, `pay.${ext}`)
          : round.where === 1
            ? join(dir, `pay-v${k + 2}.${ext}`)
            : file.replace(/\.\w+$/, `.${ext}`);
      await mkdir(dirname(target), { recursive: true });
      if (round.where === 1 && target !== file) await rename(file, target).catch(() => {});
      if (round.where === 2) await copyFile(file, target).catch(() => {});
      await save(sheet, target, round.xlsx);
      if (round.where !== 2) file = target;
      const given = target;
      note(sheet);
      let givenRows = sheet.rows.filter((r): r is Record<string, string> => r !== null).map((r) => ({ ...r }));
      const before = new Set(serviceRecords(sb).map((p) => p.id));
      let planBodies: Set<string> | undefined;
      const label = sc.label || round.mode === 'batchId' ? ['--batch-id', `fz-${n}`] : [];
      let args = ['run', given, ...(round.mode === 'run' ? [] : label), ...common];
      if (round.mode === 'plan') {
        const planPath = join(dir, `plan-${k}.json`);
        const p = await runMain(['plan', given, ...label, '--base-url', sb.url, '--out', planPath, '--allow-partial'], { cwd: dir, env });
        if (STACK.test(p.stderr + p.stdout)) out.violations.push(`(e) plan: ${p.stderr.slice(0, 800)}`);
        const plan = parseJson(await readFile(planPath, 'utf8').catch(() => ''));
        const rows = (plan?.rows ?? []) as { body: object }[];
        planBodies = new Set(rows.map((r) => bodyDigest(r.body)));
        if (round.between) {
          did.push('plan made, then', applyEdit(sheet, { ...round.edits[0]!, pick: round.edits[0]!.pick + 7 }, n * 100 + k * 10 + 9));
          await save(sheet, given, round.xlsx);
          note(sheet);
          givenRows = sheet.rows.filter((r): r is Record<string, string> => r !== null).map((r) => ({ ...r }));
        }
        args = ['run', '--plan', planPath, ...common];
      }
      let byKilled = new Set<string>();
      let journalled = new Set<string>();
      if (round.drop) sb.setFaults({ dropAfterCreate: round.drop, routes: ['initiate'] });
      const killedRows = givenRows;
      if (round.mode === 'kill') {
        const back = round.drainKill ? await drain(`fuzz-drain-${k + 2}`) : async () => {};
        let seen = 0;
        const killed = await runCli(args, {
          cwd: dir,
          env,
          onSpawn: (c) => (onInitiate = () => void (++seen === round.kill && c.kill('SIGKILL'))),
        });
        onInitiate = () => {};
        out.kills += killed.signal ? 1 : 0;
        out.notes.push(`run ${k + 1} as a process: ${killed.signal ? `killed after ${seen} initiates` : `exit ${killed.code}`}`);
        if (STACK.test(killed.stderr)) out.violations.push(`(e) killed run: ${killed.stderr.slice(0, 800)}`);
        await back();
        byKilled = new Set(serviceRecords(sb).map((p) => p.id));
        journalled = await journalledSends(state);
        if (killed.signal && round.between) {
          // edited again after the kill: its rows of unknown outcome too
          did.push('killed, then', applyEdit(sheet, { ...round.edits[0]!, pick: round.edits[0]!.pick + 7 }, n * 100 + k * 10 + 8));
          // and each row the killed process sent with no payout made (unknown outcome, or refused): another amount or payee
          const paid = new Set(serviceRecords(sb).flatMap((p) => (p.made ? [p.made.key] : [])));
          for (const sent of journalled) {
            const [key, body] = sent.split('\u0000') as [string, string];
            const row = paid.has(key) ? undefined : sheet.rows.find((x) => x && matches(x, JSON.parse(body) as Record<string, unknown>));
            if (!row) continue;
            if (round.kill % 2) row.sourceAmount = '3.33';
            else for (const f of ACCOUNT_FIELDS) if (f in row) row[f] = givenRows[0]![f] ?? '';
            did.push(`${row.reference} (sent, no payout) ${round.kill % 2 ? 'amount -> 3.33' : "account <- the first row's"}`);
          }
          await save(sheet, given, round.xlsx);
          note(sheet);
          givenRows = sheet.rows.filter((r): r is Record<string, string> => r !== null).map((r) => ({ ...r }));
        }
      } else journalled = await journalledSends(state);
      const r = await runMain(args, { cwd: dir, env });
      sb.setFaults({});
      out.runs++;
      const what = `run ${k + 1} ${round.mode}${round.mode === 'plan' && round.between ? ' (edited after plan)' : ''} of ${given.slice(dir.length + 1)} [${did.join('; ')}]`;
      out.notes.push(`${what}: exit ${r.code}: ${r.stderr.trim().split('\n').slice(-2).join(' | ').slice(0, 300)}`);
      if (STACK.test(r.stderr + r.stdout)) out.violations.push(`(e) ${what}: ${r.stderr.slice(0, 800)}`);
      for (const p of serviceRecords(sb).filter((x) => !before.has(x.id) && !x.made?.key.startsWith('fuzz-drain-'))) {
        out.made++;
        if (!p.made) {
          out.violations.push(`(b) ${what}: payout ${p.id} without an idempotency record`);
          continue;
        }
        const body = p.made.body;
        // (c)
        if (planBodies && !planBodies.has(bodyDigest(body)))
          out.violations.push(`(c) ${what}: payout ${p.id} ${JSON.stringify(body)} not in the plan`);
        // (b)
        if ((byKilled.has(p.id) ? killedRows : givenRows).some((g) => matches(g, body))) continue;
        if (journalled.has(`${p.made.key}\u0000${canonicalJson(body)}`))
          out.notes.push(`payout ${p.id}${byKilled.has(p.id) ? ' (killed run)' : ''}: a journalled send resent (I2)`);
        else
          out.violations.push(`(b) ${what}: payout ${p.id} (key ${p.made.key}) ${JSON.stringify(body)} matches no row of the file given`);
      }
      for (const p of serviceRecords(sb))
        if (p.made && !p.made.key.startsWith('fuzz-drain-') && !everGiven.some((g) => matches(g, p.made!.body)))
          out.violations.push(`(b) ${what}: payout ${p.id} matches no row of any file given`);
      // (d)
      const json = parseJson(r.stdout.trim().split('\n').at(-1) ?? '') ?? parseJson(r.stdout);
      const written = typeof json?.results === 'string' ? json.results : undefined;
      if (r.code === 0 || r.code === 1 || r.code === 5) {
        if (!written) out.violations.push(`(d) ${what}: exit ${r.code} and no results named: ${r.stdout.slice(0, 300)}`);
        else {
          const after = (await readResults(written)).rows;
          if (
            !sameCells(
              givenRows,
              after.map((x) => x.cells),
            )
          )
            out.violations.push(`(d) ${what}: ${givenRows.length} rows given, ${after.length} in ${written}; cells differ`);
          const real = new Set(serviceRecords(sb).map((p) => p.id));
          const shown = after.flatMap((x) => (x.result.payoutId && real.has(x.result.payoutId) ? [x.result.payoutId] : []));
          for (const id of new Set(shown.filter((id, j) => shown.indexOf(id) !== j)))
            out.violations.push(`(d) ${what}: payout ${id} shown on two rows of ${written}`);
        }
      } else {
        out.refusedWhole++;
        if (!r.stderr.trim() && !r.stdout.trim()) out.violations.push(`(d) ${what}: exit ${r.code} saying nothing`);
      }
      // (a)
      out.violations.push(...twicePaid(serviceRecords(sb), refs).map((v) => `(a) after ${what}: ${v}`));
      const folded = twicePaid(serviceRecords(sb), refs, { fold: true });
      if (folded.length > twicePaid(serviceRecords(sb), refs).length && !out.caseOnly++)
        out.notes.push(...folded.map((v) => `(references differing in case only) ${v}`));
    }
  } catch (e) {
    out.violations.push(threw('e', e));
  } finally {
    await sb.close();
    await leave(dir, KEEP);
  }
  return out;
}

const scenarios = GIVEN ? [GIVEN] : fc.sample(scenarioArb, { seed: SEED, numRuns: RUNS });
const t0 = performance.now();
const totals = { edits: 0, runs: 0, refusedWhole: 0, made: 0, caseOnly: 0, kills: 0 };
const failures = await runScenarios(scenarios, { only: ONLY, given: !!GIVEN, verbose: VERBOSE }, runScenario, totals);
console.log(
  `\nseed ${SEED}, ${ONLY === undefined && !GIVEN ? RUNS : 1} scenarios, ${totals.edits} edits, ${totals.runs} reruns (${totals.refusedWhole} refused whole, ${totals.kills} SIGKILLs before), ` +
    `${totals.made} payouts created by reruns, ${totals.caseOnly} runs paying a reference again in another case, ${failures} scenarios with a violation, ${((performance.now() - t0) / 1000).toFixed(0)} s`,
);
process.exitCode = failures ? 1 : 0;
