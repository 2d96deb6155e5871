// `ledger import --from-state-dir DIR`: a state folder's journals copied into the team ledger, in one
// transaction under the lock of every account it touches. A reference the database shows sent by
// another batch (or a live run of any batch reserved), or a batch held with other lines, refuses that batch
// whole; one held with the same lines is skipped, also once the database has more (a status learnt
// since); one whose file has more gets them. A folder a live run sends from is refused whole.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { ALIVE, LOCK_NAMESPACE, lockIdOf, type TeamDb } from './pg-db.ts';
import type { Queryable } from './schema.ts';
import { parseLine } from '../journal/journal.ts';
import { foldJournal, type FoldedJournal, type JournalLine, type RowPhase } from '../journal/lines.ts';
import { batchOfJournalName, ledgerDirFor, liveRuns, names as list } from './file.ts';
import { BatchRefused, who } from './account-ledger.ts';
import { appendLines } from './postgres.ts';

export interface FileJournal {
  account: string;
  batchId: string;
  path: string;
  lines: string[];
}

interface ImportConflict {
  account: string;
  ref: string;
  batch: { batchId: string; file: string };
  /** The batch the database shows sent it, and how far (or a live run's that reserved it). */
  other: { batchId: string; file: string; phase: RowPhase | 'being sent' };
}

export interface ImportPlan {
  /** New batches, and the lines a held batch's file has after the held ones. */
  insert: FileJournal[];
  /** Already in the database with the same lines. */
  same: FileJournal[];
  /** In the database with other lines: refused. */
  differing: FileJournal[];
  conflicts: ImportConflict[];
}

/** As sentByOtherBatches counts it. */
const sent = (phase: RowPhase) => phase !== 'none' && phase !== 'rejected';

/** A torn or damaged line is left out, as journal.ts does. */
export function journalLines(text: string): string[] {
  return text
    .replace(/^\uFEFF/, '')
    .split('\n')
    .filter((l) => typeof parseLine(l) === 'object');
}

const fold = (lines: string[]): FoldedJournal => foldJournal(lines.map((l) => JSON.parse(l) as JournalLine));

/** A journal's account is its header's, else its folder's, recognised among `accounts` (by hash); `unknown`: other folders. */
export function readFileLedgers(stateDir: string, accounts: string[]) {
  const base = join(resolve(stateDir), 'ledgers');
  const byFolder = new Map(accounts.map((a) => [basename(ledgerDirFor(stateDir, a)), a]));
  const journals: FileJournal[] = [];
  const unknown: string[] = [];
  const damaged: { path: string; line: number }[] = [];
  for (const folder of list(base).sort()) {
    // (its journal is not whole yet, and what it sends next would be on the folder alone)
    const live = liveRuns(join(base, folder))[0]?.run;
    if (live)
      throw new BatchRefused(
        `a run is sending from ${stateDir} right now: ${who(live)}. Wait until it ends, then import again`,
        'batch-in-progress',
      );
    const names = list(join(base, folder)).filter((n) => batchOfJournalName(n));
    for (const name of names.sort()) {
      const path = join(base, folder, name);
      const text = readFileSync(path, 'utf8').replace(/^\uFEFF/, '');
      // (a damaged line before the last is left out, as every command reads the journal: said, never silently)
      for (const [i, l] of text.split('\n').slice(0, -1).entries()) if (parseLine(l) === 'damaged') damaged.push({ path, line: i + 1 });
      const lines = journalLines(text);
      if (!lines.length) continue;
      // (the embedded sandbox of --env local keeps its ledger in the folder named by its account; a damaged header names none)
      const named = fold(lines).header?.account;
      const account = typeof named === 'string' ? named : folder === 'local' ? 'local' : byFolder.get(folder);
      if (account === undefined) {
        if (!unknown.includes(folder)) unknown.push(folder);
        continue;
      }
      // (by its file's name, which is its header's batch id: a damaged header does not hide what the batch sent)
      journals.push({ account, batchId: batchOfJournalName(name)!, path, lines });
    }
  }
  return { journals, unknown, damaged };
}

/** Pure. `existing`: account → batch id → its lines; journals imported together are checked against each other too. */
export function planImport(existing: Map<string, Map<string, string[]>>, journals: FileJournal[]): ImportPlan {
  const plan: ImportPlan = { insert: [], same: [], differing: [], conflicts: [] };
  const folds = new Map<string, Map<string, FoldedJournal>>();
  for (const [account, batches] of existing) folds.set(account, new Map([...batches].map(([b, lines]) => [b, fold(lines)])));
  for (const j of journals) {
    const held = existing.get(j.account)?.get(j.batchId);
    if (held && j.lines.every((l, i) => l === held[i])) {
      plan.same.push(j);
      continue;
    }
    // (the file learnt lines since it was imported, a status or a resumed run: they go in after the held ones)
    if (held && !held.every((l, i) => l === j.lines[i])) {
      plan.differing.push(j);
      continue;
    }
    const mine = fold(j.lines);
    const others = folds.get(j.account) ?? folds.set(j.account, new Map()).get(j.account)!;
    for (const s of mine.rows.values()) {
      if (!sent(s.phase)) continue;
      for (const [otherId, other] of others) {
        const o = other.rows.get(s.ref);
        if (otherId === j.batchId || !o || !sent(o.phase)) continue;
        plan.conflicts.push({
          account: j.account,
          ref: s.ref,
          batch: { batchId: j.batchId, file: mine.header?.file ?? j.path },
          other: { batchId: otherId, file: other.header?.file ?? '?', phase: o.phase },
        });
      }
    }
    others.set(j.batchId, mine);
    plan.insert.push(held ? { ...j, lines: j.lines.slice(held.length) } : j);
  }
  return plan;
}

