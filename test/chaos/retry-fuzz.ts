// Fuzz: `retry` of a results file edited at random, judged by the sandbox's own records (its payouts
// and the key, body and payout of each idempotency record), never by the tool's journal.
//   npx tsx test/chaos/retry-fuzz.ts [--seed S] [--runs N] [--verbose] [--only I] [--scenario JSON] [--keep]
//
// Each run (a scenario fast-check draws from the seed): a batch of 6 to 12 rows (GBP, EUR and NGN, with
// documents or not, one row invalid sometimes) runs in-process; between its preflight and its sends one
// wallet may be drained (its rows refused INSUFFICIENT_FUNDS by the service, then the wallet credited
// back), and initiates may lose their answer after the service created the payout. Some created
// payouts are then FAILED (refunded) and `status` read. Then one or two rounds of random edits of the
// results file (a row's reference, amount, account, name, currency, key or status cells; leading zeros
// lost; a row duplicated, deleted, the rows reordered, a cell blanked; saved as CSV or XLSX, over the
// file or beside it, of the last results or the run's), each followed by `payout-batch retry` through
// main() in this process (sometimes `--resend-failed`; sometimes first as a process killed at its Nth
// initiate, the file edited again after the kill), the sandbox in the strict or variant reading and
// either reading of a refused key. Checked after each retry:
//   (a) no reference has two payouts unless the earlier ones FAILED or were REJECTED and a retry had
//       --resend-failed; no payout under a key of no reference of the batch;
//   (b) every payout the retry created matches a row of the file it was given (beneficiary, amount,
//       currency), and none pays an identifier whose leading zeros the edit cut;
//   (c) every row of that file is in the retry's results (or the retry refused as a whole, exit != 0, saying why),
//       no two of them showing one payout;
//   (d) no "unexpected error" nor stack trace;
//   (e) then the batch file run again pays nothing (each of its rows was sent once already, or is invalid), but
//       what settles a send of unknown outcome (a killed retry's) with its journalled key and body.
// Exits 1 when any check fails, printing the scenario: `--scenario JSON --only I` replays it (I: its number, for its references).
import { join } from 'node:path';
import { readFile, writeFile } from 'node:fs/promises';
import fc from 'fast-check';
import { execute, prepareRun } from '../../src/engine/pipeline.ts';
import { initiateBody } from '../../src/engine/execute.ts';
import { loadBatch } from '../../src/engine/prepare.ts';
import { refreshStatus } from '../../src/follow-up/refresh-status.ts';
import { Dec } from '../../src/money.ts';
import { canonicalJson } from '../../src/text.ts';
import { readResults } from '../../src/results/read.ts';
import { writeResults } from '../../src/results/write.ts';
import type { ResultRow, ResultsTable } from '../../src/results/types.ts';
import { startSandbox } from '../../src/sandbox/start-sandbox.ts';
import { cleanEnv, runCli, runMain, workDir, writeBatch } from '../engine/helpers.ts';
import { connectionTo, setStatus, unattended } from '../ops/helpers.ts';
import { fuzzFlags, journalledSends, matches, parseJson, runScenarios, serviceRecords, twicePaid, threw, leave } from './fuzz-judge.ts';

const { given: GIVEN, seed: SEED, runs: RUNS, verbose: VERBOSE, only: ONLY, keep: KEEP } = fuzzFlags<Scenario>();

