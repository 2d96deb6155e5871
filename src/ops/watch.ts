// `watch DIR`: unattended runs of the files dropped into DIR/inbox.
//
//   DIR/payout-batch.json   the configuration (zod, below): environment, guards, timings
//   DIR/inbox/              files are dropped here (dotfiles and *.tmp are ignored)
//   DIR/processing/<claim>/ a claimed file, its results and claim.json (owner, sha256)
//   DIR/done/<claim>/       every row created: the file, <name>.results.<ext>, <name>.summary.json
//   DIR/failed/<claim>/     refused, unusable, some rows not created, or already processed
//   DIR/.state/             journals of versions before the account's ledger (still read)
//   the engine's journals    in the account's ledger (engine/ledger.ts) of the per-user state folder,
//                            or of "stateDir" in the configuration: a watch and a person's `run`
//                            see each other's batches
//   DIR/.watch.lock         held for a few milliseconds around every move (pid, host, start time)
//
// A file is taken when complete: a marker "<name>.ready" beside it, or (unless requireReady) its
// size and mtime unchanged for settleSeconds. Its size and mtime are recorded at the claim: a file
// that changes afterwards (a writer still at work) is refused before anything is sent, or, when it
// changes once rows are under way, reported in failed/ (the rows added were not processed).
// Nothing is ever read through a symbolic link: a link in the inbox is refused (moved to failed/
// unread), and the documents a file names must lie in DIR/documents with no link on the way
// (unless allowDocumentsOutside). It is claimed by an atomic rename into a claim
// folder of its own under processing/ (a rename succeeds for one process only; a second file of
// the same name gets another claim folder and cannot overwrite the first). The claim folder
// keeps the file's name, so the engine's journal (in .state, named by the file's content) makes
// a claim killed mid-file resumable: on start, claims whose owner is dead (pid gone on this host,
// or no heartbeat for claimStaleSeconds from another host) are taken over and resumed first,
// before new files. A claim whose owner is alive on this host is never taken over, however old
// its heartbeat (a blocked or stopped process still holds it).
//
// A new file whose content was already sent (a journal of that content in the ledger has sent rows),
// or is being processed under another claim, goes to failed/ with the reason: it is never paid
// again. Nothing here prints or exits: the CLI does.
import { createHash, randomBytes } from 'node:crypto';
import {
  createReadStream,
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  unlinkSync,
  utimesSync,
  writeFileSync,
  type Stats,
} from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { basename, extname, join, relative, resolve, sep } from 'node:path';
import type { Logger } from 'pino';
import { z } from 'zod';
import type { Connection } from '../client/connect.ts';
import { parseMoneyFlag } from '../engine/approval.ts';
import { findBatchJournal, ledgerOf } from '../engine/ledger.ts';
import { ENGINE_STATUSES, isCreatedStatus } from '../engine/outcome.ts';
import { runBatch, type RunResult } from '../engine/run.ts';
import { BatchRefused, inspectJournal } from '../engine/session.ts';
import { InputError } from '../input/errors.ts';
import { ResultsError } from '../results/errors.ts';
import { cachedDocumentChecker, validateBatch, type DocumentCheck } from '../validation/index.ts';
import { acquireLock, holderAlive, myStart } from './lock.ts';

export const CONFIG_FILE = 'payout-batch.json';

const money = z.string().refine((s) => {
  try {
    parseMoneyFlag(s, 'total');
    return true;
  } catch {
    return false;
  }
}, 'CUR:AMOUNT, e.g. "USD:12500.00"');

