// The Ledger interface and the refusals its two implementations share (README.md beside this file).
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { Dec } from '../money.ts';
import type { LockOwner } from '../files/lock.ts';
import { plural } from '../text.ts';
import type { JournalEvent, JournalScan } from '../journal/journal.ts';
import { applyEvent, emptyFold, type FoldedJournal, type JournalLine, type PayoutSnapshot } from '../journal/lines.ts';

/** A refusal before anything is sent (exit 3), with a message for the user. */
export class BatchRefused extends Error {
  override readonly name = 'BatchRefused';
  constructor(
    message: string,
    readonly reason: string,
  ) {
    super(message);
  }
}

/** The reservation is no longer this process's, or the ledger cannot record: nothing more is sent. */
export class ReservationLost extends Error {
  override readonly name = 'ReservationLost';
}

/** `ref` null: the batch's reservation is gone (`where`: the folder, or the ledger); else it does not hold `ref`. */
export const reservationLost = (where: string, ref: string | null): ReservationLost =>
  new ReservationLost(
    ref === null
      ? `the reservation of this batch in ${where} was removed: nothing more is sent; run again to continue`
      : `reference ${ref} is not in this run's reservation: not sent`,
  );

export interface JournalAppender {
  /** For messages: a file, or the database and the batch. */
  readonly path: string;
  /** `sync`: durable before it returns where the ledger can (the file: fsync). */
  append(event: JournalEvent, options?: { sync?: boolean }): void;
  close(): void;
}

export interface LinesRead extends JournalScan {
  next: number;
  /** 0 for a batch never written. */
  lastWriteMs: number;
}

export interface ReserveOptions {
  batchId: string;
  /** Absolute, named in the refusals of others. */
  file: string;
  results?: string;
  command: 'run' | 'retry';
  /** References this run may send under a new key: checked against every other batch. */
  fresh: Iterable<string>;
  /** References it settles with their journalled keys: reserved, not checked (they are sent already). */
  settling?: Iterable<string>;
  /** It screens its payees: a fresh reference another batch's screening held is screened again, not refused. */
  screens?: boolean;
}

export interface Reservation {
  /** Runs `write` under the account's lock while this holds `ref` (null: the batch's own line), durable on return; else ReservationLost. */
  guard: (ref: string | null, write: () => void) => Promise<void>;
  release: () => Promise<void>;
}

/** A `watch`'s claim of an inbox file's content. */
export interface WatchClaim {
  account: string;
  sha256: string;
  /** processing/<claim> on the host that claimed it. */
  claim: string;
  name: string;
  /** The process that holds it: alive while it holds its session lock. */
  holder: string;
  host: string;
  state: 'running' | 'done' | 'failed';
  claimedAt: string;
  endedAt?: string;
}

export type ClaimRequest = Pick<WatchClaim, 'account' | 'sha256' | 'claim' | 'name' | 'host'>;

/** `replaced`: taken from a holder that is gone, or from an ended claim that may run again; `by`: another's claim. */
export type ClaimAnswer = { held: true; replaced?: WatchClaim } | { held: false; by: WatchClaim };

/** The promises of each member are in README.md's table. */
export interface Ledger {
  readonly account: string;
  /** For messages: the account's folder, or the database without its password. */
  readonly where: string;
  /** A database lost mid-command: nothing more is claimed or sent. */
  readonly lost: Error | undefined;
  journalOf(batchId: string): string;
  /** By the first 16 hex of their id. */
  batches(): Promise<string[]>;
  /** A batch's lines from position `from` (0: the first), in order, as they are now. */
  read(batchId: string, onEvent: (e: JournalEvent) => void, from?: number): Promise<LinesRead>;
  open(batchId: string): JournalAppender;
  /** Once every line appended is durable (a file ledger's are, synced when appended); throws when one could not be written. */
  flush(): Promise<void>;
  reserve(o: ReserveOptions): Promise<Reservation>;
  unapproved(day: string, take?: UnapprovedTake): Promise<UnapprovedCount>;
  /** One claim per content on a ledger shared by hosts; a file ledger holds none (always held). */
  claim(ask: ClaimRequest, o?: { mayRetake?: (ended: WatchClaim) => boolean | Promise<boolean> }): Promise<ClaimAnswer>;
  /** Ended, or its process gone; undefined when the ledger holds no claim of it. */
  claimAbandoned(sha256: string, claim: string): Promise<boolean | undefined>;
  endClaim(sha256: string, claim: string, state: 'done' | 'failed'): Promise<void>;
  lock<T>(name: string, job: () => Promise<T>): Promise<T>;
}

/** A ledger every host of the account shares keeps its approval policy (open.ts `policyKeeperOf`). */
export interface PolicyKeeper extends Pick<Ledger, 'account' | 'where'> {
  /** As last set. */
  policy(): Promise<{ text: string } | undefined>;
  /** A new version; the earlier ones stay. */
  setPolicy(text: string): Promise<void>;
}

export interface UnapprovedPayout {
  reference: string;
  currency: string;
  amount: string;
}