// prettier-ignore
const EDIT_KINDS = [
  'reference', 'amount', 'account', 'name', 'status', 'duplicate', 'delete', 'reorder', 'blank', 'clearResult', 'key', 'currency',
  'zeros',
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
  resendFailed: boolean;
  drop: number;
  /** The retry first runs as a process killed (SIGKILL) as its kill-th initiate is answered; 0: none. */
  kill: number;
  /** The edits saved over the results file retried (else as edited-N beside it); `older`: edits of the run's results, not the last retry's. */
  inPlace: boolean;
  older: boolean;
  /** After the kill, the edits made again on the file (its rows of unknown outcome edited too), then the retry. */
  editAfterKill: boolean;
}
interface Scenario {
  rows: number;
  drain: 'none' | 'GBP' | 'EUR' | 'NGN';
  storeRefusals: boolean;
  variant: boolean;
  drop: number;
  fail: number[];
  invalidRow: boolean;
  documents: boolean;
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
  variant: fc.boolean(),
  drop: fc.constantFrom(0, 0, 0.3, 0.6),
  fail: fc.array(fc.nat(40), { maxLength: 2 }),
  invalidRow: fc.boolean(),
  documents: fc.boolean(),
  rounds: fc.array(
    fc.record({
      edits: fc.array(editArb, { minLength: 1, maxLength: 5 }),
      xlsx: fc.boolean(),
      resendFailed: fc.boolean(),
      drop: fc.constantFrom(0, 0, 0.4),
      kill: fc.constantFrom(0, 0, 1, 2, 3),
      inPlace: fc.boolean(),
      older: fc.boolean(),
      editAfterKill: fc.boolean(),
    }),
    { minLength: 1, maxLength: 2 },
  ),
});

const ACCOUNT_FIELDS = ['accountName', 'accountNumber', 'iban', 'sortCode', 'swiftCode', 'bankName', 'bankCode', 'accountCurrency'];
const STATUSES = ['PENDING', 'FAILED_TO_SEND', 'INVALID', 'UNKNOWN_OUTCOME', 'FAILED', 'SUCCESSFUL', 'NOT_SENT', ''];
const AMOUNTS = ['1.23', '12.34', '99.99', '0', '-5', 'abc', '1,234.56', '10', '10.005', '1e3', ' 12.30 ', '12.3'];

