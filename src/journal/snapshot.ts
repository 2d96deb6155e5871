// A snapshot of a folded journal: every row's state after the journal's first N bytes, in a file
// beside it (<journal>.snapshot), so that a command reading a big journal folds only the lines
// appended since. A journal of 100,000 created rows is 105 MB of JSON lines, three per row, and
// folding it (300,000 JSON.parse calls and their event objects) was most of a resume's time; the
// snapshot holds the same states column by column, one array per field (27 MB), which loads in
// half the time, both hashes checked (0.31 s against 0.66 s).
//
// The journal stays the only source of truth; a snapshot is a cache of its fold, trusted only
// when it provably is one:
// - it records the sha256 of the journal bytes it is the fold of, and is used only when the
//   journal's first N bytes still hash to it (the journal is append-only: a journal truncated,
//   edited or replaced by another no longer matches, and is folded whole);
// - it records the sha256 of its own states, so a damaged snapshot is never read as states;
// - it is written atomically (temporary file, fsync, rename: see session.ts saveSnapshot);
// - anything else (missing, unreadable, another SNAPSHOT_VERSION) is ignored: the whole journal
//   is folded, as it was before snapshots existed.
//
// File: JSON lines. The first is the head: version, what it covers, the sha256 of all the lines
// after it (nothing else is trusted before that hash is checked). The second: counts, the header,
// runs and `more`, the rare fields (bodies of unsettled rows, errors, documents, ...) by position. Then one line per column, an array with a value per
// row: STATE_FIELDS, QUOTE_FIELDS, PAYOUT_FIELDS in that order. One line per column, not one
// document: written and read a column at a time, it never holds the whole text as one string
// (at 100,000 rows that string and its copies were 100 MB more at the end of a big run).
import { createHash } from 'node:crypto';
import { closeSync, openSync, readFileSync, readSync } from 'node:fs';
import type { BatchHeader, FoldedJournal, RowState } from './rows.ts';

/** Bump when applyEvent or RowState change: an older snapshot is then ignored (folded again). */
export const SNAPSHOT_VERSION = 2;

/**
 * A run writes a snapshot at its end when its journal grew by this much since the last one
 * (about 1,000 rows' lines): below it, folding the lines costs a few milliseconds.
 */
export const SNAPSHOT_MIN_BYTES = 1 << 20;

export const snapshotPathFor = (journal: string): string => `${journal}.snapshot`;

/** What a snapshot stands for: the fold of the journal's first `bytes` bytes, which hash to `sha256`. */
export interface SnapshotCovers {
  bytes: number;
  sha256: string;
}

/** The first line: what is checked before anything else is read. */
interface SnapshotHead {
  v: number;
  covers: SnapshotCovers;
  /** sha256 of every line after this one: what the states and counts are read from. */
  states: string;
}

// The fields held in columns; any other field of a state (now or added later) goes to `more`.
const STATE_FIELDS = ['ref', 'row', 'phase', 'attempt', 'key', 'dup', 'requestId', 'patched'] as const;
const QUOTE_FIELDS = ['attempt', 'rate', 'fee', 'totalDeductible', 'destinationAmount'] as const;
const PAYOUT_FIELDS = [
  'id',
  'payoutRef',
  'status',
  'sourceAmount',
  'sourceCurrency',
  'destinationAmount',
  'destinationCurrency',
  'transactionFees',
  'exchangeRate',
  'updatedAt',
  'documents',
] as const;
const IN_COLUMNS = new Set<string>([...STATE_FIELDS, 'quote', 'payout', 'docs']);
const QUOTE_IN_COLUMNS = new Set<string>(QUOTE_FIELDS);
const PAYOUT_IN_COLUMNS = new Set<string>(PAYOUT_FIELDS);
/** In `more`: the fields of a payout held in columns that are not among PAYOUT_FIELDS. */
const PAYOUT_MORE = 'payout+';

type Column = (string | number | boolean | null)[];
type Columns<K extends string> = Record<K, Column>;

/** The second line. */
interface SnapshotMeta {
  /** Events and damaged lines in the bytes covered (the counts a fold of them reports). */
  events: number;
  skipped: number;
  header: BatchHeader | null;
  runs: number;
  interrupted: boolean;
  /**
   * By position: the fields outside the columns (body, error, docs, ...), a quote or payout that
   * does not fit them (a field missing) whole, and PAYOUT_MORE (statusDetail, informationRequests).
   */
  more: Record<string, Record<string, unknown>>;
}

/** Quote and payout columns hold null where the row has none. */
interface SnapshotColumns {
  state: Columns<(typeof STATE_FIELDS)[number]>;
  quote: Columns<(typeof QUOTE_FIELDS)[number]>;
  payout: Columns<(typeof PAYOUT_FIELDS)[number]>;
}

const sha256 = (data: Uint8Array | string): string => createHash('sha256').update(data).digest('hex');

