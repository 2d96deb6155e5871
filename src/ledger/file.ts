// The file ledger (README.md beside this file): under its lock the refusals and the reservation are one step, and an
// `initiating` line is fsynced only while the reservation is still ours: two processes never both send a reference.
import { lstatSync, mkdirSync, readdirSync, readFileSync, statSync, unlinkSync, utimesSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { basename, join, resolve } from 'node:path';
import { writeFileAtomic } from '../files/atomic.ts';
import { attempt, unlessMissing } from '../files/attempt.ts';
import { holderAlive, ownerRecord, withLock, type LockOwner } from '../files/lock.ts';
import { whyUntrusted } from '../files/trust.ts';
import { JournalWriter, scanAppended, scanJournal, type JournalEvent } from '../journal/journal.ts';
import {
  BatchRefused,
  batchInProgress,
  batchKey,
  countUnapproved,
  referencesBeingSent,
  refuseReferencesSentBefore,
  reservationLost,
  type BatchRunner,
  type ClaimAnswer,
  type JournalAppender,
  type Ledger,
  type LinesRead,
  type Reservation,
  type ReserveOptions,
  type UnapprovedPayout,
  type UnapprovedCount,
  type UnapprovedTake,
} from './account-ledger.ts';

/** `<root>/ledgers/<host>-<12 hex of sha256(account)>` */
export function ledgerDirFor(root: string, account: string): string {
  const host = new URL(account).host.replace(/[^A-Za-z0-9.-]+/g, '_').slice(0, 60);
  return join(resolve(root), 'ledgers', `${host}-${createHash('sha256').update(account).digest('hex').slice(0, 12)}`);
}

/** Why a state folder is refused: another user could change it, as ssh judges, remove a journal and make a payout go out twice. */
export function unsafeStateFolder(root: string, ledgerDir?: string): string | undefined {
  for (const path of [resolve(root), join(resolve(root), 'ledgers'), ...(ledgerDir ? [ledgerDir] : [])]) {
    let st;
    try {
      st = unlessMissing(() => lstatSync(path));
    } catch (e) {
      // (an lstat that fails otherwise is no folder nobody made yet: its owner and mode cannot be judged)
      return `the state folder ${path} cannot be read (${(e as NodeJS.ErrnoException).code ?? (e as Error).message}): whether another user could change the ledger cannot be told. Make it a folder of your own (chmod 700 ${path}, or --state-dir)`;
    }
    if (!st) continue; // created 0700 when first needed
    const why = whyUntrusted(st);
    if (why)
      return (
        `the state folder ${path} ${why}: another user could change the ledger and make a payout go out twice. ` +
        `Use a folder of your own (chmod 700 ${path}, or --state-dir)`
      );
  }
  return undefined;
}

export const batchOfJournalName = (name: string): string | undefined => /^([0-9a-f]{16})\.journal\.jsonl$/.exec(basename(name))?.[1];

/** None when it does not exist; any other error refuses: a ledger read as empty would send again what it holds as sent. */
export function names(dir: string): string[] {
  const refused = (code: string) =>
    new BatchRefused(
      `cannot list ${dir} (${code}), a folder of the file ledger: the batches it holds cannot be read, and none is taken as never sent. ` +
        'Nothing was sent. Make it a folder this user can read and list (run as its owner, or chmod 700 it), then run the command again',
      'ledger-unlistable',
    );
  return unlessMissing(() => readdirSync(dir), refused) ?? [];
}

type ReserveFile = Pick<BatchRunner, 'batchId' | 'file' | 'command'> & { results?: string; owner: LockOwner; refs: string[] };

const RESERVE_STALE_OTHER_HOST_MS = 120_000;
const HEARTBEAT_MS = 10_000;

export class FileLedger implements Ledger {
  readonly lost = undefined;

  constructor(
    readonly account: string,
    readonly dir: string,
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

  /** The size is taken before the lines are read: a line appended meanwhile is read again next time (twice is once), never skipped. */
  async read(batchId: string, onEvent: (e: JournalEvent) => void, from = 0): Promise<LinesRead> {
    const path = this.journalOf(batchId);
    if (from > 0) return { ...scanAppended(path, from, onEvent), lastWriteMs: 0 };
    const st = statSync(path, { throwIfNoEntry: false }); // (none: a new journal)
    return { ...scanJournal(path, onEvent), next: st?.size ?? 0, lastWriteMs: st?.mtimeMs ?? 0 };
  }

  open(batchId: string): JournalAppender {
    return JournalWriter.open(this.journalOf(batchId));
  }

  async flush(): Promise<void> {}

  /** Waits up to a minute for another process; a dead holder on this host is known from the process table, never by age. */
  lock<T>(name: string, job: () => T | Promise<T>): Promise<T> {
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    return withLock(join(this.dir, `${name}.lock`), async () => job(), { waitMs: 60_000, staleMs: 60_000, purpose: name });
  }

  async reserve(o: ReserveOptions): Promise<Reservation> {
    const path = join(this.dir, `${batchKey(o.batchId)}.reserve.json`);
    const fresh = new Set(o.fresh);
    const refs = new Set([...fresh, ...(o.settling ?? [])]);
    const owner = ownerRecord();
    const ino = await this.lock('ledger', async () => {
      for (const { r, run } of liveRuns(this.dir, true)) {
        if (r.owner.pid === owner.pid && r.owner.host === owner.host && r.owner.startedAt === owner.startedAt) continue;
        if (r.batchId === o.batchId) throw batchInProgress(run);
        const overlap = r.refs.filter((x) => fresh.has(x));
        if (overlap.length) throw referencesBeingSent(overlap, run);
      }
      await refuseReferencesSentBefore(this, o, fresh);
      const body: ReserveFile = { batchId: o.batchId, file: o.file, results: o.results, command: o.command, owner, refs: [...refs] };
      await writeFileAtomic(path, JSON.stringify(body) + '\n', { mode: 0o600 }); // (fsynced: a power cut leaves it whole, a dead owner's)
      return statSync(path).ino;
    });
    // touched while held, so that another host sees it alive (gone: guard() says so)
    const beat = setInterval(() => attempt(() => utimesSync(path, new Date(), new Date())), HEARTBEAT_MS);
    beat.unref();
    let released = false;
    return {
      guard: async (ref, write) => {
        await this.lock('ledger', () => {
          if (released || attempt(() => statSync(path))?.ino !== ino) throw reservationLost(this.dir, null);
          if (ref !== null && !refs.has(ref)) throw reservationLost(this.dir, ref);
          write();
        });
      },
      release: async () => {
        if (released) return;
        released = true;
        clearInterval(beat);
        if (attempt(() => statSync(path))?.ino === ino) attempt(() => unlinkSync(path)); // (else gone)
      },
    };
  }

  async unapproved(day: string, take?: UnapprovedTake): Promise<UnapprovedCount> {
    const path = join(this.dir, `unapproved-${day}.jsonl`);
    const count = () => {
      const text = readDay(path);
      // (a line a full disk tore was never taken: its append threw, nothing was sent; the next starts on a line of its own)
      const recorded = text.split('\n').flatMap((l) => attempt(() => [JSON.parse(l) as UnapprovedPayout]) ?? []);
      const r = countUnapproved(recorded, take);
      if (!r.add.length) return r;
      // fsynced before the payouts it counts are sent: a power cut must not give the day's allowance again
      const day = JournalWriter.open(path);
      try {
        for (const p of r.add) day.append({ t: 'unapproved', ...p });
      } finally {
        day.close();
      }
      return r;
    };
    return take ? this.lock('ledger', count) : count();
  }

  /** The watch's rename into processing/ is a file ledger's only claim. */
  claim = async (): Promise<ClaimAnswer> => ({ held: true });
  claimAbandoned = async (): Promise<boolean | undefined> => undefined;
  endClaim = async (): Promise<void> => {};
}

/** The runs whose reservations are in a ledger folder and alive; `removeGone` (under its lock): those of processes gone, whose sends are in their journals. */
export function liveRuns(dir: string, removeGone = false) {
  const now = Date.now();
  return names(dir).flatMap((n) => {
    const p = join(dir, n);
    const r = n.endsWith('.reserve.json') ? readReserve(p) : undefined; // (none: released meanwhile)
    const mtime = r && statSync(p, { throwIfNoEntry: false })?.mtimeMs;
    if (!r || mtime === undefined) return [];
    if (holderAlive(r.owner) ?? now - mtime < RESERVE_STALE_OTHER_HOST_MS)
      return [{ r, run: { ...r.owner, batchId: r.batchId, file: r.file, command: r.command } }];
    if (removeGone) unlinkSync(p);
    return [];
  });
}

/**
 * Undefined when gone; one it cannot read or parse refuses: reserve() writes it whole (renamed in place, fsynced), so
 * such a file is not one a run of this tool left, and its run, if any, cannot be known to be over.
 */
function readReserve(path: string): ReserveFile | undefined {
  const text = unlessMissing(
    () => readFileSync(path, 'utf8'),
    (code) => reserveRefused(`cannot read ${path} (${code})`, path),
  );
  if (text === undefined) return undefined;
  const r = attempt(() => JSON.parse(text) as ReserveFile);
  if (typeof r?.batchId === 'string' && r.owner && Array.isArray(r.refs)) return r;
  throw reserveRefused(`${path} is not a reservation this tool wrote`, path);
}

const reserveRefused = (what: string, path: string) =>
  new BatchRefused(
    `${what}, a run's reservation of its references: another batch may be sending them. Nothing was sent. ` +
      `If no payout-batch run or retry of this account is running (on any host sharing the folder), remove it (rm ${path}), then run again`,
    'reservation-unreadable',
  );

/** Only a missing file is none yet today: any other error read as none would give the day's allowance again. */
function readDay(path: string): string {
  const refused = (code: string) =>
    new BatchRefused(
      `cannot read ${path} (${code}), this account's count of payouts sent without approval today: ` +
        'nothing is sent without approval until it is a file this user can read (run as its owner), or have the plan approved ' +
        '(payout-batch plan FILE --out PLAN, then approve and run --plan)',
      'unapproved-unreadable',
    );
  return unlessMissing(() => readFileSync(path, 'utf8'), refused) ?? '';
}