/** One edit, as a person makes it in a spreadsheet; returns what it did, for the report. `lost`: digits a spreadsheet cut. */
function applyEdit(t: ResultsTable, e: Edit, n: number, lost: Set<string>): string {
  const rows = t.rows;
  if (!rows.length) return 'none (no rows)';
  const r = rows[e.row % rows.length]!;
  const o = rows[e.other % rows.length]!;
  const ref = t.inputColumns.includes('reference') ? 'reference' : t.inputColumns[0]!;
  switch (e.kind) {
    case 'reference': {
      const choices = [`FZ-NEW-${n}`, o.cells[ref] ?? '', '', `${r.cells[ref] ?? ''}-B`];
      r.cells[ref] = choices[e.pick % choices.length]!;
      return `row ${r.rowNumber} reference -> "${r.cells[ref]}"`;
    }
    case 'amount':
      r.cells.sourceAmount = AMOUNTS[e.pick % AMOUNTS.length]!;
      return `row ${r.rowNumber} sourceAmount -> "${r.cells.sourceAmount}"`;
    case 'account': {
      // another row's payee (the same currency, else its cells as they are)
      for (const f of ACCOUNT_FIELDS) r.cells[f] = o.cells[f] ?? '';
      if (e.pick % 3 === 0) r.cells.accountNumber = `${r.cells.accountNumber ?? ''}${e.pick % 10}`;
      return `row ${r.rowNumber} account <- row ${o.rowNumber}'s${e.pick % 3 === 0 ? ' (number edited)' : ''}`;
    }
    case 'name':
      r.cells.accountName = ['Grace Hopper', '', 'Ada Lovelace Ltd'][e.pick % 3]!;
      return `row ${r.rowNumber} accountName -> "${r.cells.accountName}"`;
    case 'status': {
      r.result.status = STATUSES[e.pick % STATUSES.length]!;
      if (e.pick % 2) delete r.result.payoutId;
      if (e.pick % 4 < 2) delete r.result.idempotencyKey;
      if (e.pick % 5 === 0) r.result.payoutId = o.result.payoutId ?? 'po_made_up';
      return `row ${r.rowNumber} status -> "${r.result.status}"${e.pick % 2 ? ', payoutId cleared' : ''}${e.pick % 4 < 2 ? ', key cleared' : ''}${e.pick % 5 === 0 ? ", payoutId <- other's" : ''}`;
    }
    case 'duplicate': {
      const copy = structuredClone(r);
      const how = e.pick % 3;
      if (how === 1) copy.cells[ref] = `FZ-DUP-${n}`;
      if (how === 2) Object.assign(copy.cells, { [ref]: `FZ-DUP-${n}`, sourceAmount: '3.21' });
      rows.splice((e.other % (rows.length + 1)) | 0, 0, copy);
      renumber(t);
      return `row ${r.rowNumber} duplicated${['', ' under a new reference', ' under a new reference and amount'][how]}`;
    }
    case 'delete':
      rows.splice(rows.indexOf(r), 1);
      renumber(t);
      return `row ${r.rowNumber} deleted`;
    case 'reorder':
      rows.reverse();
      if (e.pick % 2) rows.push(rows.shift()!);
      renumber(t);
      return 'rows reordered';
    case 'blank': {
      const cols = [...t.inputColumns, 'payoutId', 'idempotencyKey', 'status'];
      const c = cols[e.pick % cols.length]!;
      if (t.inputColumns.includes(c)) r.cells[c] = '';
      else delete r.result[c as keyof ResultRow['result']];
      return `row ${r.rowNumber} ${c} blanked`;
    }
    case 'key': {
      const choices = [o.result.idempotencyKey ?? '', '', `${r.result.idempotencyKey ?? ''}x`];
      r.result.idempotencyKey = choices[e.pick % choices.length]!;
      return `row ${r.rowNumber} idempotencyKey -> "${r.result.idempotencyKey}"`;
    }
    case 'currency': {
      const c = ['GBP', 'EUR', 'USD'][e.pick % 3]!;
      r.cells.sourceCurrency = c;
      if (e.pick % 2) Object.assign(r.cells, { destinationCurrency: c, accountCurrency: c });
      return `row ${r.rowNumber} currency -> ${c}${e.pick % 2 ? ' (all three cells)' : ''}`;
    }
    case 'zeros': {
      // a spreadsheet read the identifiers as numbers: their leading zeros are gone
      const cut = ['accountNumber', 'bankCode', 'sortCode'].filter((f) => /^0+\d/.test(r.cells[f] ?? ''));
      for (const f of cut) lost.add((r.cells[f] = r.cells[f]!.replace(/^0+/, '')));
      return `row ${r.rowNumber} leading zeros lost in ${cut.join(', ') || 'nothing'}`;
    }
    case 'clearResult':
      r.result = {};
      return `row ${r.rowNumber} result cells cleared`;
  }
}

const renumber = (t: ResultsTable) => t.rows.forEach((r, i) => (r.rowNumber = i + 2));

interface Outcome {
  violations: string[];
  notes: string[];
  edits: number;
  retries: number;
  refusedWhole: number;
  madeByRetry: number;
}

