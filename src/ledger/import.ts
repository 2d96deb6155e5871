// `payout-batch ledger import --from-state-dir DIR`: the file ledgers of a state folder (file.ts,
// `DIR/ledgers/<account folder>/<batch16>.journal.jsonl`) copied into the team ledger's
// journal_lines (README.md beside this file), one row per line, in order.
//
// All or nothing, in one transaction under the advisory lock of every account it touches (the
// lock the engine takes to reserve references): a reference the database shows sent by another
// batch of the same account (the rule of ledger.ts sentByOtherBatches) refuses the whole import,
// every such reference listed with both batches, as does a batch the database holds with other
// lines. A batch the database holds with the same lines is skipped: importing twice is harmless.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { LOCK_NAMESPACE, lockIdOf, type Queryable, type TeamDb } from './pg-db.ts';
import { parseLine } from '../journal/journal.ts';
import { foldJournal, type FoldedJournal, type JournalLine, type RowPhase } from '../journal/lines.ts';
import { ledgerDirFor, names as list } from './file.ts';

/** One batch's journal of a file ledger, as its lines (the text of each complete event). */
export interface FileJournal {
  account: string;
  batchId: string;
  path: string;
  lines: string[];
}

export interface ImportConflict {
  account: string;
  ref: string;
  /** The imported batch (its file) that sent the reference. */
  batch: { batchId: string; file: string };
  /** The batch the database shows sent it, and how far. */
  other: { batchId: string; file: string; phase: RowPhase };
}

export interface ImportPlan {
  /** The journals to insert, in order. */
  insert: FileJournal[];
  /** Already in the database with the same lines. */
  same: FileJournal[];
  /** In the database with other lines: refused. */
  differing: FileJournal[];
  conflicts: ImportConflict[];
}

/** Sent, as far as a reference's payment goes: not refused, not only quoted (ledger.ts sentByOtherBatches). */
const sent = (phase: RowPhase) => phase !== 'none' && phase !== 'rejected';

/** The complete events of a journal's text, as written (a torn or damaged line is left out, as journal.ts does). */
export function journalLines(text: string): string[] {
  return text
    .replace(/^\uFEFF/, '')
    .split('\n')
    .filter((l) => typeof parseLine(l) === 'object');
}

const fold = (lines: string[]): FoldedJournal => foldJournal(lines.map((l) => JSON.parse(l) as JournalLine));

/**
 * The journals of the file ledgers under `stateDir`, and the account folders whose account is not
 * known. The account of a journal is its header's `account` when it names one; else the folder's,
 * recognised among `accounts` (a folder is named by a hash of its account: file.ts ledgerDirFor).
 */
export function readFileLedgers(stateDir: string, accounts: string[]): { journals: FileJournal[]; unknown: string[] } {
  const base = join(resolve(stateDir), 'ledgers');
  const byFolder = new Map(accounts.map((a) => [basename(ledgerDirFor(stateDir, a)), a]));
  const journals: FileJournal[] = [];
  const unknown: string[] = [];
  for (const folder of list(base).sort()) {
    const names = list(join(base, folder)).filter((n) => /^[0-9a-f]{16}\.journal\.jsonl$/.test(n));
    for (const name of names.sort()) {
      const path = join(base, folder, name);
      const lines = journalLines(readFileSync(path, 'utf8'));
      const header = fold(lines).header;
      if (!header) continue; // nothing was ever written after the header: nothing to carry over
      // (the embedded sandbox of --env local keeps its ledger in the folder named by its account)
      const account = typeof header.account === 'string' ? header.account : folder === 'local' ? 'local' : byFolder.get(folder);
      if (account === undefined) {
        if (!unknown.includes(folder)) unknown.push(folder);
        continue;
      }
      // (named as the engine names a batch's journal, there and in the database: its first 16 hex)
      journals.push({ account, batchId: header.batchId.slice(0, 16), path, lines });
    }
  }
  return { journals, unknown };
}

/**
 * The rule, pure: what the database (`existing`: account → batch id → its lines, in order) and the
 * journals to import make of the import. Journals imported together are checked against each
 * other as well.
 */
