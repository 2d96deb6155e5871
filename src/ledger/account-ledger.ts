// The ledger of a service account: what this account has sent, batch by batch, whoever sent it
// (README.md beside this file). One interface, two implementations: a folder of journal files per
// user (file.ts) and a PostgreSQL database shared by a team (postgres.ts); open.ts chooses. Only
// this folder and the CLI know which one a command holds.
import { basename } from 'node:path';
import { existsSync } from 'node:fs';
import { Dec } from '../money.ts';
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

/** A batch's journal open for appending: each line is in the ledger, in order. */
export interface JournalAppender {
  /** Where the journal is, for messages: a file, or the database and the batch. */
  readonly path: string;
  /** Appends one line. `sync`: durable before it returns where the ledger can (the file: fsync). */
  append(event: JournalEvent, options?: { sync?: boolean }): void;
  close(): void;
}

/** What a read of a batch's lines found: the scan, where the next read starts, and when the batch was last written. */
export interface LinesRead extends JournalScan {
  next: number;
  /** Milliseconds since the epoch; 0 for a batch never written. */
  lastWriteMs: number;
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
  /**
   * Runs `write` (the `initiating` record) under the account's lock while this reservation is
   * still ours and holds `ref` (null: a line of the batch's own, its swap's), the line and every
   * line before it recorded before this returns; throws ReservationLost otherwise (nothing is
   * written, nothing sent).
   */
  guard: (ref: string | null, write: () => void) => Promise<void>;
  /** Ends the reservation once every line of this run is recorded; throws when one could not be. */
  release: () => Promise<void>;
}

/** The claim of an inbox file's content by a `watch` (the team ledger's watch_claims). */
export interface WatchClaim {
  account: string;
  sha256: string;
  /** The claim folder's name on the host that claimed it (processing/<claim>). */
  claim: string;
  /** The file's name in the inbox. */
  name: string;
  /** The process that holds it: alive while it holds its session lock. */
  holder: string;
  host: string;
  state: 'running' | 'done' | 'failed';
  claimedAt: string;
  endedAt?: string;
}

/** The content this process claims, and the claim folder it sits in. */
export type ClaimRequest = Pick<WatchClaim, 'account' | 'sha256' | 'claim' | 'name' | 'host'>;

/**
 * `held`: this process holds the claim (new, already its own, or `replaced`: taken from a holder
 * that is gone, or from a claim that ended and may be run again). Otherwise `by`: the claim of
 * another, running (its holder alive) or ended.
 */
export type ClaimAnswer = { held: true; replaced?: WatchClaim } | { held: false; by: WatchClaim };

export interface Ledger {
  /** What identifies the account: the service's normalised base URL (accountOf). */
  readonly account: string;
  /** Where it is, for messages: the account's folder, or the database without its password. */
  readonly where: string;
  /** The embedded sandbox's: gone with the process (no policy is kept there). */
  readonly ephemeral: boolean;
  /** Why it can no longer be used (a database lost mid-command), if so: nothing more is claimed or sent. */
  readonly lost: Error | undefined;
  /** Where a batch's journal is, for messages. */
  journalOf(batchId: string): string;
  /** The account's batches, by the first 16 hex of their id. */
  batches(): Promise<string[]>;
  /** Hands a batch's lines from position `from` (0: the first) to `onEvent`, in order, as they are now. */
  read(batchId: string, onEvent: (e: JournalEvent) => void, from?: number): Promise<LinesRead>;
  /** Opens a batch's journal for appending. */
  open(batchId: string): JournalAppender;
  /**
   * Checks, under the account's lock, that no other batch sent or is sending the fresh references
   * and that no other process runs this batch; then reserves them. Throws BatchRefused (nothing sent).
   */
  reserve(o: ReserveOptions): Promise<Reservation>;
  /** A team ledger's: the account's approval policy as last set (its text, and where it is for messages). */
  policy?(): Promise<{ text: string; where: string } | undefined>;
  /** A team ledger's: sets the account's approval policy (a new version; the earlier ones stay). */
  setPolicy?(text: string): Promise<void>;
  /**
   * What the account sent without approval on the UTC `day` (YYYY-MM-DD), per currency, each
   * reference once. With `take`, under the account's lock: records its payouts unless a currency's
   * total would then pass `take.above` (then nothing is recorded and `taken` is false).
   */
  unapproved(day: string, take?: UnapprovedTake): Promise<{ totals: Record<string, string>; taken: boolean }>;
  /** Claims a file's content for this watch: a ledger shared by hosts holds one claim per content; a file ledger, none (always held). */
  claim(ask: ClaimRequest, o?: { mayRetake?: (ended: WatchClaim) => boolean | Promise<boolean> }): Promise<ClaimAnswer>;
  /** Whether the claim `claim` of this content is abandoned (ended, or its process gone); undefined when the ledger holds no claim of it. */
  claimAbandoned(sha256: string, claim: string): Promise<boolean | undefined>;
  /** Records how this process's claim ended. */
  endClaim(sha256: string, claim: string, state: 'done' | 'failed'): Promise<void>;
}