async function runScenario(sc: Scenario, n: number): Promise<Outcome> {
  const out: Outcome = { violations: [], notes: [], edits: 0, retries: 0, refusedWhole: 0, madeByRetry: 0 };
  const dir = await workDir('pb-retry-fuzz-');
  const state = join(dir, 'state');
  process.env.PAYOUT_BATCH_STATE_DIR = state;
  let onInitiate = () => {};
  const sb = await startSandbox({
    rateLimitPerSecond: null,
    monthlyQuota: null,
    storeRefusals: sc.storeRefusals,
    shapes: sc.variant ? 'variant' : 'strict',
    randomSeed: SEED + n,
    onRequest: (e) => void (e.route === 'initiate' && onInitiate()),
  });
  try {
    const file = await writeBatch(dir, 'pay.csv', {
      rows: sc.rows,
      currencies: ['GBP', 'EUR', 'NGN'],
      prefix: `FZ${n}`,
      ...(sc.documents ? { documentsEvery: 3 } : {}),
    });
    if (sc.invalidRow) {
      const lines = (await readFile(file, 'utf8')).split('\n');
      lines[2] = lines[2]!.replace(/^([^,]*,[^,]*,[^,]*,[^,]*,[^,]*,[^,]*,)[^,]*/, '$1'); // row 3's accountName blank
      await writeFile(file, lines.join('\n'));
    }
    const refs = new Set<string>();
    const conn = connectionTo(sb);
    const o = { file, conn, stateDir: state, ...unattended({ settleDelayMs: 1 }, { yes: false, interactive: true, allowPartial: true }) };
    const prepared = await prepareRun(o);
    let drained: { walletId: string; amount: string } | undefined;
    if (sc.drain !== 'none') {
      const w = (await conn.client.listWallets()).data.find((x) => x.currency === sc.drain)!;
      const row = (await loadBatch(file)).rows.find((r) => r.payout?.sourceCurrency === sc.drain)?.payout;
      if (row) {
        // (5 left: less than any row and its fee)
        const amount = new Dec(w.balance!).minus({ GBP: 7, EUR: 10, NGN: 105 }[sc.drain]).floor();
        await conn.client.initiate(initiateBody({ ...row, sourceAmount: amount }), { idempotencyKey: 'fuzz-drain-1' });
        drained = { walletId: w.walletId, amount: amount.toFixed() };
      }
    }
    if (sc.drop) sb.setFaults({ dropAfterCreate: sc.drop, routes: ['initiate'] });
    const first = await execute(prepared, { confirmed: true });
    sb.setFaults({});
    if (drained)
      await fetch(`${sb.url}/_sandbox/wallets/${drained.walletId}/credit`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ amount: drained.amount }),
      });
    let results = first.resultsPath;
    const t0 = await readResults(results);
    for (const r of t0.rows) if (r.cells.reference) refs.add(r.cells.reference);
    // some created payouts FAIL (refunded), and status reads them
    const created = t0.rows.filter((r) => r.result.payoutId);
    for (const i of sc.fail)
      if (created.length) await setStatus(sb, created[i % created.length]!.result.payoutId!, 'FAILED').catch(() => {});
    if (sc.fail.length) await refreshStatus({ client: conn.client, resultsFile: results });
    out.notes.push(`run: ${first.kind}; ${t0.rows.map((r) => `${r.rowNumber}:${r.result.status}`).join(' ')}`);
    let resendAsked = false;
    const lost = new Set<string>();
    const accounts = new Set(t0.rows.flatMap((r) => ['accountNumber', 'bankCode', 'sortCode'].map((f) => r.cells[f] ?? '')));
    const firstResults = results;

    for (const [k, round] of sc.rounds.entries()) {
      const from = round.older ? firstResults : results;
      const table = await readResults(from);
      const did = round.edits.map((e, j) => applyEdit(table, e, n * 100 + k * 10 + j, lost));
      out.edits += round.edits.length;
      for (const r of table.rows) if (r.cells.reference) refs.add(r.cells.reference.trim());
      const ext = round.xlsx ? 'xlsx' : 'csv';
      const given = round.inPlace ? from.replace(/\.(csv|xlsx)$/, `.${ext}`) : join(dir, `edited-${k + 1}.results.${ext}`);
      if (round.older) did.unshift("(the run's results)");
      await writeResults(given, { ...table, format: round.xlsx ? 'xlsx' : 'csv' });
      let givenRows = (await readResults(given)).rows;
      // (edited again after a kill: the killed process's payouts are judged by the file it was given; an unsettled row
      // is resent as it sent it, the edit not applied: I2)
      let killedRows: ResultRow[] = [];
      let byKilled = new Set<string>();
      let journalled = new Set<string>();
      const before = new Set(serviceRecords(sb).map((p) => p.id));
      if (round.drop) sb.setFaults({ dropAfterCreate: round.drop, routes: ['initiate'] });
      const args = ['retry', given, '--base-url', sb.url, '--yes', '--json', ...(round.resendFailed ? ['--resend-failed'] : [])];
      const env = cleanEnv({ PAYOUT_BATCH_STATE_DIR: state, PAYOUT_BATCH_RATE: '1000' });
      if (round.kill) {
        let seen = 0;
        const killed = await runCli(args, {
          cwd: dir,
          env,
          onSpawn: (c) => (onInitiate = () => void (++seen === round.kill && c.kill('SIGKILL'))),
        });
        onInitiate = () => {};
        out.notes.push(`retry ${k + 1} as a process: ${killed.signal ? `killed after ${seen} initiates` : `exit ${killed.code}`}`);
        if (/unexpected error|\n\s+at .+:\d+:\d+\)?/.test(killed.stderr))
          out.violations.push(`(d) killed retry: ${killed.stderr.slice(0, 800)}`);
        if (killed.signal && round.editAfterKill) {
          killedRows = givenRows;
          byKilled = new Set(serviceRecords(sb).map((p) => p.id));
          journalled = await journalledSends(state);
          const again = await readResults(given);
          did.push(
            'killed, then',
            ...round.edits.map((e, j) => applyEdit(again, { ...e, pick: e.pick + 7 }, n * 100 + k * 10 + j + 5, lost)),
          );
          for (const r of again.rows) if (r.cells.reference) refs.add(r.cells.reference.trim());
          await writeResults(given, again);
          givenRows = (await readResults(given)).rows;
        }
      }
      const r = await runMain(args, { cwd: dir, env });
      sb.setFaults({});
      resendAsked ||= round.resendFailed;
      out.retries++;
      const label = `retry ${k + 1} [${did.join('; ')}]${round.xlsx ? ' xlsx' : ''}${round.resendFailed ? ' --resend-failed' : ''}${round.kill ? ` (killed at initiate ${round.kill} first)` : ''}`;
      out.notes.push(`${label}: exit ${r.code}: ${r.stderr.trim().split('\n').slice(-2).join(' | ').slice(0, 300)}`);
      // (d)
      if (/unexpected error|\n\s+at .+:\d+:\d+\)?/.test(r.stderr + r.stdout))
        out.violations.push(`(d) ${label}: ${r.stderr.slice(0, 800)}`);
      // (b)
      for (const p of serviceRecords(sb).filter((x) => !before.has(x.id))) {
        out.madeByRetry++;
        if (!p.made) {
          out.violations.push(`(b) ${label}: payout ${p.id} without an idempotency record`);
          continue;
        }
        const body = p.made.body;
        if (byKilled.has(p.id) ? killedRows.some((g) => matches(g.cells, body)) : givenRows.some((g) => matches(g.cells, body))) continue;
        if (journalled.has(`${p.made.key}\u0000${canonicalJson(body)}`))
          out.notes.push(`payout ${p.id} (key ${p.made.key}): a send of the killed retry resent as journalled (I2)`);
        else
          out.violations.push(
            `(b) ${label}: payout ${p.id} (key ${p.made.key}) ${JSON.stringify(p.made.body)} matches no row of the file given`,
          );
      }
      // (b) never to the digits a spreadsheet cut
      for (const p of serviceRecords(sb).filter((x) => !before.has(x.id))) {
        const b = (p.made?.body.beneficiary ?? {}) as Record<string, unknown>;
        for (const f of ['accountNumber', 'bankCode', 'sortCode'])
          if (typeof b[f] === 'string' && lost.has(b[f]) && !accounts.has(b[f]))
            out.violations.push(`(b) ${label}: payout ${p.id} to ${f} ${b[f]}, an identifier whose leading zeros a spreadsheet lost`);
      }
      // (c)
      const json = parseJson(r.stdout);
      // (none written: nothing new to say, the file given is the retry's results)
      const written = typeof json?.results === 'string' ? json.results : given;
      if (r.code === 0 || r.code === 1 || r.code === 5) {
        if (!json) out.violations.push(`(c) ${label}: exit ${r.code} and no --json document`);
        else {
          const after = (await readResults(written)).rows;
          // (no two rows shown with one payout of the service: a copy never shows its original's)
          const real = new Set(serviceRecords(sb).map((p) => p.id));
          const shown = after.flatMap((x) => (x.result.payoutId && real.has(x.result.payoutId) ? [x.result.payoutId] : []));
          for (const id of new Set(shown.filter((id, j) => shown.indexOf(id) !== j)))
            out.violations.push(`(c) ${label}: payout ${id} shown on two rows of ${written}`);
          const key = (x: ResultRow) =>
            JSON.stringify(
              Object.entries(x.cells)
                .map(([c, v]) => [c, v.trim()])
                .filter(([, v]) => v)
                .sort(),
            );
          const want = givenRows.map(key).sort();
          const got = after.map(key).sort();
          if (JSON.stringify(want) !== JSON.stringify(got))
            out.violations.push(`(c) ${label}: ${givenRows.length} rows given, ${after.length} in ${written}; cells differ`);
          results = written;
        }
      } else {
        out.refusedWhole++;
        if (!r.stderr.trim() && !r.stdout.trim()) out.violations.push(`(c) ${label}: exit ${r.code} saying nothing`);
        results = given;
      }
      // (a)
      out.violations.push(...twicePaid(serviceRecords(sb), refs, { resendAsked }).map((v) => `(a) after ${label}: ${v}`));
    }
    // (e) the batch file run again after the retries pays nothing: each of its rows was sent (or is invalid) already
    const before = new Set(serviceRecords(sb).map((p) => p.id));
    const sent = await journalledSends(state);
    const again = await runMain(['run', file, '--base-url', sb.url, '--yes'], {
      cwd: dir,
      env: cleanEnv({ PAYOUT_BATCH_STATE_DIR: state, PAYOUT_BATCH_RATE: '1000' }),
    });
    out.notes.push(`run of the batch file again: exit ${again.code}`);
    // (but a send a killed retry journalled, of unknown outcome: settled with its key and body, I2)
    for (const p of serviceRecords(sb).filter((x) => !before.has(x.id)))
      if (!p.made || !sent.has(`${p.made.key}\u0000${canonicalJson(p.made.body)}`))
        out.violations.push(`(e) the batch file run again made payout ${p.id} (key ${p.made?.key}), no resend of a journalled send`);
    if (/unexpected error|\n\s+at .+:\d+:\d+\)?/.test(again.stderr)) out.violations.push(`(d) run again: ${again.stderr.slice(0, 800)}`);
  } catch (e) {
    out.violations.push(threw('d', e));
  } finally {
    await sb.close();
    await leave(dir, KEEP);
  }
  return out;
}

const scenarios = GIVEN ? [{ ...GIVEN, variant: GIVEN.variant ?? false }] : fc.sample(scenarioArb, { seed: SEED, numRuns: RUNS });
const t0 = performance.now();
const totals = { edits: 0, retries: 0, refusedWhole: 0, madeByRetry: 0 };
const failures = await runScenarios(scenarios, { only: ONLY, given: !!GIVEN, verbose: VERBOSE }, runScenario, totals);
console.log(
  `\nseed ${SEED}, ${ONLY === undefined && !GIVEN ? RUNS : 1} runs, ${totals.edits} edits, ${totals.retries} retries (${totals.refusedWhole} refused whole), ` +
    `${totals.madeByRetry} payouts created by retries, ` +
    `${failures} runs with a violation, ${((performance.now() - t0) / 1000).toFixed(0)} s`,
);
process.exitCode = failures ? 1 : 0;