/** sha256 of a file's first `bytes` bytes; undefined when the file is shorter or unreadable. */
export function prefixSha256(path: string, bytes: number): string | undefined {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch {
    return undefined;
  }
  try {
    const hash = createHash('sha256');
    const buf = Buffer.allocUnsafe(1 << 20);
    let done = 0;
    while (done < bytes) {
      const n = readSync(fd, buf, 0, Math.min(buf.length, bytes - done), done);
      if (n === 0) return undefined;
      hash.update(buf.subarray(0, n));
      done += n;
    }
    return hash.digest('hex');
  } catch {
    return undefined;
  } finally {
    closeSync(fd);
  }
}

/** Fields of `o` outside `known` that hold a value, or undefined when there are none. */
function others(o: object, known: ReadonlySet<string>): Record<string, unknown> | undefined {
  let out: Record<string, unknown> | undefined;
  for (const k in o) {
    if (known.has(k)) continue;
    const v = (o as Record<string, unknown>)[k];
    if (v !== undefined) (out ??= {})[k] = v;
  }
  return out;
}

/**
 * The snapshot file's text for these states, the fold of the journal bytes `covers` describes;
 * undefined when a state holds a value a column cannot give back (see cell): such a journal is
 * always folded whole.
 */
export function encodeSnapshot(
  folded: FoldedJournal,
  counts: { events: number; skipped: number },
  covers: SnapshotCovers,
): string[] | undefined {
  const states = [...folded.rows.values()];
  const empty = <K extends string>(fields: readonly K[]) =>
    Object.fromEntries(fields.map((f) => [f, new Array(states.length)])) as Columns<K>;
  const st = empty(STATE_FIELDS);
  const q = empty(QUOTE_FIELDS);
  const p = empty(PAYOUT_FIELDS);
  const more: SnapshotMeta['more'] = {};
  // One pass, field by field as decode reads them (a loop over the field lists costs 0.5 s at
  // 100,000 rows).
  for (let i = 0; i < states.length; i++) {
    const s = states[i]!;
    let extra = others(s, IN_COLUMNS);
    if (
      !cell(st.ref, i, s.ref) ||
      !cell(st.row, i, s.row) ||
      !cell(st.phase, i, s.phase) ||
      !cell(st.attempt, i, s.attempt) ||
      !cell(st.key, i, s.key) ||
      !cell(st.dup, i, s.dup) ||
      !cell(st.requestId, i, s.requestId) ||
      !cell(st.patched, i, s.patched)
    )
      return undefined;
    for (const _ in s.docs) {
      (extra ??= {}).docs = s.docs;
      break;
    }
    const quote = s.quote;
    if (
      quote &&
      quote.attempt !== undefined &&
      quote.rate !== undefined &&
      quote.fee !== undefined &&
      quote.totalDeductible !== undefined &&
      quote.destinationAmount !== undefined &&
      !others(quote, QUOTE_IN_COLUMNS)
    ) {
      if (
        !cell(q.attempt, i, quote.attempt) ||
        !cell(q.rate, i, quote.rate) ||
        !cell(q.fee, i, quote.fee) ||
        !cell(q.totalDeductible, i, quote.totalDeductible) ||
        !cell(q.destinationAmount, i, quote.destinationAmount)
      )
        return undefined;
    } else {
      for (const f of QUOTE_FIELDS) q[f][i] = null;
      if (quote) (extra ??= {}).quote = quote;
    }
    const payout = s.payout;
    if (payout && typeof payout.id === 'string') {
      if (
        !cell(p.id, i, payout.id) ||
        !cell(p.payoutRef, i, payout.payoutRef) ||
        !cell(p.status, i, payout.status) ||
        !cell(p.sourceAmount, i, payout.sourceAmount) ||
        !cell(p.sourceCurrency, i, payout.sourceCurrency) ||
        !cell(p.destinationAmount, i, payout.destinationAmount) ||
        !cell(p.destinationCurrency, i, payout.destinationCurrency) ||
        !cell(p.transactionFees, i, payout.transactionFees) ||
        !cell(p.exchangeRate, i, payout.exchangeRate) ||
        !cell(p.updatedAt, i, payout.updatedAt) ||
        !cell(p.documents, i, payout.documents)
      )
        return undefined;
      const payoutMore = others(payout, PAYOUT_IN_COLUMNS);
      if (payoutMore) (extra ??= {})[PAYOUT_MORE] = payoutMore;
    } else {
      for (const f of PAYOUT_FIELDS) p[f][i] = null;
      if (payout) (extra ??= {}).payout = payout;
    }
    if (extra) more[i] = extra;
  }
  // (`more` holds values as the journal's JSON gave them: nothing JSON cannot hold)
  const meta: SnapshotMeta = {
    events: counts.events,
    skipped: counts.skipped,
    header: folded.header ?? null,
    runs: folded.runs,
    interrupted: folded.interrupted,
    more,
  };
  const lines = [`${JSON.stringify(meta)}\n`];
  for (const columns of [st, q, p] as Record<string, Column | undefined>[]) {
    for (const f of Object.keys(columns)) {
      lines.push(`${JSON.stringify(columns[f])}\n`);
      columns[f] = undefined; // its text is all that is needed now
    }
  }
  const hash = createHash('sha256');
  for (const line of lines) hash.update(line);
  const head: SnapshotHead = { v: SNAPSHOT_VERSION, covers, states: hash.digest('hex') };
  return [`${JSON.stringify(head)}\n`, ...lines];
}