async function linesOf(q: Queryable, accounts: string[]): Promise<Map<string, Map<string, string[]>>> {
  const r = await q.query<{ account: string; batch_id: string; line: string }>(
    'SELECT account, batch_id, line FROM payout_batch.journal_lines WHERE account = ANY($1::text[]) ORDER BY id',
    [accounts],
  );
  const out = new Map<string, Map<string, string[]>>();
  for (const row of r.rows) {
    const batches = out.get(row.account) ?? out.set(row.account, new Map()).get(row.account)!;
    // (pushed, never copied: a batch of 300,000 lines copied at each line took minutes)
    (batches.get(row.batch_id) ?? batches.set(row.batch_id, []).get(row.batch_id)!).push(row.line);
  }
  return out;
}

const batchKey = (account: string, batchId: string) => `${account}\n${batchId}`;
/** Computed alike here and in the database (a line is JSON: never a raw newline). */
const linesDigest = (lines: string[]) => createHash('sha256').update(lines.join('\n'), 'utf8').digest('hex');

/** One row per batch, no line read back. */
async function digestsOf(q: Queryable, accounts: string[]): Promise<Map<string, string>> {
  const r = await q.query<{ account: string; batch_id: string; digest: string }>(
    `SELECT account, batch_id, encode(sha256(convert_to(string_agg(line, E'\n' ORDER BY id), 'UTF8')), 'hex') AS digest
     FROM payout_batch.journal_lines WHERE account = ANY($1::text[]) GROUP BY account, batch_id`,
    [accounts],
  );
  return new Map(r.rows.map((row) => [batchKey(row.account, row.batch_id), row.digest]));
}

const CHUNK = 5000;

/** A live run that reserved a reference `j` sent: it found it sent nowhere (this batch's too: it read the batch before), and would send it again. */
async function beingSent(q: Queryable, j: FileJournal): Promise<ImportConflict[]> {
  const mine = fold(j.lines);
  const r = await q.query<{ reference: string; batch_id: string; file: string }>(
    `SELECT r.reference, r.batch_id, b.file FROM payout_batch.reservations r JOIN payout_batch.batch_runs b USING (account, batch_id, holder)
      WHERE r.account = $1 AND r.reference = ANY($2::text[]) AND ${ALIVE('r.holder')}`,
    [j.account, [...mine.rows.values()].filter((s) => sent(s.phase)).map((s) => s.ref)],
  );
  const batch = { batchId: j.batchId, file: mine.header?.file ?? j.path };
  return r.rows.map((x) => ({
    account: j.account,
    ref: x.reference,
    batch,
    other: { batchId: x.batch_id, file: x.file, phase: 'being sent' },
  }));
}

/**
 * A batch with a conflict, or differing, stays out whole; every other goes in, so the ledger knows all it can of what was sent.
 * `origin`: the rows' writer.
 */
export async function importJournals(db: Pick<TeamDb, 'tx'>, journals: FileJournal[], origin: string): Promise<ImportPlan> {
  const accounts = [...new Set(journals.map((j) => j.account))].sort();
  return db.tx(async (q) => {
    // the engine's account locks, in one order (no deadlock with another import)
    for (const a of accounts) await q.query('SELECT pg_advisory_xact_lock($1, $2)', [LOCK_NAMESPACE, lockIdOf(a)]);
    // importing again (the usual second run) reads no line back: only a new batch needs the others' lines
    const held = await digestsOf(q, accounts);
    const plan = journals.every((j) => held.get(batchKey(j.account, j.batchId)) === linesDigest(j.lines))
      ? { insert: [], same: journals, differing: [], conflicts: [] }
      : planImport(await linesOf(q, accounts), journals);
    for (const j of plan.insert) plan.conflicts.push(...(await beingSent(q, j)));
    plan.insert = plan.insert.filter((j) => !plan.conflicts.some((c) => c.account === j.account && c.batch.batchId === j.batchId));
    for (const j of plan.insert)
      for (let i = 0; i < j.lines.length; i += CHUNK) {
        const lines = j.lines.slice(i, i + CHUNK).map((line) => ({ batch: j.batchId, line }));
        await appendLines(q, j.account, origin, lines);
      }
    return plan;
  });
}