/** `above`: the most each currency may total (a currency not named: none). */
export interface UnapprovedTake {
  payouts: UnapprovedPayout[];
  above: Record<string, string>;
}

/** The day's totals with `take` added when it fits (each reference once): `add`, what to record. */
export function countUnapproved(recorded: UnapprovedPayout[], take?: UnapprovedTake) {
  const was = new Map(recorded.map((p) => [p.reference, p]));
  // (a reference counted at less, or in another currency, does not go as counted: a rejected row edited, sent again)
  const more = take?.payouts.some(
    (p) => was.has(p.reference) && (was.get(p.reference)!.currency !== p.currency || new Dec(p.amount).gt(was.get(p.reference)!.amount)),
  );
  const seen = new Set(was.keys());
  const add = (take?.payouts ?? []).filter((p) => !seen.has(p.reference) && seen.add(p.reference));
  const sum = (list: UnapprovedPayout[]) => {
    const t = new Map<string, Dec>();
    for (const p of list) t.set(p.currency, (t.get(p.currency) ?? new Dec(0)).plus(new Dec(p.amount)));
    return t;
  };
  const after = sum([...recorded, ...add]);
  const taken =
    !!take && !more && add.every((p) => take.above[p.currency] !== undefined && !after.get(p.currency)!.gt(take.above[p.currency]!));
  const totals = Object.fromEntries([...(taken ? after : sum(recorded))].map(([c, a]) => [c, a.toFixed()]));
  return { totals, taken, add: taken ? add : [], recorded };
}

/** `recorded`: the day's payouts before `take`. */
export type UnapprovedCount = Omit<ReturnType<typeof countUnapproved>, 'add'>;

export { accountOf } from '../client/environment.ts';

export interface BatchFold extends LinesRead {
  ledger: Ledger;
  batchId: string;
  path: string;
  folded: FoldedJournal;
}

export async function foldBatch(ledger: Ledger, batchId: string): Promise<BatchFold> {
  const folded = emptyFold();
  const read = await ledger.read(batchId, (e) => applyEvent(folded, e as JournalLine));
  return { ...read, ledger, batchId, path: ledger.journalOf(batchId), folded };
}

/** Every batch of these ledgers, each once (a ledger may be named twice: --state-dir and the per-user one). */
export async function* eachJournal(ledgers: Iterable<Ledger>): AsyncGenerator<{ ledger: Ledger; batchId: string }> {
  const seen = new Set<string>();
  for (const ledger of ledgers)
    for (const batchId of await ledger.batches()) {
      const path = ledger.journalOf(batchId);
      if (!seen.has(path)) yield { ledger, batchId };
      seen.add(path);
    }
}

export async function foldAll(ledgers: Iterable<Ledger>): Promise<BatchFold[]> {
  const out: BatchFold[] = [];
  for await (const { ledger, batchId } of eachJournal(ledgers)) out.push(await foldBatch(ledger, batchId));
  return out;
}

/** An argument of 8 to 64 hex that is not a file in `dir` (the command's folder) names a batch. */
export const namesBatch = (arg: string, dir: string): boolean => /^[0-9a-f]{8,64}$/i.test(arg) && !existsSync(resolve(dir, arg));

/** A batch named by its id where a results file is expected, e.g. from another host of a team ledger. */
export async function batchNamed(ledgers: Iterable<Ledger>, arg: string, dir: string): Promise<BatchFold | undefined> {
  if (!namesBatch(arg, dir)) return undefined;
  const prefix = arg.toLowerCase().slice(0, 16);
  for await (const { ledger, batchId } of eachJournal(ledgers)) if (batchId.startsWith(prefix)) return foldBatch(ledger, batchId);
  return undefined;
}

/** A reference another batch of the account sent; `since`: when that batch was first run. */
export interface SentElsewhere {
  ref: string;
  /** held: never sent, its last screening held it (only `withHeld`). */
  phase: 'created' | 'initiating' | 'unknown' | 'conflict' | 'held';
  batchId: string;
  file: string;
  results?: string;
  since?: string;
  payout?: PayoutSnapshot;
}

/** The references among `refs` another batch of the account sent, created or of unknown outcome (a `rejected` one may go again). */
export async function sentByOtherBatches(
  ledger: Ledger,
  batchId: string,
  refs: Set<string>,
  withHeld = false,
): Promise<Map<string, SentElsewhere>> {
  const out = new Map<string, SentElsewhere>();
  if (!refs.size) return out;
  for (const other of await ledger.batches()) {
    if (other === batchId.slice(0, 16)) continue;
    const { folded, path } = await foldBatch(ledger, other);
    const h = folded.header;
    if (h?.batchId === batchId) continue;
    for (const s of folded.rows.values()) {
      const phase = s.phase === 'none' || s.phase === 'rejected' ? (withHeld && s.held ? 'held' : undefined) : s.phase;
      if (!phase || !refs.has(s.ref) || out.get(s.ref)?.phase === 'created' || (phase === 'held' && out.has(s.ref))) continue;
      out.set(s.ref, {
        ref: s.ref,
        phase,
        batchId: h?.batchId ?? '?',
        file: h?.file ?? path,
        ...(h?.results ? { results: h.results } : {}),
        ...(h?.createdAt ? { since: h.createdAt } : {}),
        ...(s.payout ? { payout: s.payout } : {}),
      });
    }
  }
  return out;
}