export const WatchConfig = z.strictObject({
  /** Which service: local (embedded sandbox), sandbox or production. Required: never a default. */
  environment: z.enum(['local', 'sandbox', 'production']),
  /** Another server than the environment's (e.g. a sandbox on this machine). */
  baseUrl: z.string().url().optional(),
  /**
   * The state folder (relative to DIR) whose ledgers hold the journals and the quota count;
   * default the per-user one, shared with every other command (engine/ledger.ts).
   */
  stateDir: z.string().min(1).optional(),
  /** The production gateway host (else $PAYOUT_GATEWAY_HOST). */
  gatewayHost: z.string().optional(),
  /** A key file (relative to DIR); else $PAYOUT_API_KEY / --key-file. Never the key itself. */
  keyFile: z.string().optional(),
  /** Control totals checked for every file (the engine's --expect-rows / --expect-total / --max-total). */
  expectRows: z.number().int().positive().optional(),
  expectTotals: z.array(money).default([]),
  maxTotals: z.array(money).default([]),
  /** Source currencies a file may pay from; any other refuses the file. */
  allowedCurrencies: z.array(z.string().regex(/^[A-Z]{3}$/)).optional(),
  /** A file is complete when unchanged this long (or has a .ready marker). */
  settleSeconds: z.number().min(0).max(3600).default(5),
  /** Only files with a .ready marker are taken (the writer's word that the file is complete). */
  requireReady: z.boolean().default(false),
  /** Documents may be named anywhere the watch can read (still never through a symbolic link), not only in DIR/documents. */
  allowDocumentsOutside: z.boolean().default(false),
  /** Scan interval without --once. */
  pollSeconds: z.number().positive().max(3600).default(5),
  /** A claim of another host with no heartbeat for this long is taken over (on this host: when its pid is dead). */
  claimStaleSeconds: z.number().positive().default(120),
  allowPartial: z.boolean().default(false),
  enablePairs: z.boolean().default(false),
  quote: z.boolean().default(true),
  mergeDocuments: z.boolean().default(false),
  /** Requests per rolling second for the key (the spec allows 5). */
  rate: z.number().positive().max(1000).optional(),
  concurrency: z.number().int().positive().max(64).optional(),
});
export type WatchConfig = z.infer<typeof WatchConfig>;

export class WatchConfigError extends Error {
  override readonly name = 'WatchConfigError';
}

export function readWatchConfig(dir: string): WatchConfig {
  const path = join(dir, CONFIG_FILE);
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    throw new WatchConfigError(
      `${path}: cannot read the configuration (${(e as NodeJS.ErrnoException).code ?? (e as Error).message}); see README "watch"`,
    );
  }
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (e) {
    throw new WatchConfigError(`${path}: not JSON (${(e as Error).message})`);
  }
  const r = WatchConfig.safeParse(data);
  if (!r.success) {
    const i = r.error.issues[0]!;
    throw new WatchConfigError(`${path}: ${i.path.join('.') || '(top level)'}: ${i.message}`);
  }
  if (typeof (data as Record<string, unknown>).apiKey === 'string')
    throw new WatchConfigError(`${path}: never put the API key in the configuration; use keyFile`);
  return r.data;
}

export interface ClaimRecord {
  name: string;
  pid: number;
  host: string;
  claimedAt: string;
  takenOverAt?: string;
  sha256?: string;
  /** The owner's start time (lock.ts pidStartOf): a pid reused by another process is not the owner. */
  pidStart?: string;
  /** The file as claimed: a change afterwards means a writer was still at work. */
  size?: number;
  mtimeMs?: number;
}

export interface FileOutcome {
  name: string;
  claim: string;
  /** Where the claim folder ended: done, failed, or still processing (service unreachable, stopped). */
  outcome: 'done' | 'failed' | 'processing';
  exitCode: 0 | 1 | 2 | 3 | 4;
  reason?: string;
  resumed: boolean;
  folder: string;
}

export interface WatchOptions {
  dir: string;
  config: WatchConfig;
  conn: Connection;
  once: boolean;
  /** --env as given on the command line (production must be named there too). */
  envFlag?: string;
  /** The state folder when the configuration names none (the CLI: the per-user one). */
  stateRoot?: string;
  logger?: Logger;
  stop?: AbortSignal;
  crashWaitMs?: number;
  onFile?: (f: FileOutcome) => void;
  /** Called once a new file is claimed, before it is read (tests: a writer still at work). */
  onClaim?: (file: string) => void | Promise<void>;
}

export interface WatchResult {
  exitCode: 0 | 1 | 2 | 3 | 4;
  files: FileOutcome[];
  /** Files left in the inbox because they were not complete yet. */
  notComplete: string[];
}

const SEVERITY: Record<number, number> = { 0: 0, 1: 1, 2: 2, 3: 3, 4: 4 };
export const worstExit = (codes: number[]): 0 | 1 | 2 | 3 | 4 =>
  codes.reduce((a, b) => (SEVERITY[b]! > SEVERITY[a]! ? b : a), 0) as 0 | 1 | 2 | 3 | 4;

