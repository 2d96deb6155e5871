// The ledger of a service account: the journals of every batch sent to one account, in one folder
// per user, whatever folder the batch files sit in (src/engine/README.md, "Where the ledger lives").
//
//   <state root>/ledgers/<host>-<hash of the account>/
//       <batch16>.journal.jsonl   one journal per batch (journal/journal.ts), named by its identity
//       <batch16>.reserve.json    the references a live process is sending (a reservation)
//       ledger.lock               the inter-process lock of the account (files/lock.ts)
//
// The account is what the service is: its normalised base URL. Never an environment label: the same
// URL under `custom`, `sandbox` or a watch configuration is one account. The business the key belongs
// to is not part of it (the spec gives no route that names it): two businesses sending from one
// machine to one service share a ledger, so one may be refused a reference the other sent (a false
// refusal, never a second payment); give them separate state folders (--state-dir).
//
// The demo's embedded sandbox is a new simulator every time: its ledger is a temporary folder of
// the connection, so the next demo is never refused for the last one's rows. The sandbox of
// `--env local` keeps its state in the state folder (cli/local-sandbox.ts), and so its ledger,
// `<state root>/ledgers/local/`: its address changes at every start, so it is named, not a URL.
//
// What the lock covers: the check that the references of a batch were not sent and are not being
// sent by another batch (and that no other process runs this batch), and the reservation of them,
// are one step under the lock; so is every `initiating` record afterwards (Reservation.guard), which
// is written only while the reservation is still this process's own. Two processes can never both
// send a reference.
//
// Probable duplicates (same beneficiary account, amount and currencies) are refused within a batch
// (validation/batch.ts), not across batches: a payroll pays the same people the same amounts every
// month under new references, and a rule that refused them only while the other batch is being
// sent would decide by timing.
import {
  appendFileSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  unlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import type { Connection } from '../client/connect.ts';
import { defaultStateDir } from '../client/quota.ts';
import type { TeamDb } from '../database/db.ts';
import * as store from '../database/ledger-store.ts';
import { holderAlive, myStart, withLock } from '../files/lock.ts';
import { JournalWriter } from '../journal/journal.ts';
import { foldJournalFile, type PayoutSnapshot } from '../journal/rows.ts';
import { sha256Hex } from './identity.ts';
import { BatchRefused } from './session.ts';
import { plural } from '../text.ts';

export interface Ledger {
  /** What identifies the account: the service's normalised base URL. */
  account: string;
  /** The folder of the account's journals. */
  dir: string;
  /** The embedded sandbox's: a temporary folder, gone with the process. */
  ephemeral: boolean;
  /**
   * The team ledger that holds the account's record (--ledger): `dir` is then this process's copy
   * of it, brought up to date by syncLedger, every line written here also written there.
   */
  team?: TeamCopy;
}

/**
 * The account a base URL names, however it is spelled: scheme and host in lower case, no default
 * port (the URL parser drops it), no trailing dot or slash, and every loopback name (`localhost`,
 * 127.0.0.0/8, `::1`) as 127.0.0.1, so `http://localhost:P` and `http://127.0.0.1:P` are one ledger.
 */
export function accountOf(baseUrl: string): string {
  const u = new URL(baseUrl);
  const host = u.hostname.replace(/\.$/, '');
  if (host === 'localhost' || host === '[::1]' || /^127(\.\d{1,3}){3}$/.test(host)) u.hostname = '127.0.0.1';
  else u.hostname = host;
  return `${u.protocol}//${u.host}${u.pathname.replace(/\/+$/, '')}`.toLowerCase();
}

/** `<root>/ledgers/<host>-<12 hex of sha256(account)>`: readable, and one folder per account. */
export function ledgerDirFor(root: string, account: string): string {
  const host = new URL(account).host.replace(/[^A-Za-z0-9.-]+/g, '_').slice(0, 60);
  return join(resolve(root), 'ledgers', `${host}-${sha256Hex(account).slice(0, 12)}`);
}

/**
 * Refuses a state folder another user could change, as ssh does for its own: the folder, its
 * `ledgers` and the account's ledger may not be symbolic links, must belong to this user and may
 * not be writable by group or others. Whoever can write there can remove a journal or a
 * reservation and so make a payout go out twice. Folders this tool creates are 0700.
 */
export function checkStateFolder(root: string, ledgerDir: string): void {
  const uid = process.getuid?.();
  for (const path of [resolve(root), join(resolve(root), 'ledgers'), ledgerDir]) {
    let st;
    try {
      st = lstatSync(path);
    } catch {
      continue; // created 0700 when first needed
    }
    const why = st.isSymbolicLink()
      ? 'is a symbolic link'
      : uid !== undefined && st.uid !== uid
        ? `belongs to another user (uid ${st.uid})`
        : (st.mode & 0o022) !== 0
          ? `is writable by ${st.mode & 0o020 ? 'its group' : 'others'} (mode ${(st.mode & 0o777).toString(8)})`
          : undefined;
    if (why)
      throw new BatchRefused(
        `the state folder ${path} ${why}: another user could change the ledger and make a payout go out twice. ` +
          `Use a folder of your own (chmod 700 ${path}, or --state-dir)`,
        'UNSAFE_STATE_FOLDER',
      );
  }
}

const ephemeral = new WeakMap<object, string>();

/**
 * The ledger of a connection. `root`: the state folder (--state-dir, a watch's "stateDir"; default
 * quota.ts defaultStateDir(), the per-user one).
 */
export function ledgerOf(conn: Pick<Connection, 'environment' | 'sandbox' | 'team'>, o: { root?: string } = {}): Ledger {
  if (conn.team) return teamLedgerOf(conn.team, conn.sandbox?.account ?? accountOf(conn.environment.baseUrl), o.root);
  const kept = conn.sandbox?.account;
  const account = kept ?? accountOf(conn.environment.baseUrl);
  if (conn.sandbox && !kept) {
    let dir = ephemeral.get(conn.sandbox);
    if (!dir) {
      // (left in the temporary folder when the process ends: the demo prints the journal's path)
      dir = mkdtempSync(join(tmpdir(), 'payout-batch-local-'));
      ephemeral.set(conn.sandbox, dir);
    }
    return { account, dir, ephemeral: true };
  }
  const root = o.root ?? defaultStateDir();
  const dir = kept ? join(resolve(root), 'ledgers', kept) : ledgerDirFor(root, account);
  checkStateFolder(root, dir);
  return { account, dir, ephemeral: false };
}

/** The account's approval policy in its ledger folder (approvals/account-policy.ts reads and writes it). */
export const POLICY_FILE_NAME = 'policy.json';

const JOURNAL_NAME = /^([0-9a-f]{16})\.journal\.jsonl$/;

export const ledgerJournalPath = (ledger: Ledger, batchId: string): string => join(ledger.dir, `${batchId.slice(0, 16)}.journal.jsonl`);
const reservePath = (ledger: Ledger, batchId: string) => join(ledger.dir, `${batchId.slice(0, 16)}.reserve.json`);

function names(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

/** The ledger's journal of a batch (a batch id or its 16-hex prefix), when there is one. */
export function findBatchJournal(ledger: Ledger, batchId: string): string | undefined {
  const p = ledgerJournalPath(ledger, batchId);
  return existsSync(p) ? p : undefined;
}

/** Whether a command's argument names a batch by its id (8 to 64 hex) rather than a file there. */
export const namesBatch = (arg: string): boolean => /^[0-9a-f]{8,64}$/i.test(arg) && !existsSync(arg);

/**
 * The results file of a batch named by its id (or the first 8 to 64 hex of it), as its journal's
 * header records it, among these journals: `status`, `retry`, `reconcile` and `report` take a
 * batch id where a results file is expected, so a person on another host of a team ledger names
 * the batch, not a path.
 */
export function resultsOfBatch(journals: string[], arg: string): string | undefined {
  if (!namesBatch(arg)) return undefined;
  const prefix = arg.toLowerCase().slice(0, 16);
  for (const j of journals)
    if (basename(j).startsWith(prefix)) {
      const results = foldJournalFile(j).folded.header?.results;
      if (results) return results;
    }
  return undefined;
}

/** Every journal of the account. */
export function accountJournals(ledger: Pick<Ledger, 'dir'>): string[] {
  return names(ledger.dir)
    .filter((n) => JOURNAL_NAME.test(n))
    .map((n) => join(ledger.dir, n));
}

/**
 * Every journal in the ledgers of these state folders (any account): for `status` and `listen`,
 * which know a results file and its payout ids, not the service it was sent to nor its batch (a
 * key names no batch: identity.ts).
 */
export function journalsIn(roots: string[]): string[] {
  // (and the copies of the team ledgers this process opened: the batches of every host)
  const out: string[] = [...teamCopies.keys()].flatMap((dir) => accountJournals({ dir }));
  for (const root of roots) {
    const base = join(resolve(root), 'ledgers');
    for (const acct of names(base)) out.push(...accountJournals({ dir: join(base, acct) }));
  }
  return [...new Set(out)];
}

// ------------------------------------------------------------------------------ the lock

/**
 * Runs `job` under the account's inter-process lock, one job at a time within this process too.
 * Waits up to a minute for another process.
 *
 * The lock is files/lock.ts (an owner record hard-linked into place: atomic; a holder that died on
 * this host is known at once from the process table, never by age). proper-lockfile was tried
 * first: it loads signal-exit 3, which re-raises SIGINT/SIGTERM when its own handler is the last
 * one left and so kills a command in the middle of its clean stop (`listen` ended by the signal
 * instead of exit 0), and it takes a lock from a live holder blocked past its stale time.
 */
export async function withLedgerLock<T>(ledger: Ledger, job: () => T | Promise<T>): Promise<T> {
  mkdirSync(ledger.dir, { recursive: true, mode: 0o700 });
  return withLock(join(ledger.dir, 'ledger.lock'), async () => job(), { waitMs: 60_000, staleMs: 60_000, purpose: 'ledger' });
}

// ------------------------------------------------------------------------------ reservations

export interface ReserveOwner {
  pid: number;
  host: string;
  startedAt: string;
  pidStart?: string;
}

interface ReserveFile {
  batchId: string;
  file: string;
  results?: string;
  command: string;
  owner: ReserveOwner;
  refs: string[];
}

export interface ReserveOptions {
  batchId: string;
  /** Absolute path of the batch file (named in the refusals of others). */
  file: string;
  results?: string;
  command: 'run' | 'retry';
  /** References this run may send under a new key: checked against every other batch. */
  fresh: Iterable<string>;
  /** References it settles with their journalled keys: reserved, not checked (they are sent already). */
  settling?: Iterable<string>;
}

export interface Reservation {
  path: string;
  /**
   * Runs `write` (the `initiating` record) under the ledger lock while this reservation is still
   * ours and holds `ref` (null: a write of the batch's own, its swap's, whose reference names the
   * batch); throws ReservationLost otherwise (nothing is written, nothing sent).
   */
  guard: (ref: string | null, write: () => void) => Promise<void>;
  release: () => void;
}

export class ReservationLost extends Error {
  override readonly name = 'ReservationLost';
}

/** A reservation on another host whose file was not touched for this long is taken to be dead. */
const RESERVE_STALE_OTHER_HOST_MS = 120_000;
const HEARTBEAT_MS = 10_000;

function readReserve(path: string): ReserveFile | undefined {
  try {
    const r = JSON.parse(readFileSync(path, 'utf8')) as ReserveFile;
    return r && typeof r.batchId === 'string' && r.owner && Array.isArray(r.refs) ? r : undefined;
  } catch {
    return undefined;
  }
}

const list = (refs: string[]) => `${refs.slice(0, 3).join(', ')}${refs.length > 3 ? ', ...' : ''}`;

/**
 * Checks, under the ledger lock, that no other batch of the account sent or is sending the fresh
 * references, and that no other process runs this batch; then reserves them until release().
 * Throws BatchRefused (exit 3: nothing was sent) naming the other batch's file and id.
 */
export async function reserveBatch(ledger: Ledger, o: ReserveOptions): Promise<Reservation> {
  const path = reservePath(ledger, o.batchId);
  const fresh = new Set(o.fresh);
  const refs = new Set([...fresh, ...(o.settling ?? [])]);
  if (ledger.team) return reserveInTeam(ledger, ledger.team, o, fresh, refs);
  const owner: ReserveOwner = { pid: process.pid, host: hostname(), startedAt: new Date().toISOString(), ...myStart() };
  const ino = await withLedgerLock(ledger, () => {
    refuseBatchesBeingSent(ledger, o, fresh, owner);
    refuseReferencesSentBefore(ledger, o, fresh);
    const body: ReserveFile = { batchId: o.batchId, file: o.file, results: o.results, command: o.command, owner, refs: [...refs] };
    const tmp = `${path}.${process.pid}.tmp`;
    writeFileSync(tmp, JSON.stringify(body) + '\n', { mode: 0o600 });
    renameSync(tmp, path);
    return statSync(path).ino;
  });
  return heldReservation(ledger, path, ino, refs);
}

/** 1. Batches being sent right now (a live process holds their reservation): this one, or one sending these references. */
function refuseBatchesBeingSent(ledger: Ledger, o: ReserveOptions, fresh: Set<string>, me: ReserveOwner): void {
  const now = Date.now();
  for (const n of names(ledger.dir)) {
    if (!n.endsWith('.reserve.json')) continue;
    const p = join(ledger.dir, n);
    const r = readReserve(p);
    if (!r || (r.owner.pid === me.pid && r.owner.host === me.host && r.owner.startedAt === me.startedAt)) continue;
    let mtime = 0;
    try {
      mtime = statSync(p).mtimeMs;
    } catch {
      continue;
    }
    const alive = holderAlive(r.owner) ?? now - mtime < RESERVE_STALE_OTHER_HOST_MS;
    if (!alive) {
      unlinkSync(p); // left by a process that is gone: what it sent is in its journal
      continue;
    }
    const who = `${r.file} (batch ${r.batchId.slice(0, 16)}, \`${r.command}\` by pid ${r.owner.pid} on ${r.owner.host} since ${r.owner.startedAt})`;
    if (r.batchId === o.batchId)
      throw new BatchRefused(
        `this batch is being sent right now by another process: ${who}. Nothing was sent. ` +
          'Wait until it ends, then run the command again (it continues from the journal).',
        'batch-in-progress',
      );
    const overlap = r.refs.filter((x) => fresh.has(x));
    if (overlap.length)
      throw new BatchRefused(
        `${plural(overlap.length, 'reference')} of this file (${list(overlap)}) are being sent right now by another batch, ${who}. ` +
          'Nothing was sent. When it has ended, run again: the references it created are then refused as sent, the others go.',
        'references-being-sent',
      );
  }
}

/** A reference another batch of the account sent: created there, or of an outcome not known yet. */
export interface SentElsewhere {
  ref: string;
  /** created: already paid at this account (that batch's payout); otherwise sent, outcome not known yet. */
  phase: 'created' | 'initiating' | 'unknown' | 'conflict';
  batchId: string;
  /** The batch file, its results, and when that batch was first run (its journal's header). */
  file: string;
  results?: string;
  since?: string;
  /** That batch's payout, when created. */
  payout?: PayoutSnapshot;
}

/**
 * The references among `refs` that another batch's journal in the account's ledger shows sent
 * (created, or of unknown outcome): a reference is paid once per account, whatever the batch or
 * its --batch-id. A refused one (`rejected`) is not: it may be sent again, as `retry` would.
 */
export function sentByOtherBatches(ledger: Ledger, batchId: string, refs: Set<string>): Map<string, SentElsewhere> {
  const out = new Map<string, SentElsewhere>();
  if (!refs.size) return out;
  const own = ledgerJournalPath(ledger, batchId);
  for (const j of accountJournals(ledger)) {
    if (j === own) continue;
    const { folded } = foldJournalFile(j);
    const h = folded.header;
    if (h?.batchId === batchId) continue;
    for (const s of folded.rows.values()) {
      if (s.phase === 'none' || s.phase === 'rejected' || !refs.has(s.ref) || out.get(s.ref)?.phase === 'created') continue;
      out.set(s.ref, {
        ref: s.ref,
        phase: s.phase,
        batchId: h?.batchId ?? '?',
        file: h?.file ?? j,
        ...(h?.results ? { results: h.results } : {}),
        ...(h?.createdAt ? { since: h.createdAt } : {}),
        ...(s.payout ? { payout: s.payout } : {}),
      });
    }
  }
  return out;
}

/** Where a reference was sent, in words: "already paid at this account (payout ..., batch ...)". */
export function sentElsewhereText(x: SentElsewhere): string {
  const batch = `batch ${x.batchId.slice(0, 16)}, ${x.file}${x.results ? `, results ${x.results}` : ''}${x.since ? `, first run ${x.since.slice(0, 10)}` : ''}`;
  if (x.phase === 'created') return `already paid at this account (payout ${x.payout?.payoutRef ?? x.payout?.id}, ${batch})`;
  if (x.phase === 'conflict') return `already sent at this account with other content, answered 409 (${batch})`;
  return `already sent at this account, outcome not known yet (${batch}): that batch settles it`;
}

/**
 * 2. Batches sent before (their journals): a reference created, or whose outcome is not known
 * yet, is not sent again under another batch, --batch-id or not: paying the same person again
 * takes a new reference.
 */
function refuseReferencesSentBefore(ledger: Ledger, o: ReserveOptions, fresh: Set<string>): void {
  const sent = [...sentByOtherBatches(ledger, o.batchId, fresh).values()];
  if (!sent.length) return;
  const first = sent[0]!;
  const who = `${first.file} (batch ${first.batchId.slice(0, 16)}${first.results ? `, results ${first.results}` : ''})`;
  const paid = sent.filter((x) => x.phase === 'created').length;
  throw new BatchRefused(
    `${plural(sent.length, 'reference')} of this file (${list(sent.map((x) => x.ref))}) ` +
      `were already sent by another batch, ${who}${paid ? `: ${paid} already paid at this account` : ''}. Nothing was sent. ` +
      'A reference is paid once per account, whatever the file or its --batch-id: to pay the same person again, give the row a new reference. ' +
      'To re-send failed rows of that batch, edit its results file and run `payout-batch retry` on it.',
    'references-sent-by-another-batch',
  );
}

/** The reservation written at `path` (inode `ino`), touched while held so another host sees it alive. */
function heldReservation(ledger: Ledger, path: string, ino: number, refs: Set<string>): Reservation {
  const beat = setInterval(() => {
    const t = new Date();
    try {
      utimesSync(path, t, t);
    } catch {
      /* gone: guard() says so */
    }
  }, HEARTBEAT_MS);
  beat.unref();
  let released = false;
  return {
    path,
    guard: async (ref, write) => {
      await withLedgerLock(ledger, () => {
        let st;
        try {
          st = statSync(path);
        } catch {
          st = undefined;
        }
        if (released || !st || st.ino !== ino)
          throw new ReservationLost(
            `the reservation of this batch in ${ledger.dir} was removed: nothing more is sent; run again to continue`,
          );
        if (ref !== null && !refs.has(ref)) throw new ReservationLost(`reference ${ref} is not in this run's reservation: not sent`);
        write();
      });
    },
    release: () => {
      if (released) return;
      released = true;
      clearInterval(beat);
      try {
        if (statSync(path).ino === ino) unlinkSync(path);
      } catch {
        /* gone */
      }
    },
  };
}

// ------------------------------------------------------------------------------ the team ledger

/**
 * A team ledger's record of one account, as this process sees it (src/database, README "A team
 * ledger"): a private folder holding a copy of the account's journals, the id of the last line
 * copied, and the lines this process wrote that the database does not hold yet, written in order,
 * one write at a time (`chain`).
 */
export interface TeamCopy {
  db: TeamDb;
  account: string;
  dir: string;
  synced: number;
  pending: { batch: string; line: string }[];
  chain: Promise<void>;
  /** The copy's update in progress: updates run one at a time (each line is copied once). */
  syncing: Promise<void>;
  /** A write to the database failed: nothing more is sent (guard throws). */
  failed?: Error;
}

/** The copies this process holds, by folder (openJournal finds a journal's copy by its folder). */
const teamCopies = new Map<string, TeamCopy>();

/**
 * The copy of an account's record for this process: `<state root>/team/<random>/` (0700, like the
 * file ledger: it holds beneficiaries and account numbers), removed when the process exits; the
 * copies of processes of this host that died (kill -9) are removed by the next one.
 */
function teamLedgerOf(db: TeamDb, account: string, root = defaultStateDir()): Ledger {
  let copy = [...teamCopies.values()].find((c) => c.db === db && c.account === account);
  if (!copy) {
    const base = join(resolve(root), 'team');
    checkStateFolder(root, base);
    mkdirSync(base, { recursive: true, mode: 0o700 });
    removeDeadCopies(base);
    const dir = mkdtempSync(join(base, 'copy-'));
    writeFileSync(join(dir, 'owner.json'), JSON.stringify({ pid: process.pid, host: hostname(), ...myStart() }), { mode: 0o600 });
    const made: TeamCopy = (copy = { db, account, dir, synced: 0, pending: [], chain: Promise.resolve(), syncing: Promise.resolve() });
    teamCopies.set(dir, made);
    db.beforeClose(() => writePending(made));
    process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
  }
  return { account, dir: copy.dir, ephemeral: false, team: copy };
}

/** Removes the copies whose process, on this host, is gone. */
function removeDeadCopies(base: string): void {
  for (const n of names(base)) {
    let owner: { pid: number; host: string; pidStart?: string };
    try {
      owner = JSON.parse(readFileSync(join(base, n, 'owner.json'), 'utf8')) as typeof owner;
    } catch {
      continue;
    }
    if (holderAlive(owner) === false) rmSync(join(base, n), { recursive: true, force: true });
  }
}

/** Brings this process's copy of the account's journals up to date from the database (a file ledger: nothing). */
export function syncLedger(ledger: Ledger): Promise<void> {
  const c = ledger.team;
  if (!c) return Promise.resolve();
  const run = c.syncing.then(async () => {
    for (const l of await store.linesAfter(c.db, c.account, c.synced)) {
      // (this process's own lines are in its copy already: they were written here first)
      if (l.origin !== c.db.holder) appendFileSync(join(c.dir, `${l.batch.slice(0, 16)}.journal.jsonl`), `${l.line}\n`, { mode: 0o600 });
      c.synced = l.id;
    }
    // the account's approval policy, where a file ledger keeps it (approvals/account-policy.ts)
    const policy = await store.latestPolicy(c.db, c.account);
    if (policy) writeFileSync(join(c.dir, POLICY_FILE_NAME), policy, { mode: 0o600 });
  });
  c.syncing = run.catch(() => undefined);
  return run;
}

/**
 * Every account's copy of a team ledger, brought up to date: for `listen`, whose deliveries name a
 * payout, not its account (the journal that holds it is then found among them: ops/apply.ts).
 */
export async function syncTeamLedgers(db: TeamDb): Promise<void> {
  for (const account of await store.accounts(db)) await syncLedger(teamLedgerOf(db, account));
}

/**
 * Opens a journal for appending. Inside a team ledger's copy, every line is also written to the
 * database (in order, soon after; an `initiating` line before its request leaves: guard).
 */
export function openJournal(path: string): JournalWriter {
  const c = teamCopies.get(dirname(resolve(path)));
  if (!c) return JournalWriter.open(path);
  const batch = basename(path).slice(0, 16);
  return JournalWriter.open(path, {
    onAppend: (line) => {
      c.pending.push({ batch, line });
      if (c.pending.length === 1) setImmediate(() => void writePending(c).catch(() => undefined));
    },
  });
}

/**
 * At the end of a run: every line this process wrote is in the team ledger, or this throws (the
 * database was lost on the way: the run is not done until another records it; a file ledger: nothing).
 */
export async function settleLedger(ledger: Ledger): Promise<void> {
  const c = ledger.team;
  if (!c) return;
  await writePending(c);
  if (c.failed) throw c.failed;
}

/** Writes the pending lines, after any write in progress. */
const writePending = (c: TeamCopy): Promise<void> => inOrder(c, () => writeNow(c));

/** Writes the pending lines now (inside an inOrder job); a failure is kept (`failed`) and thrown. */
async function writeNow(c: TeamCopy): Promise<void> {
  try {
    await store.appendLines(c.db, c.account, c.db.holder, c.pending.splice(0));
  } catch (e) {
    c.failed ??= e as Error;
    throw e;
  }
}

/** Runs `job` after the copy's writes in progress; the next one waits for it, failed or not. */
function inOrder<T>(c: TeamCopy, job: () => Promise<T>): Promise<T> {
  const run = c.chain.then(job);
  c.chain = run.then(
    () => undefined,
    () => undefined,
  );
  return run;
}

/**
 * reserveBatch on a team ledger: in one transaction under the account's advisory lock, the runs
 * and reservations of dead processes cleared, this batch not sent by another live process, the
 * fresh references neither held by another live batch nor sent by one (the journals of every
 * host), then the references inserted: their primary key refuses a second holder whatever was read.
 */
async function reserveInTeam(ledger: Ledger, c: TeamCopy, o: ReserveOptions, fresh: Set<string>, refs: Set<string>): Promise<Reservation> {
  const who = (r: store.BatchRun) =>
    `${r.file} (batch ${r.batchId.slice(0, 16)}, \`${r.command}\` by pid ${r.pid} on ${r.host} since ${r.startedAt})`;
  const me = {
    account: c.account,
    batchId: o.batchId,
    file: o.file,
    results: o.results,
    command: o.command,
    host: hostname(),
    pid: process.pid,
  };
  await c.db.tx(
    async (q) => {
      await store.clearDeadHolders(q, c.account);
      const run = await store.runOf(q, c.account, o.batchId);
      if (run && run.holder !== c.db.holder)
        throw new BatchRefused(
          `this batch is being sent right now by another process: ${who(run)}. Nothing was sent. ` +
            'Wait until it ends, then run the command again (it continues from the journal).',
          'batch-in-progress',
        );
      const held = await store.heldElsewhere(q, c.account, o.batchId, [...fresh]);
      if (held.length)
        throw new BatchRefused(
          `${plural(held.length, 'reference')} of this file (${list(held.map((h) => h.reference))}) are being sent right now by another batch` +
            `${held[0]!.run ? `, ${who(held[0]!.run)}` : ''}. Nothing was sent. ` +
            'When it has ended, run again: the references it created are then refused as sent, the others go.',
          'references-being-sent',
        );
      await syncLedger(ledger);
      refuseReferencesSentBefore(ledger, o, fresh);
      try {
        await store.reserve(q, c.db, { ...me, refs: [...refs] });
      } catch (e) {
        if ((e as { code?: string }).code !== '23505') throw e;
        throw new BatchRefused(
          'references of this file were reserved by another batch at the same moment. Nothing was sent. Run again.',
          'references-being-sent',
        );
      }
    },
    { lock: c.account },
  );
  let released = false;
  return {
    path: `${c.db.where}#${c.account}/${o.batchId.slice(0, 16)}`,
    guard: (ref, write) =>
      inOrder(c, () =>
        c.db.tx(
          async (q) => {
            if (c.failed)
              throw new ReservationLost(`the ledger ${c.db.where} could not be written (${c.failed.message}): nothing more is sent`);
            if (released || !(await store.stillHeld(q, c.db.holder, c.account, o.batchId, ref)))
              throw new ReservationLost(
                ref === null || released
                  ? `the reservation of this batch in the ledger ${c.db.where} was removed: nothing more is sent; run again to continue`
                  : `reference ${ref} is not in this run's reservation: not sent`,
              );
            write();
            // the `initiating` line (and any line before it) is in the database before the request leaves
            await store.appendLines(q, c.account, c.db.holder, c.pending.splice(0));
          },
          { lock: c.account },
        ),
      ),
    release: () => {
      if (released) return;
      released = true;
      // (a release that fails leaves rows of a holder about to be gone: others clear them)
      void inOrder(c, async () => {
        await writeNow(c);
        await store.release(c.db, c.db.holder, c.account, o.batchId);
      }).catch(() => undefined);
    },
  };
}