export function sentElsewhereText(x: SentElsewhere): string {
  const batch = `batch ${x.batchId.slice(0, 16)}, ${x.file}${x.results ? `, results ${x.results}` : ''}${x.since ? `, first run ${x.since.slice(0, 10)} UTC` : ''}`;
  if (x.phase === 'created') return `already paid at this account (payout ${x.payout?.payoutRef ?? x.payout?.id}, ${batch})`;
  if (x.phase === 'conflict') return `already sent at this account with other content, answered 409 (${batch})`;
  if (x.phase === 'held')
    return `held by sanctions screening in another batch (${batch}): \`run\` refuses it unless it screens (--sanctions-list; screen --clear lets a false positive go)`;
  return `already sent at this account, outcome not known yet (${batch}): that batch settles it`;
}

const list = (refs: string[]) => `${refs.slice(0, 3).join(', ')}${refs.length > 3 ? ', ...' : ''}`;

export interface BatchRunner extends Pick<LockOwner, 'pid' | 'host' | 'startedAt'> {
  batchId: string;
  file: string;
  command: string;
}
export const who = (r: BatchRunner) =>
  `${r.file} (batch ${r.batchId.slice(0, 16)}, \`${r.command}\` by pid ${r.pid} on ${r.host} since ${r.startedAt})`;

export const batchInProgress = (r: BatchRunner): BatchRefused =>
  new BatchRefused(
    `this batch is being sent right now by another process: ${who(r)}. Nothing was sent. ` +
      'Wait until it ends, then run the command again (it continues from the journal).',
    'batch-in-progress',
  );

/** A payee's probable-duplicate key as a batch holds it beside its references (a digest: never an account number). */
export const payeeHold = (duplicateKey: string): string =>
  `${PAYEE}${createHash('sha256').update(duplicateKey).digest('hex').slice(0, 32)}`;
const PAYEE = 'payee:';

export function referencesBeingSent(held: string[], by: BatchRunner | undefined): BatchRefused {
  const refs = held.filter((x) => !x.startsWith(PAYEE));
  const payees = held.length - refs.length;
  const batch = `another batch${by ? `, ${who(by)}` : ''}`;
  return new BatchRefused(
    refs.length
      ? `${plural(refs.length, 'reference')} of this file (${list(refs)}) are being sent right now by ${batch}. ` +
          'Nothing was sent. When it has ended, run again: the references it created are then refused as sent, the others go.'
      : `${plural(payees, 'payee')} of this file (the same account, amount and currencies) are being paid right now by ${batch}, ` +
          'under other references. Nothing was sent. When it has ended, run again: a payee it paid is then refused as a probable ' +
          'duplicate (--allow-duplicate REF sends it anyway).',
    'references-being-sent',
  );
}

/** Run under the account's lock by each implementation's reserve: paying the same person again takes a new reference. */
export async function refuseReferencesSentBefore(ledger: Ledger, o: ReserveOptions, fresh: Set<string>): Promise<void> {
  const all = [...(await sentByOtherBatches(ledger, o.batchId, fresh, !o.screens)).values()];
  const sent = all.filter((x) => x.phase !== 'held');
  const first = sent[0] ?? all[0];
  if (!first) return;
  const by = `${first.file} (batch ${first.batchId.slice(0, 16)}${first.results ? `, results ${first.results}` : ''})`;
  if (!sent.length)
    throw new BatchRefused(
      `${plural(all.length, 'reference')} of this file (${list(all.map((x) => x.ref))}) ${all.length === 1 ? 'was' : 'were'} held by sanctions screening in another batch, ${by}, ` +
        'and this run screens nobody. Nothing was sent. Run with --sanctions-list to screen them again (an approved clearance, screen --clear, lets a false positive go).',
      'references-held-by-screening',
    );
  const paid = sent.filter((x) => x.phase === 'created').length;
  throw new BatchRefused(
    `${plural(sent.length, 'reference')} of this file (${list(sent.map((x) => x.ref))}) ` +
      `${sent.length === 1 ? 'was' : 'were'} already sent by another batch, ${by}${paid ? `: ${paid} already paid at this account` : ''}. Nothing was sent. ` +
      'A reference is paid once per account, whatever the file or its --batch-id: to pay the same person again, give the row a new reference. ' +
      'To re-send failed rows of that batch, edit its results file and run `payout-batch retry` on it.',
    'references-sent-by-another-batch',
  );
}

/** Lines appended to a batch's journal, in order (`sync`: each durable before the next). */
export function appendToBatch(ledger: Ledger, batchId: string, lines: readonly JournalEvent[], options?: { sync?: boolean }): void {
  if (!lines.length) return;
  const w = ledger.open(batchId);
  try {
    for (const l of lines) w.append(l, options);
  } finally {
    w.close();
  }
}

export const batchKey = (batchId: string): string => batchId.slice(0, 16);