const sleep = (ms: number, stop?: AbortSignal) =>
  new Promise<void>((r) => {
    const t = setTimeout(r, ms);
    stop?.addEventListener(
      'abort',
      () => {
        clearTimeout(t);
        r();
      },
      { once: true },
    );
  });

export function layout(dir: string) {
  const root = resolve(dir);
  return {
    root,
    inbox: join(root, 'inbox'),
    processing: join(root, 'processing'),
    done: join(root, 'done'),
    failed: join(root, 'failed'),
    state: join(root, '.state'),
    lock: join(root, '.watch.lock'),
    documents: join(root, 'documents'),
  };
}

/** Names in the inbox that may be batches: no dotfiles, no temporary files, no markers. */
export function inboxCandidates(inbox: string): string[] {
  let names: string[];
  try {
    names = readdirSync(inbox);
  } catch {
    return [];
  }
  return names
    .filter((n) => !n.startsWith('.') && !/\.tmp$/i.test(n) && !/\.ready$/i.test(n) && !/\.(part|crdownload|swp)$/i.test(n))
    .sort();
}

/** Complete: a .ready marker, or (unless requireReady) unchanged for settleMs. Returns ms still to wait, 0 when complete, -1 when never by time. */
export function completeIn(inbox: string, name: string, o: { settleMs: number; requireReady: boolean; now?: number }): number {
  if (existsSync(join(inbox, `${name}.ready`))) return 0;
  if (o.requireReady) return -1;
  let st;
  try {
    st = lstatSync(join(inbox, name));
  } catch {
    return -1;
  }
  if (!st.isFile()) return -1;
  const age = (o.now ?? Date.now()) - Math.max(st.mtimeMs, st.ctimeMs);
  return age >= o.settleMs ? 0 : Math.ceil(o.settleMs - age);
}

/**
 * Why an inbox entry is refused without being read, or undefined for a regular file (or a folder,
 * left alone: a writer may stage files in one). A link is never followed: whoever can write the
 * inbox could otherwise have any file the watch can read paid or read.
 */
export function refusedEntry(path: string, st: Stats): string | undefined {
  if (st.isSymbolicLink()) {
    let target = '?';
    try {
      target = readlinkSync(path);
    } catch {
      /* gone meanwhile */
    }
    return `a symbolic link (to ${target}): links are never followed; copy the file itself into the inbox`;
  }
  if (!st.isFile() && !st.isDirectory()) return 'not a regular file (a FIFO, socket or device)';
  return undefined;
}

const WRITE_WHOLE = (name: string) =>
  `A writer must finish the file, then create ${name}.ready beside it (and ${CONFIG_FILE} may say "requireReady": true).`;

const unusable = (e: InputError | ResultsError) => `unusable file: ${e.message}${e instanceof InputError ? ` [${e.code}]` : ''}`;

/** Size or mtime no longer those recorded at the claim: what changed, else undefined. */
function changedSince(file: string, c: ClaimRecord): string | undefined {
  if (c.size === undefined || c.mtimeMs === undefined) return undefined; // claimed by an older version
  let st;
  try {
    st = lstatSync(file);
  } catch {
    return 'it is gone from its claim folder';
  }
  if (st.size !== c.size) return `its size went from ${c.size} to ${st.size} bytes`;
  if (st.mtimeMs !== c.mtimeMs) return `it was modified at ${new Date(st.mtimeMs).toISOString()}`;
  return undefined;
}

/**
 * Why a document path named in a file is refused, or undefined. `abs` is the path as the
 * validation resolves it against the claim folder (lexically: ".." cannot step out unseen). It must
 * lie in DIR/documents (named as documents/… through the claim folder's link, or absolute), with
 * no symbolic link below that folder; with allowOutside anywhere, but the file itself not a link.
 * A path that does not exist is left to the validation (DOCUMENT_NOT_FOUND).
 */