export function planImport(existing: Map<string, Map<string, string[]>>, journals: FileJournal[]): ImportPlan {
  const plan: ImportPlan = { insert: [], same: [], differing: [], conflicts: [] };
  const folds = new Map<string, Map<string, FoldedJournal>>();
  for (const [account, batches] of existing) folds.set(account, new Map([...batches].map(([b, lines]) => [b, fold(lines)])));
  for (const j of journals) {
    const held = existing.get(j.account)?.get(j.batchId);
    if (held) {
      (held.length === j.lines.length && held.every((l, i) => l === j.lines[i]) ? plan.same : plan.differing).push(j);
      continue;
    }
    const mine = fold(j.lines);
    const others = folds.get(j.account) ?? new Map<string, FoldedJournal>();
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
    folds.set(j.account, others);
    plan.insert.push(j);
  }
  return plan;
}

/** The lines the database holds of these accounts: account → batch id → lines, in order. */
async function linesOf(q: Queryable, accounts: string[]): Promise<Map<string, Map<string, string[]>>> {
  const r = await q.query<{ account: string; batch_id: string; line: string }>(
    'SELECT account, batch_id, line FROM payout_batch.journal_lines WHERE account = ANY($1::text[]) ORDER BY id',
    [accounts],
  );
  const out = new Map<string, Map<string, string[]>>();
  for (const row of r.rows) {
    const batches = out.get(row.account) ?? new Map<string, string[]>();
    out.set(row.account, batches);
    // (pushed, never copied: a batch of 300,000 lines copied at each line took minutes)
    const lines = batches.get(row.batch_id) ?? [];
    batches.set(row.batch_id, lines);
    lines.push(row.line);
  }
  return out;
}

/** account and batch id as one key */
const batchKey = (account: string, batchId: string) => `${account}\n${batchId}`;
/** A batch's lines as one digest, computed alike here and in the database (a line is JSON: never a raw newline). */
const linesDigest = (lines: string[]) => createHash('sha256').update(lines.join('\n'), 'utf8').digest('hex');

/** The digest of the lines of each batch the database holds of these accounts: one row per batch, no line read back. */
async function digestsOf(q: Queryable, accounts: string[]): Promise<Map<string, string>> {
  const r = await q.query<{ account: string; batch_id: string; digest: string }>(
    `SELECT account, batch_id, encode(sha256(convert_to(string_agg(line, E'\n' ORDER BY id), 'UTF8')), 'hex') AS digest
     FROM payout_batch.journal_lines WHERE account = ANY($1::text[]) GROUP BY account, batch_id`,
    [accounts],
  );
  return new Map(r.rows.map((row) => [batchKey(row.account, row.batch_id), row.digest]));
}

/** The plan when the database holds every batch already: each the same, or with other lines (refused). */
function heldPlan(journals: FileJournal[], held: Map<string, string>): ImportPlan {
  const plan: ImportPlan = { insert: [], same: [], differing: [], conflicts: [] };
  for (const j of journals) (held.get(batchKey(j.account, j.batchId)) === linesDigest(j.lines) ? plan.same : plan.differing).push(j);
  return plan;
}

const CHUNK = 5000;

/**
 * Imports the journals in one transaction: nothing when the plan has conflicts or differing
 * batches. `origin`: what the journal_lines rows name as their writer.
 */
export async function importJournals(db: Pick<TeamDb, 'tx'>, journals: FileJournal[], origin: string): Promise<ImportPlan> {
  const accounts = [...new Set(journals.map((j) => j.account))].sort();
  return db.tx(async (q) => {
    // the engine's account locks, in one order (no deadlock with another import)
    for (const a of accounts) await q.query('SELECT pg_advisory_xact_lock($1, $2)', [LOCK_NAMESPACE, lockIdOf(a)]);
    // Importing again what is already there (the usual second run) reads no line back: only when a
    // batch is new are the others' lines needed, to find a reference both sent.
    const held = await digestsOf(q, accounts);
    const plan = journals.every((j) => held.has(batchKey(j.account, j.batchId)))
      ? heldPlan(journals, held)
      : planImport(await linesOf(q, accounts), journals);
    if (plan.conflicts.length || plan.differing.length) return plan;
    for (const j of plan.insert)
      for (let i = 0; i < j.lines.length; i += CHUNK)
        await q.query(
          `INSERT INTO payout_batch.journal_lines (account, batch_id, origin, line)
           SELECT $1, $2, $3, line FROM unnest($4::text[]) WITH ORDINALITY AS l(line, n) ORDER BY n`,
          [j.account, j.batchId, origin, j.lines.slice(i, i + CHUNK)],
        );
    return plan;
  });
}