/** A payout sent without an approval, as an account's allowance of the day counts it. */
export interface UnapprovedPayout {
  reference: string;
  currency: string;
  amount: string;
}

/** Payouts to add to the day's count, and the most each currency may total (a currency not named: none). */
export interface UnapprovedTake {
  payouts: UnapprovedPayout[];
  above: Record<string, string>;
}

/** The day's totals with `take` added when it fits (each reference once): `add`, what to record. */
export function countUnapproved(recorded: UnapprovedPayout[], take?: UnapprovedTake) {
  const seen = new Set(recorded.map((p) => p.reference));
  const add = (take?.payouts ?? []).filter((p) => !seen.has(p.reference) && seen.add(p.reference));
  const sum = (list: UnapprovedPayout[]) => {
    const t = new Map<string, Dec>();
    for (const p of list) t.set(p.currency, (t.get(p.currency) ?? new Dec(0)).plus(new Dec(p.amount)));
    return t;
  };
  const after = sum([...recorded, ...add]);
  const taken = !!take && add.every((p) => take.above[p.currency] !== undefined && !after.get(p.currency)!.gt(take.above[p.currency]!));
  const totals = Object.fromEntries([...(taken ? after : sum(recorded))].map(([c, a]) => [c, a.toFixed()]));
  return { totals, taken, add: taken ? add : [] };
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

/** A batch's journal, read now and folded. */
export interface BatchFold extends LinesRead {
  ledger: Ledger;
  batchId: string;
  path: string;
  folded: FoldedJournal;
}

/** Reads a batch's lines and folds them (journal/lines.ts). */
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

/** Every batch of these ledgers, read now and folded, one at a time (each batch once). */
export async function* eachBatch(ledgers: Iterable<Ledger>): AsyncGenerator<BatchFold> {
  for await (const { ledger, batchId } of eachJournal(ledgers)) yield await foldBatch(ledger, batchId);
}

/** Every batch of these ledgers, read now and folded (each batch once). */
export async function foldAll(ledgers: Iterable<Ledger>): Promise<BatchFold[]> {
  const out: BatchFold[] = [];
  for await (const b of eachBatch(ledgers)) out.push(b);
  return out;
}

/** Whether a command's argument names a batch by its id (8 to 64 hex) rather than a file there. */
export const namesBatch = (arg: string): boolean => /^[0-9a-f]{8,64}$/i.test(arg) && !existsSync(arg);

/**
 * The journal of a batch named by its id (or the first 8 to 64 hex of it) in these ledgers:
 * `status`, `retry`, `reconcile` and `report` take a batch id where a results file is expected, so
 * a person on another host of a team ledger names the batch (engine/retry-batch.ts resultsHere).
 */
export async function batchNamed(ledgers: Iterable<Ledger>, arg: string): Promise<BatchFold | undefined> {
  if (!namesBatch(arg)) return undefined;
  const prefix = arg.toLowerCase().slice(0, 16);
  for (const ledger of ledgers)
    for (const batchId of await ledger.batches()) if (batchId.startsWith(prefix)) return foldBatch(ledger, batchId);
  return undefined;
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
 * The references among `refs` that another batch of the account shows sent (created, or of unknown
 * outcome): a reference is paid once per account, whatever the batch or its --batch-id. A refused
 * one (`rejected`) is not: it may be sent again, as `retry` would.
 */
export async function sentByOtherBatches(ledger: Ledger, batchId: string, refs: Set<string>): Promise<Map<string, SentElsewhere>> {
  const out = new Map<string, SentElsewhere>();
  if (!refs.size) return out;
  for (const other of await ledger.batches()) {
    if (other === batchId.slice(0, 16)) continue;
    const { folded, path } = await foldBatch(ledger, other);
    const h = folded.header;
    if (h?.batchId === batchId) continue;
    for (const s of folded.rows.values()) {
      if (s.phase === 'none' || s.phase === 'rejected' || !refs.has(s.ref) || out.get(s.ref)?.phase === 'created') continue;
      out.set(s.ref, {
        ref: s.ref,
        phase: s.phase,
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

/** Where a reference was sent, in words: "already paid at this account (payout ..., batch ...)". */
export function sentElsewhereText(x: SentElsewhere): string {
  const batch = `batch ${x.batchId.slice(0, 16)}, ${x.file}${x.results ? `, results ${x.results}` : ''}${x.since ? `, first run ${x.since.slice(0, 10)}` : ''}`;
  if (x.phase === 'created') return `already paid at this account (payout ${x.payout?.payoutRef ?? x.payout?.id}, ${batch})`;
  if (x.phase === 'conflict') return `already sent at this account with other content, answered 409 (${batch})`;
  return `already sent at this account, outcome not known yet (${batch}): that batch settles it`;
}

const list = (refs: string[]) => `${refs.slice(0, 3).join(', ')}${refs.length > 3 ? ', ...' : ''}`;

/** Who sends a batch right now, in words (the refusals of reserve). */
export interface BatchRunner {
  batchId: string;
  file: string;
  command: string;
  pid: number;
  host: string;
  startedAt: string;
}
const who = (r: BatchRunner) =>
  `${r.file} (batch ${r.batchId.slice(0, 16)}, \`${r.command}\` by pid ${r.pid} on ${r.host} since ${r.startedAt})`;

/** The refusal of a batch another live process is sending. */
export const batchInProgress = (r: BatchRunner): BatchRefused =>
  new BatchRefused(
    `this batch is being sent right now by another process: ${who(r)}. Nothing was sent. ` +
      'Wait until it ends, then run the command again (it continues from the journal).',
    'batch-in-progress',
  );

/** The refusal of references another live batch holds (`by`: that batch's run, when known). */
export const referencesBeingSent = (refs: string[], by: BatchRunner | undefined): BatchRefused =>
  new BatchRefused(
    `${plural(refs.length, 'reference')} of this file (${list(refs)}) are being sent right now by another batch${by ? `, ${who(by)}` : ''}. ` +
      'Nothing was sent. When it has ended, run again: the references it created are then refused as sent, the others go.',
    'references-being-sent',
  );

/**
 * Batches sent before (their journals): a reference created, or whose outcome is not known yet, is
 * not sent again under another batch, --batch-id or not: paying the same person again takes a new
 * reference. Run under the account's lock by each implementation's reserve.
 */
export async function refuseReferencesSentBefore(ledger: Ledger, o: ReserveOptions, fresh: Set<string>): Promise<void> {
  const sent = [...(await sentByOtherBatches(ledger, o.batchId, fresh)).values()];
  if (!sent.length) return;
  const first = sent[0]!;
  const by = `${first.file} (batch ${first.batchId.slice(0, 16)}${first.results ? `, results ${first.results}` : ''})`;
  const paid = sent.filter((x) => x.phase === 'created').length;
  throw new BatchRefused(
    `${plural(sent.length, 'reference')} of this file (${list(sent.map((x) => x.ref))}) ` +
      `were already sent by another batch, ${by}${paid ? `: ${paid} already paid at this account` : ''}. Nothing was sent. ` +
      'A reference is paid once per account, whatever the file or its --batch-id: to pay the same person again, give the row a new reference. ' +
      'To re-send failed rows of that batch, edit its results file and run `payout-batch retry` on it.',
    'references-sent-by-another-batch',
  );
}

/** The 16 hex that name a batch's journal. */
export const batchKey = (batchId: string): string => batchId.slice(0, 16);

/** A journal's 16 hex, from its file name (`<batch16>.journal.jsonl`). */
export const batchOfJournalName = (name: string): string | undefined => /^([0-9a-f]{16})\.journal\.jsonl$/.exec(basename(name))?.[1];