export function documentRefusal(abs: string, o: { claimDir: string; documents: string; allowOutside: boolean }): string | undefined {
  const viaClaim = join(o.claimDir, 'documents');
  const inside = (p: string, root: string) => p.startsWith(root + sep);
  let real: string | undefined;
  if (inside(abs, viaClaim)) real = join(o.documents, abs.slice(viaClaim.length));
  else if (inside(abs, o.documents)) real = abs;
  if (real === undefined) {
    if (!o.allowOutside) return `outside ${o.documents} (set "allowDocumentsOutside": true in ${CONFIG_FILE} to allow it)`;
    try {
      if (lstatSync(abs).isSymbolicLink()) return 'a symbolic link: links are never followed';
    } catch {
      /* missing: the validation says so */
    }
    return undefined;
  }
  let p = o.documents;
  for (const part of relative(o.documents, real).split(sep)) {
    p = join(p, part);
    try {
      if (lstatSync(p).isSymbolicLink()) return `a symbolic link (${relative(o.documents, p)}): links are never followed`;
    } catch {
      return undefined;
    }
  }
  return undefined;
}

async function sha256Of(path: string): Promise<string> {
  const h = createHash('sha256');
  for await (const c of createReadStream(path)) h.update(c as Buffer);
  return h.digest('hex');
}

const claimFile = (claimDir: string) => join(claimDir, 'claim.json');
export function readClaim(claimDir: string): ClaimRecord | undefined {
  try {
    return JSON.parse(readFileSync(claimFile(claimDir), 'utf8')) as ClaimRecord;
  } catch {
    return undefined;
  }
}
function writeClaim(claimDir: string, c: ClaimRecord): void {
  const tmp = `${claimFile(claimDir)}.${process.pid}.tmp`;
  writeFileSync(tmp, JSON.stringify(c, null, 2) + '\n');
  renameSync(tmp, claimFile(claimDir));
}

/**
 * Is the owner of a claim gone? On this host the process table says (a live owner keeps its claim
 * whatever its heartbeat: a blocked process would otherwise have its file paid twice at once);
 * for another host, no heartbeat for staleMs.
 */
export function claimAbandoned(claimDir: string, staleMs: number, now = Date.now()): boolean {
  const c = readClaim(claimDir);
  if (!c) return true;
  let mtime = 0;
  try {
    mtime = statSync(claimFile(claimDir)).mtimeMs;
  } catch {
    return true;
  }
  const alive = holderAlive(c);
  if (alive !== undefined) return !alive;
  return now - mtime > staleMs;
}