/**
 * Puts a field's value in its column (absent: null); false when the column could not give it back
 * as it is: null (a column's null means absent) or a number JSON has not (NaN after a damaged line).
 */
function cell(column: Column, i: number, v: unknown): boolean {
  if (v === undefined) {
    column[i] = null;
    return true;
  }
  if (v === null || (typeof v === 'number' && !Number.isFinite(v))) return false;
  column[i] = v as Column[number];
  return true;
}

export interface LoadedSnapshot {
  folded: FoldedJournal;
  /** The journal bytes the states are the fold of: folding goes on from there. */
  bytes: number;
  events: number;
  skipped: number;
}

/** The snapshot of this journal when there is one and it provably is the fold of the journal's start. */
export function loadSnapshot(journal: string): LoadedSnapshot | undefined {
  let file: Buffer;
  try {
    file = readFileSync(snapshotPathFor(journal));
  } catch {
    return undefined;
  }
  try {
    let at = 0;
    const line = (): unknown => {
      const nl = file.indexOf(0x0a, at);
      if (nl === -1) throw new RangeError('snapshot line missing');
      const v = JSON.parse(file.toString('utf8', at, nl)) as unknown;
      at = nl + 1;
      return v;
    };
    const head = line() as SnapshotHead;
    if (head?.v !== SNAPSHOT_VERSION || !head.covers) return undefined;
    if (sha256(file.subarray(at)) !== head.states) return undefined;
    if (prefixSha256(journal, head.covers.bytes) !== head.covers.sha256) return undefined;
    const meta = line() as SnapshotMeta;
    if (
      typeof meta?.events !== 'number' ||
      typeof meta.skipped !== 'number' ||
      typeof meta.runs !== 'number' ||
      typeof meta.interrupted !== 'boolean' ||
      typeof meta.more !== 'object'
    )
      return undefined;
    const columns = <K extends string>(fields: readonly K[]) => Object.fromEntries(fields.map((f) => [f, line()])) as Columns<K>;
    const cols: SnapshotColumns = { state: columns(STATE_FIELDS), quote: columns(QUOTE_FIELDS), payout: columns(PAYOUT_FIELDS) };
    // as many rows as every column has (nothing outside the hashed lines says how many)
    const n = cols.state.ref.length;
    for (const c of [cols.state, cols.quote, cols.payout])
      for (const column of Object.values(c)) if (!Array.isArray(column) || column.length !== n) return undefined;
    return { folded: decode(meta, cols, n), bytes: head.covers.bytes, events: meta.events, skipped: meta.skipped };
  } catch {
    return undefined;
  }
}

const given = <T>(v: T | null): T | undefined => (v === null ? undefined : v);

function decode(b: SnapshotMeta, columns: SnapshotColumns, n: number): FoldedJournal {
  const { state: s, quote: q, payout: p } = columns;
  const { more } = b;
  const rows = new Map<string, RowState>();
  // Object literals of one shape, not a loop over the field lists: 100,000 rows in a few ms.
  for (let i = 0; i < n; i++) {
    const st: RowState = {
      ref: s.ref[i] as string,
      row: given(s.row[i]) as number | undefined,
      phase: s.phase[i] as RowState['phase'],
      attempt: s.attempt[i] as number,
      key: given(s.key[i]) as string | undefined,
      dup: given(s.dup[i]) as number | undefined,
      requestId: given(s.requestId[i]) as string | undefined,
      docs: {},
      patched: s.patched[i] as boolean,
      quote:
        q.attempt[i] === null
          ? undefined
          : {
              attempt: q.attempt[i] as number,
              rate: q.rate[i] as number,
              fee: q.fee[i] as number,
              totalDeductible: q.totalDeductible[i] as number,
              destinationAmount: q.destinationAmount[i] as number,
            },
      payout:
        p.id[i] === null
          ? undefined
          : {
              id: p.id[i] as string,
              payoutRef: given(p.payoutRef[i]) as string,
              status: given(p.status[i]) as string,
              sourceAmount: given(p.sourceAmount[i]) as number,
              sourceCurrency: given(p.sourceCurrency[i]) as string,
              destinationAmount: given(p.destinationAmount[i]) as number,
              destinationCurrency: given(p.destinationCurrency[i]) as string,
              transactionFees: given(p.transactionFees[i]) as number,
              exchangeRate: given(p.exchangeRate[i]) as number,
              updatedAt: given(p.updatedAt[i]) as string,
              documents: given(p.documents[i]) as number,
            },
    };
    const extra = more[i];
    if (extra) {
      const { [PAYOUT_MORE]: payoutMore, ...fields } = extra;
      Object.assign(st, fields);
      if (payoutMore && st.payout) Object.assign(st.payout, payoutMore);
    }
    rows.set(st.ref, st);
  }
  return { header: b.header ?? undefined, rows, runs: b.runs, interrupted: b.interrupted };
}
