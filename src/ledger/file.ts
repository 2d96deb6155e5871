// The file ledger: the journals of every batch sent to one account, in one folder per user,
// whatever folder the batch files sit in (README.md beside this file).
//
//   <state root>/ledgers/<host>-<hash of the account>/
//       <batch16>.journal.jsonl   one journal per batch (journal/journal.ts), named by its identity
//       <batch16>.reserve.json    the references a live process is sending (a reservation)
//       ledger.lock               the inter-process lock of the account (files/lock.ts)
//       unapproved-<day>.jsonl    payouts sent without approval that UTC day (the host's allowance, beside its policy)
//
// Under the lock: the check that no other process runs this batch and that no other batch sent or
// is sending its references, with their reservation, as one step; and every `initiating` line
// afterwards, written (fsynced) only while the reservation is still this process's own. Two
// processes can never both send a reference.
import { appendFileSync, lstatSync, mkdirSync, readdirSync, readFileSync, statSync, unlinkSync, utimesSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { hostname } from 'node:os';
import { join, resolve } from 'node:path';
import { writeFileAtomicSync } from '../files/atomic.ts';
import { holderAlive, myStart, withLock } from '../files/lock.ts';
import { whyUntrusted } from '../files/trust.ts';
import { JournalWriter, readAppended, scanJournal, type JournalEvent } from '../journal/journal.ts';
import {
  BatchRefused,
  ReservationLost,
  batchInProgress,
  batchKey,
  batchOfJournalName,
  countUnapproved,
  referencesBeingSent,
  refuseReferencesSentBefore,
  type ClaimAnswer,
  type JournalAppender,
  type Ledger,
  type LinesRead,
  type Reservation,
  type ReserveOptions,
  type UnapprovedPayout,
  type UnapprovedTake,
} from './account-ledger.ts';

/** `<root>/ledgers/<host>-<12 hex of sha256(account)>`: readable, and one folder per account. */
export function ledgerDirFor(root: string, account: string): string {
  const host = new URL(account).host.replace(/[^A-Za-z0-9.-]+/g, '_').slice(0, 60);
  return join(resolve(root), 'ledgers', `${host}-${createHash('sha256').update(account).digest('hex').slice(0, 12)}`);
}

/**
 * Refuses a state folder another user could change, as ssh does for its own: the folder, its
 * `ledgers` and the account's ledger may not be symbolic links, must belong to this user and may
 * not be writable by group or others. Whoever can write there can remove a journal or a
 * reservation and so make a payout go out twice. Folders this tool creates are 0700.
 */
export function checkStateFolder(root: string, ledgerDir: string): void {
  const why = unsafeStateFolder(root, ledgerDir);
  if (why) throw new BatchRefused(why, 'UNSAFE_STATE_FOLDER');
}

/** Why checkStateFolder refuses the state folder (and the ledger's folder, when named), or undefined. */
export function unsafeStateFolder(root: string, ledgerDir?: string): string | undefined {
  for (const path of [resolve(root), join(resolve(root), 'ledgers'), ...(ledgerDir ? [ledgerDir] : [])]) {
    let st;
    try {
      st = lstatSync(path);
    } catch {
      continue; // created 0700 when first needed
    }
    const why = whyUntrusted(st);
    if (why)
      return (
        `the state folder ${path} ${why}: another user could change the ledger and make a payout go out twice. ` +
        `Use a folder of your own (chmod 700 ${path}, or --state-dir)`
      );
  }
  return undefined;
}

/** A folder's entries; none when it cannot be read. */
export function names(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

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

/** The ledger of one account in a folder of this user's. */
export class FileLedger implements Ledger {
  readonly lost = undefined;

  constructor(
    readonly account: string,
    /** The folder of the account's journals. */
    readonly dir: string,
    readonly ephemeral = false,
  ) {}

  get where(): string {
    return this.dir;
  }

  journalOf(batchId: string): string {
    return join(this.dir, `${batchKey(batchId)}.journal.jsonl`);
  }

  async batches(): Promise<string[]> {
    return names(this.dir).flatMap((n) => batchOfJournalName(n) ?? []);
  }

  /**
   * From the start, the size and time are taken before the lines are read, so a line another
   * process appends meanwhile is at or after `next` and the next read hands it again (status lines
   * apply forward only: twice is the same as once), where taking it after could skip it.
   */
  async read(batchId: string, onEvent: (e: JournalEvent) => void, from = 0): Promise<LinesRead> {
    const path = this.journalOf(batchId);
    if (from > 0) {
      const { events, next, skipped } = readAppended(path, from);
      events.forEach(onEvent);
      return { events: events.length, skipped, tornTail: false, next, lastWriteMs: 0 };
    }
    let next = 0;
    let lastWriteMs = 0;
    try {
      const st = statSync(path);
      next = st.size;
      lastWriteMs = st.mtimeMs;
    } catch {
      // a new journal
    }
    return { ...scanJournal(path, onEvent), next, lastWriteMs };
  }

  open(batchId: string): JournalAppender {
    return JournalWriter.open(this.journalOf(batchId));
  }

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
  private locked<T>(job: () => T | Promise<T>): Promise<T> {
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    return withLock(join(this.dir, 'ledger.lock'), async () => job(), { waitMs: 60_000, staleMs: 60_000, purpose: 'ledger' });
  }

  async reserve(o: ReserveOptions): Promise<Reservation> {
    const path = join(this.dir, `${batchKey(o.batchId)}.reserve.json`);
    const fresh = new Set(o.fresh);
    const refs = new Set([...fresh, ...(o.settling ?? [])]);
    const owner: ReserveOwner = { pid: process.pid, host: hostname(), startedAt: new Date().toISOString(), ...myStart() };
    const ino = await this.locked(async () => {
      this.refuseBatchesBeingSent(o, fresh, owner);
      await refuseReferencesSentBefore(this, o, fresh);
      const body: ReserveFile = { batchId: o.batchId, file: o.file, results: o.results, command: o.command, owner, refs: [...refs] };
      writeFileAtomicSync(path, JSON.stringify(body) + '\n', { mode: 0o600 });
      return statSync(path).ino;
    });
    return this.held(path, ino, refs);
  }

  /** Batches being sent right now (a live process holds their reservation): this one, or one sending these references. */
  private refuseBatchesBeingSent(o: ReserveOptions, fresh: Set<string>, me: ReserveOwner): void {
    const now = Date.now();
    for (const n of names(this.dir)) {
      if (!n.endsWith('.reserve.json')) continue;
      const p = join(this.dir, n);
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
      const run = { ...r.owner, batchId: r.batchId, file: r.file, command: r.command };
      if (r.batchId === o.batchId) throw batchInProgress(run);
      const overlap = r.refs.filter((x) => fresh.has(x));
      if (overlap.length) throw referencesBeingSent(overlap, run);
    }
  }

  /** The reservation written at `path` (inode `ino`), touched while held so another host sees it alive. */
  private held(path: string, ino: number, refs: Set<string>): Reservation {
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
      guard: async (ref, write) => {
        await this.locked(() => {
          let st;
          try {
            st = statSync(path);
          } catch {
            st = undefined;
          }
          if (released || !st || st.ino !== ino)
            throw new ReservationLost(
              `the reservation of this batch in ${this.dir} was removed: nothing more is sent; run again to continue`,
            );
          if (ref !== null && !refs.has(ref)) throw new ReservationLost(`reference ${ref} is not in this run's reservation: not sent`);
          write();
        });
      },
      release: async () => {
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

  async unapproved(day: string, take?: UnapprovedTake): Promise<{ totals: Record<string, string>; taken: boolean }> {
    const path = join(this.dir, `unapproved-${day}.jsonl`);
    const count = () => {
      let text = '';
      try {
        text = readFileSync(path, 'utf8');
      } catch {
        // none yet today
      }
      const r = countUnapproved(
        text.split('\n').flatMap((l) => (l ? [JSON.parse(l) as UnapprovedPayout] : [])),
        take,
      );
      if (r.add.length) appendFileSync(path, r.add.map((p) => JSON.stringify(p) + '\n').join(''), { mode: 0o600 });
      return r;
    };
    return take ? this.locked(count) : count();
  }

  /** A folder's claim (watch/claims.ts: the rename into processing/) is the only claim of a file ledger. */
  async claim(): Promise<ClaimAnswer> {
    return { held: true };
  }

  async claimAbandoned(): Promise<boolean | undefined> {
    return undefined;
  }

  async endClaim(): Promise<void> {}
}