export async function watchFolder(o: WatchOptions): Promise<WatchResult> {
  const L = layout(o.dir);
  for (const d of [L.inbox, L.processing, L.done, L.failed, L.state]) mkdirSync(d, { recursive: true });
  const cfg = o.config;
  const log = o.logger;
  const env = o.conn.environment.name;
  const files: FileOutcome[] = [];
  const mine = new Set<string>(); // claim folders this process holds
  const halted = new Set<string>(); // claims of ours left in processing (service unreachable): retried each poll
  const staleMs = cfg.claimStaleSeconds * 1000;
  const stateRoot = cfg.stateDir ? resolve(L.root, cfg.stateDir) : o.stateRoot;
  const ledger = ledgerOf(o.conn, { root: stateRoot, legacy: [L.state] });

  /** The short critical section around every move. */
  const locked = async <T>(job: () => Promise<T> | T): Promise<T> => {
    const lock = await acquireLock(L.lock, { waitMs: 60_000, staleMs: 30_000, purpose: 'watch' });
    try {
      return await job();
    } finally {
      lock.release();
    }
  };

  const finish = (f: FileOutcome) => {
    files.push(f);
    o.onFile?.(f);
    log?.[f.exitCode === 0 ? 'info' : 'warn'](
      { file: f.name, claim: f.claim, outcome: f.outcome, exitCode: f.exitCode, reason: f.reason },
      `file ${f.outcome}`,
    );
  };

  /** Moves a claim folder to done/ or failed/ (summary written first). */
  const settle = async (
    claimDir: string,
    claim: ClaimRecord,
    out: Omit<FileOutcome, 'folder' | 'claim' | 'name'>,
    summary: Record<string, unknown>,
  ) => {
    const id = basename(claimDir);
    if (out.outcome === 'processing') {
      finish({ ...out, name: claim.name, claim: id, folder: claimDir });
      return;
    }
    const stem = basename(claim.name, extname(claim.name));
    await writeFile(
      join(claimDir, `${stem}.summary.json`),
      JSON.stringify(
        {
          file: claim.name,
          sha256: claim.sha256,
          claim: id,
          claimedAt: claim.claimedAt,
          takenOverAt: claim.takenOverAt,
          finishedAt: new Date().toISOString(),
          environment: env,
          outcome: out.outcome,
          exitCode: out.exitCode,
          reason: out.reason,
          ...summary,
        },
        null,
        2,
      ) + '\n',
    );
    const target = join(out.outcome === 'done' ? L.done : L.failed, id);
    await locked(() => renameSync(claimDir, target));
    mine.delete(claimDir);
    halted.delete(claimDir);
    finish({ ...out, name: claim.name, claim: id, folder: target });
  };

  /** Runs one claimed file through the engine. */
  const process_ = async (claimDir: string, resumed: boolean): Promise<void> => {
    const claim = readClaim(claimDir)!;
    const file = join(claimDir, claim.name);
    const beat = setInterval(
      () => {
        const t = new Date();
        try {
          utimesSync(claimFile(claimDir), t, t);
        } catch {
          /* moved */
        }
      },
      Math.max(1000, Math.min(10_000, staleMs / 4)),
    );
    beat.unref();
    const base = { resumed };
    try {
      if (existsSync(L.documents) && !existsSync(join(claimDir, 'documents'))) {
        try {
          symlinkSync(L.documents, join(claimDir, 'documents'), 'dir');
        } catch {
          /* documents/… paths are then not found: the rows say so */
        }
      }
      const refuse = (reason: string, exitCode: 2 | 3 = 3, summary: Record<string, unknown> = {}) =>
        settle(claimDir, claim, { ...base, outcome: 'failed', exitCode, reason }, summary);
      const nothingSent = resumed ? 'Nothing more was sent.' : 'Nothing was sent.';
      const changedBeforeRun = changedSince(file, claim);
      if (changedBeforeRun)
        return await refuse(
          `refused: ${claim.name} changed after it was claimed (${changedBeforeRun}). ${nothingSent} ${WRITE_WHOLE(claim.name)}`,
        );

      // One pass over the rows before the engine's, before anything is sent: the documents they
      // name (checked without following a link, and without reading one that is refused) and the
      // currencies they pay from.
      const refusedDocs = new Map<string, string>(); // as written in the file -> why
      const readDocument = cachedDocumentChecker();
      const checkDocument = (abs: string, shownAs = abs): DocumentCheck => {
        const why = documentRefusal(abs, { claimDir, documents: L.documents, allowOutside: cfg.allowDocumentsOutside });
        if (!why) return readDocument(abs, shownAs);
        refusedDocs.set(shownAs, why);
        return {
          ok: false,
          path: abs,
          code: 'DOCUMENT_NOT_FOUND',
          message: `"${shownAs}" is ${why}`,
          expected: 'a file in the documents folder',
        };
      };
      const badCurrencies = new Map<string, number>();
      try {
        const v = await validateBatch(file, { checkDocument });
        try {
          for await (const r of v.rows) {
            const c = r.payout?.sourceCurrency;
            if (c && cfg.allowedCurrencies && !cfg.allowedCurrencies.includes(c)) badCurrencies.set(c, (badCurrencies.get(c) ?? 0) + 1);
          }
        } finally {
          await v.close();
        }
      } catch (e) {
        if (e instanceof InputError || e instanceof ResultsError) return await refuse(unusable(e), 2);
        throw e;
      }
      if (refusedDocs.size) {
        const list = [...refusedDocs].slice(0, 5).map(([d, why]) => `"${d}" is ${why}`);
        if (refusedDocs.size > 5) list.push(`and ${refusedDocs.size - 5} more`);
        return await refuse(
          `refused: documents may only come from ${L.documents}, never through a symbolic link: ${list.join('; ')}. ${nothingSent}`,
        );
      }
      if (badCurrencies.size && cfg.allowedCurrencies) {
        const list = [...badCurrencies].map(([c, n]) => `${c} (${n} row${n === 1 ? '' : 's'})`).join(', ');
        return await refuse(
          `refused: source currencies not allowed by ${CONFIG_FILE}: ${list} (allowed: ${cfg.allowedCurrencies.join(', ')}). ${nothingSent}`,
        );
      }

      // The engine reads the file again: if it is not what was claimed by the time the plan is
      // made (all rows read, nothing sent yet), the run is stopped before its first payout.
      let changedAtPlan: string | undefined;
      const halt = new AbortController();
      const stop = o.stop ? AbortSignal.any([o.stop, halt.signal]) : halt.signal;
      let batchLabel = '';
      let r: RunResult;
      try {
        r = await runBatch({
          file,
          conn: o.conn,
          stateDir: stateRoot,
          legacyStateDirs: [L.state],
          yes: true,
          interactive: false,
          envFlag: o.envFlag,
          allowPartial: cfg.allowPartial,
          enablePairs: cfg.enablePairs,
          expectRows: cfg.expectRows,
          expectTotals: cfg.expectTotals.map((t) => parseMoneyFlag(t, 'expectTotals')),
          maxTotals: cfg.maxTotals.map((t) => parseMoneyFlag(t, 'maxTotals')),
          quote: cfg.quote,
          mergeDocuments: cfg.mergeDocuments,
          concurrency: cfg.concurrency,
          stop,
          ...(o.crashWaitMs !== undefined ? { crashWaitMs: o.crashWaitMs } : {}),
          onPlan: (p) => {
            changedAtPlan =
              changedSince(file, claim) ??
              (claim.sha256 && p.batchId !== claim.sha256 ? 'its content is not the one hashed at the claim' : undefined);
            if (changedAtPlan) halt.abort();
            batchLabel = p.batchId.slice(0, 16);
            log?.info(
              {
                file: claim.name,
                batchId: batchLabel,
                toSend: p.toSend.length,
                alreadyCreated: p.alreadyCreated,
                currencies: p.currencies,
              },
              'plan',
            );
          },
          onEvent: (e) => {
            if (e.type === 'row-done') {
              const fields = {
                file: claim.name,
                batchId: batchLabel,
                row: e.rowNumber,
                reference: e.reference,
                status: e.status,
                requestId: e.requestId,
                payoutId: e.payoutId,
                idempotencyKey: e.key,
                errorCode: e.errorCode,
              };
              if (isCreatedStatus(e.status)) log?.info(fields, 'row done');
              else log?.warn({ ...fields, message: e.message }, 'row not created');
            } else if (e.type === 'halted') log?.error({ file: claim.name, batchId: batchLabel, reason: e.reason }, 'run halted');
          },
        });
      } catch (e) {
        if (e instanceof BatchRefused)
          return await settle(claimDir, claim, { ...base, outcome: 'failed', exitCode: 3, reason: `refused: ${e.message}` }, {});
        if (e instanceof InputError || e instanceof ResultsError) return await refuse(unusable(e), 2);
        throw e;
      }
      const summary = {
        batchId: r.batchId,
        results: basename(r.resultsPath),
        journal: r.journalPath,
        summary: r.summary,
        refused: r.refused,
        halted: r.halted,
        resumedRun: r.report.resumed ? r.report : undefined,
      };
      if (changedAtPlan)
        return await refuse(
          `refused: ${claim.name} changed after it was claimed (${changedAtPlan}). ${nothingSent} ${WRITE_WHOLE(claim.name)}`,
          3,
          summary,
        );
      if (r.exitCode === 4 || r.stopped) {
        halted.add(claimDir);
        return await settle(
          claimDir,
          claim,
          {
            ...base,
            outcome: 'processing',
            exitCode: r.exitCode === 4 ? 4 : 0,
            reason: r.stopped
              ? 'stopped on request: resumed on the next start'
              : `service unavailable: ${r.halted}; left in processing/, resumed on the next run`,
          },
          summary,
        );
      }
      if (r.exitCode === 3)
        return await settle(
          claimDir,
          claim,
          { ...base, outcome: 'failed', exitCode: 3, reason: `refused by the guards: ${(r.refused ?? []).join('; ')}` },
          summary,
        );
      // Changed once rows were under way (not refused by the guards above): they were paid as read
      // at the claim; what the writer added since was not, and must not pass unseen.
      const changedInRun = changedSince(file, claim);
      if (changedInRun)
        return await settle(
          claimDir,
          claim,
          {
            ...base,
            outcome: 'failed',
            exitCode: 1,
            reason:
              `${claim.name} changed while it was processed (${changedInRun}): the rows read at the claim were processed ` +
              `(${r.summary.created} created, see ${basename(r.resultsPath)}); anything written after was NOT processed: send it in a new file. ` +
              WRITE_WHOLE(claim.name),
          },
          summary,
        );
      if (r.exitCode === 1) {
        const bad = Object.entries(r.summary.byStatus)
          .filter(([k]) => !isCreatedStatus(k))
          .map(([k, n]) => `${n} ${k}`)
          .join(', ');
        const unknown = r.summary.byStatus[ENGINE_STATUSES.UNKNOWN_OUTCOME]
          ? ' (rows of unknown outcome are settled with their original key by retry)'
          : '';
        return await settle(
          claimDir,
          claim,
          {
            ...base,
            outcome: 'failed',
            exitCode: 1,
            reason: `${r.summary.created} created, ${bad}: see ${basename(r.resultsPath)}; fix the rows and run \`payout-batch retry\` on it${unknown}`,
          },
          summary,
        );
      }
      return await settle(claimDir, claim, { ...base, outcome: 'done', exitCode: 0 }, summary);
    } finally {
      clearInterval(beat);
    }
  };

  /** Takes over claims whose owner is gone (crash), under the lock. */
  const takeOver = () =>
    locked(() => {
      const taken: string[] = [];
      for (const id of readdirSync(L.processing).sort()) {
        const claimDir = join(L.processing, id);
        if (mine.has(claimDir)) continue;
        let st;
        try {
          st = statSync(claimDir);
        } catch {
          continue;
        }
        if (!st.isDirectory()) continue;
        const c = readClaim(claimDir);
        if (!c) {
          // Crashed between creating the folder and writing claim.json: nothing was claimed.
          if (Date.now() - st.mtimeMs > 10_000) rmSync(claimDir, { recursive: true, force: true });
          continue;
        }
        if (!existsSync(join(claimDir, c.name))) {
          // Crashed between claim.json and the rename: the file is still in the inbox.
          if (claimAbandoned(claimDir, staleMs)) rmSync(claimDir, { recursive: true, force: true });
          continue;
        }
        if (!claimAbandoned(claimDir, staleMs)) continue;
        writeClaim(claimDir, {
          ...c,
          pid: process.pid,
          host: hostname(),
          pidStart: myStart().pidStart,
          takenOverAt: new Date().toISOString(),
        });
        mine.add(claimDir);
        taken.push(claimDir);
        log?.warn(
          { file: c.name, claim: id, previousOwner: { pid: c.pid, host: c.host } },
          'resuming a file left in processing by a stopped run',
        );
      }
      return taken;
    });

  /**
   * Claims one inbox entry, and checks its content was never sent before. A link or special file
   * is claimed too (the link itself: rename never follows it) but never read: `refused` says why.
   */
  const claimNew = (name: string) =>
    locked(async (): Promise<{ claimDir: string; duplicate?: string; refused?: string } | undefined> => {
      const src = join(L.inbox, name);
      try {
        lstatSync(src);
      } catch {
        return undefined; // gone (another process took it)
      }
      const id = `${new Date()
        .toISOString()
        .replace(/[-:]/g, '')
        .replace(/\.\d+Z$/, 'Z')}-${randomBytes(3).toString('hex')}-${name.replace(/[^A-Za-z0-9._-]/g, '_')}`;
      const claimDir = join(L.processing, id);
      mkdirSync(claimDir);
      const claim: ClaimRecord = { name, pid: process.pid, host: hostname(), ...myStart(), claimedAt: new Date().toISOString() };
      writeClaim(claimDir, claim);
      try {
        renameSync(src, join(claimDir, name));
      } catch (e) {
        rmSync(claimDir, { recursive: true, force: true });
        if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined; // another process took it
        throw e;
      }
      mine.add(claimDir);
      try {
        unlinkSync(`${src}.ready`);
      } catch {
        /* no marker */
      }
      const claimed = join(claimDir, name);
      // Looked at again after the rename: what was looked at before may have been replaced meanwhile.
      const st = lstatSync(claimed);
      const refused = refusedEntry(claimed, st);
      if (refused || !st.isFile()) return { claimDir, refused: `inbox/${name} is ${refused ?? 'not a regular file'}` };
      const sha = await sha256Of(claimed);
      writeClaim(claimDir, { ...claim, sha256: sha, size: st.size, mtimeMs: st.mtimeMs });
      // The same content under another claim still in processing/ (another watch, or one to resume).
      for (const other of readdirSync(L.processing)) {
        const od = join(L.processing, other);
        if (od === claimDir) continue;
        const oc = readClaim(od);
        if (oc?.sha256 === sha)
          return { claimDir, duplicate: `the same content as ${oc.name} (processing/${other}) is being processed; it is not paid twice` };
      }
      // The same content sent before to this account, from here or anywhere (its journal has sent rows).
      const jp = findBatchJournal(ledger, sha);
      if (jp) {
        const { folded } = inspectJournal(jp);
        const sent = [...folded.rows.values()].filter((s) => s.phase !== 'none').length;
        if (sent > 0) {
          const h = folded.header;
          const where = h ? `${basename(h.file)} (claim ${basename(resolve(h.file, '..'))})` : 'an earlier file';
          return {
            claimDir,
            duplicate:
              `already processed: the same content as ${where}, first run ${h?.createdAt.slice(0, 19) ?? '?'}Z in ${env}, ${sent} row${sent === 1 ? '' : 's'} sent. ` +
              'Not paid again. To re-send failed rows of that batch, run `payout-batch retry` on its results file.',
          };
        }
      }
      return { claimDir };
    });

  const notComplete: string[] = [];
  const pass = async (): Promise<void> => {
    // 1. Claims left by a stopped run (and our own halted ones) first.
    for (const claimDir of [...(await takeOver()), ...[...halted]]) {
      if (o.stop?.aborted) return;
      halted.delete(claimDir);
      if (existsSync(claimDir)) await process_(claimDir, true);
    }
    // 2. New files, complete ones only.
    const settleMs = cfg.settleSeconds * 1000;
    let waitedOnce = false;
    for (;;) {
      if (o.stop?.aborted) return;
      const names = inboxCandidates(L.inbox);
      const ready: string[] = [];
      let wait = Infinity;
      notComplete.length = 0;
      for (const n of names) {
        // A link or special file is refused at once: there is nothing to wait for, it is never read.
        let refused: string | undefined;
        try {
          refused = refusedEntry(join(L.inbox, n), lstatSync(join(L.inbox, n)));
        } catch {
          continue; // gone
        }
        if (refused) {
          ready.push(n);
          continue;
        }
        const ms = completeIn(L.inbox, n, { settleMs, requireReady: cfg.requireReady });
        if (ms === 0) ready.push(n);
        else {
          notComplete.push(n);
          if (ms > 0) wait = Math.min(wait, ms);
        }
      }
      for (const n of ready) {
        if (o.stop?.aborted) return;
        // Checked again just before the claim: still unchanged (a link is refused by claimNew).
        let refused: string | undefined;
        try {
          refused = refusedEntry(join(L.inbox, n), lstatSync(join(L.inbox, n)));
        } catch {
          continue; // gone
        }
        if (!refused && completeIn(L.inbox, n, { settleMs, requireReady: cfg.requireReady }) !== 0) continue;
        const c = await claimNew(n);
        if (!c) continue;
        const claim = readClaim(c.claimDir)!;
        if (c.refused)
          await settle(
            c.claimDir,
            claim,
            { outcome: 'failed', exitCode: 3, reason: `refused: ${c.refused}. Nothing was read or sent.`, resumed: false },
            {},
          );
        else if (c.duplicate) await settle(c.claimDir, claim, { outcome: 'failed', exitCode: 3, reason: c.duplicate, resumed: false }, {});
        else {
          await o.onClaim?.(join(c.claimDir, claim.name));
          await process_(c.claimDir, false);
        }
      }
      if (ready.length) continue; // new files may have arrived meanwhile
      // --once: a file that was still being written when we looked gets one more look when it would have settled.
      if (o.once && !waitedOnce && wait !== Infinity && wait <= settleMs + 1000) {
        waitedOnce = true;
        await sleep(wait + 50, o.stop);
        continue;
      }
      break;
    }
    for (const n of notComplete) log?.info({ file: n }, 'not complete yet: left in the inbox');
  };

  if (o.once) {
    await pass();
  } else {
    while (!o.stop?.aborted) {
      await pass();
      await sleep(cfg.pollSeconds * 1000, o.stop);
    }
  }
  return { exitCode: worstExit(files.map((f) => f.exitCode)), files, notComplete: [...notComplete] };
}
