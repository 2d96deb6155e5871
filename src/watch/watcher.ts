// A cron job's steps over one folder (README.md). Every move happens under the folder's lock, held for milliseconds; the
// engine's run is outside it, so two watches on one folder share the files between them.
import { existsSync, lstatSync, mkdirSync, readdirSync, renameSync, rmSync, statSync, symlinkSync, unlinkSync } from 'node:fs';
import { EventEmitter } from 'node:events';
import { utimes, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { basename, dirname, extname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import type { Logger } from 'pino';
import { approvalGate } from '../approvals/sign.ts';
import { PolicyError, policyGate, policyGuard, policyInForce, policyRefusal, policySetSince, utcDay } from '../approvals/account-policy.ts';
import type { AccountPolicy } from '../approvals/account-policy.ts';
import type { Connection } from '../client/connect.ts';
import { parseMoneyFlag, screeningReasons, type GuardOptions } from '../engine/guards.ts';
import type { ScreeningOptions } from '../engine/screen-batch.ts';
import { screeningFor } from '../approvals/clearance.ts';
import { fileSha256 } from '../engine/identity.ts';
import { accountOf, foldBatch, type Ledger, type WatchClaim } from '../ledger/account-ledger.ts';
import { ledgerOf } from '../ledger/open.ts';
import type { PlanFile } from '../engine/plan-file.ts';
import { ENGINE_STATUSES, isCreatedStatus, logRowDone, type RunSummary } from '../engine/outcome.ts';
import { execute, prepareRun, RUN_KINDS, type EngineEvents, type RunKind, type RunResult } from '../engine/pipeline.ts';
import { BatchRefused, BatchUnusable, FailedAfterSending } from '../engine/engine-errors.ts';
import { InputError } from '../input/input-errors.ts';
import { latestExecutionDate } from '../input/read-batch.ts';
import { ResultsError } from '../results/results-errors.ts';
import { writeStatusReportBeside } from '../results/status-report.ts';
import { isStale, myStart, withLock } from '../files/lock.ts';
import { attempt } from '../files/attempt.ts';
import { refusalText, vetRows, wholeFileProblems, type FileProblem } from './checks.ts';
import { changedOrEdited, changedSince, claimFile, newClaimId, readClaim, writeClaim, type ClaimRecord } from './claim-folder.ts';
import { CONFIG_FILE, swapRunOptions, type WatchConfig } from './config.ts';
import { companionsOf, completeIn, inboxCandidates, layout, refusedEntry, refuseLinkedFolders } from './inbox.ts';
import { sleep } from '../sleep.ts';
import { durationMs, plural } from '../text.ts';

export interface FileOutcome {
  name: string;
  claim: string;
  /** Where the claim folder ended (processing: service unreachable, or stopped). */
  outcome: 'done' | 'failed' | 'processing';
  kind: RunKind;
  reason?: string;
  resumed: boolean;
  folder: string;
  summary?: RunSummary;
}

export interface WatchOptions {
  dir: string;
  config: WatchConfig;
  /** One client for every file, so one limiter paces the key. */
  conn: Connection;
  once: boolean;
  /** --env as given (production must be named there too). */
  envFlag?: string;
  logger?: Logger;
  stop?: AbortSignal;
  crashWaitMs?: number;
  onFile?: (f: FileOutcome) => void;
  /** Once a new file is claimed, before it is read (tests: a writer still at work). */
  onClaim?: (file: string) => void | Promise<void>;
  /** Without --once, before each tick, then with what it did (the CLI's signals). */
  onTick?: (done?: WatchResult) => Promise<void>;
}

export interface WatchResult {
  kind: RunKind;
  files: FileOutcome[];
  notComplete: string[];
  /** --once stopped on request with a file of ours left in processing/ (exit 130, as `run`); a long-running watch ends so. */
  stopped?: boolean;
}

type RunJudgement = Omit<FileOutcome, 'folder' | 'claim' | 'name'>;

/** The most urgent of the kinds (RUN_KINDS is least urgent first); `ok` when there are none. */
export const worstKind = (kinds: RunKind[]): RunKind => RUN_KINDS[Math.max(0, ...kinds.map((k) => RUN_KINDS.indexOf(k)))]!;

const WRITE_WHOLE = (name: string) =>
  `A writer must finish the file, then create ${name}.ready beside it (and ${CONFIG_FILE} may say "requireReady": true).`;

const nothingSentText = (resumed: boolean) => (resumed ? 'Nothing more was sent.' : 'Nothing was sent.');

/** One this watch's user cannot read: refused, not a crash of this run and of every later one on its claim. */
const cannotRead = (what: string, e: NodeJS.ErrnoException, nothingSent: string) =>
  `refused: ${what} cannot be read (${e.code ?? e.message}): make it readable by the user this watch runs as, then drop it again. ${nothingSent}`;

const changedAfterClaim = (name: string, what: string, nothingSent: string) =>
  `refused: ${name} changed after it was claimed (${what}). ${nothingSent} ${WRITE_WHOLE(name)}`;

/** Where a claimed file goes once run. `changedInRun`: rows were paid as read at the claim, what was added since was not. */
export function judgeRun(
  r: RunResult,
  o: { name: string; resumed: boolean; changedAtPlan?: string; refusedWhole?: string; changedInRun?: string; retry?: string; due?: string },
): RunJudgement {
  const { name, resumed } = o;
  const judged = (outcome: RunJudgement['outcome'], kind: RunKind, reason?: string): RunJudgement => ({ resumed, outcome, kind, reason });
  if (o.changedAtPlan) return judged('failed', 'refused', changedAfterClaim(name, o.changedAtPlan, nothingSentText(resumed)));
  if (o.refusedWhole) return judged('failed', 'refused', o.refusedWhole);
  if (r.stopped) return judged('processing', r.kind === 'halted' ? 'halted' : 'ok', 'stopped on request: resumed on the next start');
  if (r.kind === 'halted' && r.answerNotAsSent)
    return judged('failed', 'halted', `${r.halted}. Not resumed: ask the service about that payout before paying the rest of ${name}`);
  if (r.kind === 'halted')
    return judged('processing', 'halted', `service unavailable: ${r.halted}; left in processing/, resumed on the next run`);
  if (r.kind === 'refused') return judged('failed', 'refused', `refused by the guards: ${(r.refused ?? []).join('; ')}`);
  if (o.changedInRun)
    return judged(
      'failed',
      'rows-failed',
      `${name} changed while it was processed (${o.changedInRun}): the rows read at the claim were processed ` +
        `(${r.summary.created} created, see ${basename(r.resultsPath)}); anything written after was NOT processed: send it in a new file. ` +
        WRITE_WHOLE(name),
    );
  if (r.kind === 'rows-failed') {
    const bad = Object.entries(r.summary.byStatus)
      .filter(([k]) => !isCreatedStatus(k))
      .map(([k, n]) => `${n} ${k}`)
      .join(', ');
    const unknown = r.summary.byStatus[ENGINE_STATUSES.UNKNOWN_OUTCOME]
      ? ' (rows of unknown outcome are settled with their original key by retry)'
      : '';
    const retry = o.retry ?? `payout-batch retry ${basename(r.resultsPath)}`;
    const reason = `${r.summary.created} created, ${bad}: see ${basename(r.resultsPath)}; fix the rows in it, then run \`${retry}\`${unknown}`;
    return judged('failed', 'rows-failed', reason);
  }
  if (r.kind === 'not-finished')
    return judged(
      'processing',
      'not-finished',
      `${r.summary.created} created, the rest not due until ${o.due} (ReqdExctnDt, a UTC day): left in processing/, resumed on that day`,
    );
  return judged('done', 'ok');
}

/** Why a plan was made for another account (accountOf, not the label); `local` starts on a new port each time: by label only. */
export function otherAccount(plan: Pick<PlanFile, 'env' | 'baseUrl'>, env: { name: string; baseUrl?: string }): string | undefined {
  if (plan.env === 'local' || env.name === 'local' || !env.baseUrl)
    return plan.env === env.name ? undefined : `was made for the ${plan.env} environment, this watch pays in ${env.name}`;
  if (accountOf(plan.baseUrl) === accountOf(env.baseUrl)) return undefined;
  return `was made for the service at ${plan.baseUrl}, this watch pays at ${env.baseUrl}: make the plan with --env ${env.name} --base-url ${env.baseUrl}`;
}

const shellWord = (x: string): string => (/^[\w@%+=:,./-]+$/.test(x) ? x : `'${x.replace(/'/g, `'\\''`)}'`);

const summaryName = (name: string) => `${basename(name, extname(name))}.summary.json`;

const elsewhere = ({ account: _a, sha256: _s, holder: _h, ...where }: WatchClaim) => where;

function claimedElsewhereText(c: WatchClaim): string {
  const when = (iso: string | undefined) => `${iso?.slice(0, 19) ?? '?'}Z`;
  const state = c.state === 'running' ? `running since ${when(c.claimedAt)}` : `${c.state} ${when(c.endedAt)}`;
  const next = {
    running: ' Should that watch stop before it ends, drop the file again: the claim of a process that is gone is taken over.',
    failed: ' Its rows are followed up there (its failed/ folder names the retry).',
    done: '',
  }[c.state];
  return `already processed: the same content as ${c.name} was claimed on host ${c.host} (claim ${c.claim}, ${state}). Not paid again here.${next}`;
}

type Judged = { out: RunJudgement; summary?: Record<string, unknown> };

const failed = (resumed: boolean, reason: string, kind: 'unusable' | 'refused' = 'refused', summary?: Record<string, unknown>): Judged => ({
  out: { resumed, outcome: 'failed', kind, reason },
  summary,
});

const leftToResume = (resumed: boolean, lost: Error): Judged => ({
  out: { resumed, outcome: 'processing', kind: 'halted', reason: `${lost.message}; left in processing/, resumed on the next run` },
});

/** The host's and the ledger's: neither the watch's state folder nor its configuration turns it off. */
const policyOf = (conn: Connection, ledger: Ledger) => (conn.sandbox ? undefined : policyInForce(conn.environment.baseUrl, ledger));

/** This process as a claim's owner; pidStart and pidSpace always set, so that a claim taken over never keeps the last owner's. */
const owner = () => ({ pid: process.pid, host: hostname(), pidStart: undefined, pidSpace: undefined, ...myStart() });

export class FolderWatch {
  private readonly L: ReturnType<typeof layout>;
  private readonly ledger: Ledger;
  private readonly files: FileOutcome[] = [];
  private readonly mine = new Set<string>();
  /** Ours left in processing (service unreachable): tried again on each tick. */
  private readonly halted = new Set<string>();
  private notComplete: string[] = [];
  /** Files by inbox name, left in the inbox until their latest ReqdExctnDt. */
  private notDue = new Map<string, { mtimeMs: number; date: string }>();
  /** Files by inbox name this user may not move (a sticky inbox, another user's file), by ctime: a chown or chmod tries again. */
  private readonly unmovable = new Map<string, number>();
  /** Under the account's policy or "requireApprovals" (as read at the tick): a file's plan and approvals go with it, never as batches. */
  private companions = false;
  /** Claims whose heartbeat fails, said once until it works again. */
  private readonly unmarked = new Set<string>();

  constructor(private readonly o: WatchOptions) {
    this.L = layout(o.dir, o.config);
    refuseLinkedFolders(this.L);
    for (const d of [this.L.inbox, this.L.processing, this.L.done, this.L.failed]) mkdirSync(d, { recursive: true });
    this.ledger = ledgerOf(o.conn, { root: this.L.state });
  }

  /** Stopped, or the team ledger lost: nothing more is claimed or sent. */
  private get stopped(): boolean {
    return (this.o.stop?.aborted ?? false) || this.ledger.lost !== undefined;
  }

  async run(): Promise<WatchResult> {
    // every claim held, run or waiting its turn, is touched: another host takes over one untouched for claimStaleSeconds
    const touch = () => this.mine.forEach((d) => void this.heartbeat(d));
    const beat = setInterval(touch, Math.min(10_000, this.o.config.claimStaleSeconds * 100));
    beat.unref();
    try {
      if (this.o.once) await this.tick();
      else
        while (!this.stopped) {
          const from = this.files.length;
          await this.o.onTick?.();
          await this.tick();
          await this.o.onTick?.(this.result(this.files.slice(from)));
          await sleep(this.o.config.pollSeconds * 1000, this.o.stop).catch(() => undefined);
        }
    } finally {
      clearInterval(beat);
    }
    return this.result(this.files);
  }

  /** A claim's heartbeat; one that fails (but ENOENT: moved to done/ or failed/ meanwhile) is said once, and again once it works. */
  private async heartbeat(d: string): Promise<void> {
    const claim = basename(d);
    try {
      await utimes(claimFile(d), new Date(), new Date());
      if (this.unmarked.delete(d)) this.o.logger?.info({ claim }, 'claim heartbeat works again');
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code ?? (e as Error).message;
      if (code === 'ENOENT' || this.unmarked.has(d)) return;
      this.unmarked.add(d);
      const s = this.o.config.claimStaleSeconds;
      const why = `claim heartbeat failing (${code}): after ${s} s without one another host may take ${claim} over while this watch still runs it`;
      this.o.logger?.warn({ claim, code, claimStaleSeconds: s }, why);
    }
  }

  private result(files: FileOutcome[]): WatchResult {
    const lost: RunKind[] = this.ledger.lost ? ['halted'] : [];
    const stopped = this.o.once && this.o.stop?.aborted === true && this.mine.size > 0;
    return { kind: worstKind([...files.map((f) => f.kind), ...lost]), files: [...files], notComplete: [...this.notComplete], stopped };
  }

  /** Claims left by a stopped run, and our own halted ones, resumed through their journals; then new files. */
  async tick(): Promise<void> {
    for (const claimDir of [...(await this.takeOver()), ...this.halted]) {
      if (this.stopped) return;
      const claim = readClaim(claimDir);
      if (notDueYet(claim)) continue;
      this.halted.delete(claimDir);
      if (!existsSync(claimDir)) continue;
      if (claim) await this.settle(claimDir, claim, await this.judge(claimDir, claim, true));
      else this.o.logger?.warn({ claim: basename(claimDir) }, 'no readable .claim.json: left in processing/, resumed on the next start');
    }
    if (this.stopped) return;
    await this.takeNewFiles();
  }

  private async takeNewFiles(): Promise<void> {
    let waitedOnce = false;
    // (a policy that cannot be read: as one in force; each file is refused saying why)
    this.companions =
      this.o.config.requireApprovals !== undefined || (await policyOf(this.o.conn, this.ledger)?.catch(() => true)) !== undefined;
    for (;;) {
      if (this.stopped) return;
      const { ready, wait } = this.scanInbox();
      for (const n of ready) {
        if (this.stopped) return;
        await this.take(n);
      }
      if (ready.length) continue; // new files may have arrived meanwhile
      // --once: a file that was still being written when we looked gets one more look when it would have settled.
      if (this.o.once && !waitedOnce && wait !== Infinity && wait <= this.o.config.settleSeconds * 1000 + 1000) {
        waitedOnce = true;
        await sleep(wait + 50, this.o.stop).catch(() => undefined); // (stopped: the loop ends)
        continue;
      }
      break;
    }
    for (const n of this.notComplete) this.o.logger?.info({ file: n }, 'not complete yet: left in the inbox');
  }

  /** `wait`: the ms until the first `notComplete` one would have settled. */
  private scanInbox(): { ready: string[]; wait: number } {
    const ready: string[] = [];
    let wait = Infinity;
    this.notComplete = [];
    for (const n of inboxCandidates(this.L.inbox, { companions: this.companions })) {
      const ms = this.readyIn(n);
      if (ms === 0) ready.push(n);
      else if (ms !== null) {
        this.notComplete.push(n);
        if (ms > 0) wait = Math.min(wait, ms);
      }
    }
    return { ready, wait };
  }

  /** Ms until an entry may be taken: 0 now (a link or special file too: refused unread), -1 only by its marker, null gone, a staging folder or not due. */
  private readyIn(name: string): number | null {
    const path = join(this.L.inbox, name);
    const st = attempt(() => lstatSync(path));
    if (!st || this.unmovable.get(name) === st.ctimeMs) return null;
    if (refusedEntry(path, st)) return 0;
    if (st.isDirectory()) return null; // (left alone, not "not complete": a writer may stage files in one)
    const held = this.notDue.get(name);
    if (held?.mtimeMs === st.mtimeMs && held.date > utcDay()) return null;
    return completeIn(this.L.inbox, name, { settleMs: this.o.config.settleSeconds * 1000, requireReady: this.o.config.requireReady });
  }

  private async take(name: string): Promise<void> {
    if (this.readyIn(name) !== 0) return;
    // on its latest ReqdExctnDt (a pain.001's, or a column's), so that no row of it is left unsent when it moves to done/
    const path = join(this.L.inbox, name);
    // (a link or a hard-linked file is refused unread: no date of it holds it, or every scan would take it again)
    const st = attempt(() => lstatSync(path));
    const date = st && !refusedEntry(path, st) ? await latestExecutionDate(path) : undefined;
    if (date && date > utcDay()) {
      this.notDue.set(name, { mtimeMs: st!.mtimeMs, date });
      // (--once, under cron: nothing to mail every run while it waits, no one need act)
      this.o.logger?.[this.o.once ? 'debug' : 'info'](
        { file: name, notBefore: date },
        `not due until ${date} (ReqdExctnDt, a UTC day): left in the inbox`,
      );
      return;
    }
    const c = await this.claim(name);
    if (!c) return;
    const claim = readClaim(c.claimDir)!;
    if (c.refused) return this.settle(c.claimDir, claim, failed(false, c.refused));
    await this.o.onClaim?.(join(c.claimDir, claim.name));
    await this.settle(c.claimDir, claim, await this.judge(c.claimDir, claim, false));
  }

  private locked<T>(job: () => Promise<T> | T): Promise<T> {
    return withLock(this.L.lock, async () => job(), { waitMs: 60_000, staleMs: 30_000, purpose: 'watch' });
  }

  private takeOver(): Promise<string[]> {
    return this.locked(async () => {
      const taken: string[] = [];
      for (const id of readdirSync(this.L.processing).sort()) {
        const claimDir = join(this.L.processing, id);
        if (this.mine.has(claimDir)) continue;
        const st = statSync(claimDir, { throwIfNoEntry: false });
        if (!st?.isDirectory()) continue;
        const c = readClaim(claimDir);
        if (!c) {
          // (crashed before .claim.json: nothing was claimed; one torn by a power cut beside its file: never deleted)
          const files = (attempt(() => readdirSync(claimDir)) ?? ['(unlisted)']).filter((n) => !n.startsWith('.')); // (another user's)
          if (files.length)
            this.o.logger?.warn({ claim: id, files }, 'no readable .claim.json (a power cut, another user): left in processing/');
          else if (Date.now() - st.mtimeMs > 10_000) rmSync(claimDir, { recursive: true, force: true });
          continue;
        }
        // Gone: a team ledger's claim by its session lock; else by the process table on this host (a
        // blocked owner keeps its claim), or no heartbeat for claimStaleSeconds from another host.
        const abandoned =
          (c.sha256 ? await this.ledger.claimAbandoned(c.sha256, id) : undefined) ??
          isStale(claimFile(claimDir), this.o.config.claimStaleSeconds * 1000);
        let file;
        try {
          file = lstatSync(join(claimDir, c.name), { throwIfNoEntry: false });
        } catch (e) {
          // (read as not there, its folder was deleted: the file and the results of rows it may have paid)
          const why = `${c.name} cannot be looked at (${(e as NodeJS.ErrnoException).code}): left in processing/ until it can`;
          this.o.logger?.warn({ file: c.name, claim: id }, why);
          continue;
        }
        // (crashed before the rename: the file is still in the inbox; moved out by hand once a run wrote its results there:
        // taken over, judged gone, so that the record of the rows sent goes to failed/, never deleted)
        if (!file && !(attempt(() => readdirSync(claimDir)) ?? ['?']).some((n) => !n.startsWith('.') && n !== 'documents')) {
          if (abandoned) rmSync(claimDir, { recursive: true, force: true });
          continue;
        }
        if (!abandoned || notDueYet(c)) continue;
        // (held in the ledger before the lock is let go: another watch of this folder would find the gone holder's claim there)
        const ask = c.sha256 && { account: this.ledger.account, sha256: c.sha256, claim: id, name: c.name, host: hostname() };
        const held = ask ? await this.ledger.claim(ask).catch(() => undefined) : { held: true as const };
        if (!held || (!held.held && held.by.state === 'running')) continue;
        writeClaim(claimDir, { ...c, ...owner(), takenOverAt: new Date().toISOString() });
        this.mine.add(claimDir);
        taken.push(claimDir);
        this.o.logger?.warn(
          { file: c.name, claim: id, previousOwner: { pid: c.pid, host: c.host } },
          'resuming a file left in processing by a stopped run',
        );
      }
      return taken;
    });
  }

  /** A link or special file is claimed too (rename never follows it) but never read: `refused` says why. */
  private claim(name: string): Promise<{ claimDir: string; refused?: string } | undefined> {
    return this.locked(async () => {
      const src = join(this.L.inbox, name);
      const before = lstatSync(src, { throwIfNoEntry: false });
      if (!before) return undefined; // gone (another process took it)
      const id = newClaimId(name);
      const claimDir = join(this.L.processing, id);
      mkdirSync(claimDir);
      const claim: ClaimRecord = { name, ...owner(), claimedAt: new Date().toISOString() };
      writeClaim(claimDir, claim);
      try {
        renameSync(src, join(claimDir, name));
      } catch (e) {
        rmSync(claimDir, { recursive: true, force: true });
        const code = (e as NodeJS.ErrnoException).code;
        if (code === 'ENOENT') return undefined; // another process took it
        if (code !== 'EPERM') throw e; // (EACCES: an inbox this user cannot write, no file can be taken)
        this.unmovable.set(name, before.ctimeMs);
        const why = `cannot be moved out of the inbox (${code}): left there, nothing read or sent; let the user this watch runs as move it`;
        return void this.o.logger?.warn({ file: name }, `${name} ${why}`);
      }
      this.mine.add(claimDir);
      attempt(() => unlinkSync(`${src}.ready`)); // (no marker)
      // its plan and approvals go with it, renamed, never followed (one not dropped: judge() says so)
      if (this.companions)
        for (const c of Object.values(companionsOf(name))) attempt(() => renameSync(join(this.L.inbox, c), join(claimDir, c)));
      const claimed = join(claimDir, name);
      // looked at again: what was looked at before the rename may have been replaced meanwhile
      const st = lstatSync(claimed);
      const refused = refusedEntry(claimed, st);
      if (refused || !st.isFile())
        return { claimDir, refused: `refused: inbox/${name} is ${refused ?? 'not a regular file'}. Nothing was read or sent.` };
      const sha = await fileSha256(claimed).catch((e: NodeJS.ErrnoException) => e);
      if (sha instanceof Error) return { claimDir, refused: cannotRead(`inbox/${name}`, sha, nothingSentText(false)) };
      writeClaim(claimDir, { ...claim, sha256: sha, size: st.size, mtimeMs: st.mtimeMs });
      for (const other of readdirSync(this.L.processing)) {
        const oc = other === id ? undefined : readClaim(join(this.L.processing, other));
        if (oc?.sha256 === sha)
          return { claimDir, refused: `the same content as ${oc.name} (processing/${other}) is being processed; it is not paid twice` };
      }
      return { claimDir };
    });
  }

  /** Why the same content, sent before to this account from anywhere, is not paid again; `here`: this copy, as it will lie in failed/. */
  private async sentBefore(sha: string, here?: string): Promise<string | undefined> {
    const { rows, header: h, interrupted } = (await foldBatch(this.ledger, sha)).folded;
    const sent = [...rows.values()].filter((s) => s.phase !== 'none').length;
    if (sent === 0) return undefined;
    const first = h ? this.whereNow(h.file) : undefined;
    // (its claim folder removed, or the file moved out of it, by hand: said so, never named as where the file is)
    const gone = h !== undefined && this.gone(h.file);
    const place = (d: string) => (!gone ? `in ${d}` : existsSync(d) ? `moved out of ${d}` : `from ${d}, since removed`);
    const where = first ? `${basename(first)} (${place(dirname(first))})` : 'an earlier file';
    const results = h?.results && !this.gone(h.results) ? this.whereNow(h.results) : undefined;
    const retry = results ? `\`${this.command('retry', results)}\`` : '`payout-batch retry` on its results file';
    // (a run killed part way wrote no results: running the file again resumes it from its journal; the first gone, e.g. moved out
    // of its claim folder by hand and dropped again, this copy: the same content)
    const runnable = first && (existsSync(first) || !here) ? first : here;
    const next =
      interrupted && runnable
        ? `Its last run did not end (cut short, or still going): to finish it, run \`${this.command('run', runnable)}\` again`
        : `To re-send failed rows of that batch (once fixed in its results file): ${retry}`;
    return (
      `already processed: the same content as ${where}, first run ${h?.createdAt.slice(0, 19) ?? '?'}Z in ${this.o.conn.environment.name}, ${plural(sent, 'row')} sent. ` +
      `Not paid again. ${next}`
    );
  }

  /** A path under processing/ as it is now: its claim folder may have moved to done/ or failed/. */
  private whereNow(path: string): string {
    const rel = relative(this.L.processing, path);
    if (rel.startsWith('..') || isAbsolute(rel)) return path;
    for (const d of [this.L.processing, this.L.done, this.L.failed]) if (existsSync(join(d, rel.split(sep)[0]!))) return join(d, rel);
    return path;
  }

  /** A path of this watch's claim folders no longer there, wherever its folder moved (any other path is not judged). */
  private gone(path: string): boolean {
    const rel = relative(this.L.processing, path);
    return !rel.startsWith('..') && !isAbsolute(rel) && !existsSync(this.whereNow(path));
  }

  /** An engine's refusal as a watch's: claim paths where they are now, and no --batch-id (a watch has none). */
  private forTheWatch(message: string): string {
    const escaped = this.L.processing.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    const claimPath = new RegExp(`${escaped}/[A-Za-z0-9._-]*[A-Za-z0-9_-]`, 'g');
    return message.replace(claimPath, (p) => this.whereNow(p)).replaceAll(' or its --batch-id', '');
  }

  /** A command for this folder's files, with its state folder, service and key, as the watch runs them. */
  private command(verb: 'run' | 'retry' | 'plan', ...args: string[]): string {
    const env = this.o.conn.environment;
    const parts = ['payout-batch', verb, ...args, '--state-dir', this.L.state];
    if (env.name !== 'custom') parts.push('--env', env.name);
    if (env.name !== 'local' && env.baseUrl) parts.push('--base-url', env.baseUrl);
    if (this.o.config.keyFile) parts.push('--key-file', resolve(this.L.root, this.o.config.keyFile));
    // (a team ledger named only in DIR/payout-batch.json: without it the command finds no journal; its name holds no password)
    if (this.o.conn.shared) parts.push('--ledger', this.o.conn.shared.where);
    return parts.map(shellWord).join(' ');
  }

  /** Refused before sending, or its run through the engine judged. */
  private async judge(claimDir: string, claim: ClaimRecord, resumed: boolean): Promise<Judged> {
    const refuse = (reason: string, kind?: 'unusable' | 'refused', summary?: Record<string, unknown>) =>
      failed(resumed, reason, kind, summary);
    const file = join(claimDir, claim.name);
    // (a link or special file left by a watch stopped before it was settled: still never read)
    const st = lstatSync(file, { throwIfNoEntry: false });
    const notFile = st && (refusedEntry(file, st) ?? (st.isFile() ? undefined : 'not a regular file'));
    if (notFile) return refuse(`refused: ${claim.name} is ${notFile}. It was not read. ${nothingSentText(resumed)}`);
    // (moved out by hand once a run wrote its results here: takeOver keeps them)
    const results = st ? undefined : readdirSync(claimDir).find((n) => n.includes('.results.'));
    if (results) {
      const retry = this.command('retry', join(this.L.failed, basename(claimDir), results));
      return refuse(
        `refused: ${claim.name} was moved out of its claim folder. ${nothingSentText(resumed)} To send its rows not sent: \`${retry}\``,
      );
    }
    const held = await this.holdClaim(claimDir, claim, resumed);
    if ('out' in held) return held;
    resumed = held.resumed;
    // (should the link fail, documents/… paths are not found: the rows say so)
    if (existsSync(this.L.documents) && !existsSync(join(claimDir, 'documents')))
      attempt(() => symlinkSync(this.L.documents, join(claimDir, 'documents'), 'dir'));
    const nothingSent = nothingSentText(resumed);
    try {
      const changedBeforeRun = changedSince(file, claim);
      if (changedBeforeRun) return refuse(changedAfterClaim(claim.name, changedBeforeRun, nothingSent));
      const { config: cfg, conn } = this.o;
      const vetted = await vetRows(file, { ...cfg, name: claim.name, claimDir, documents: this.L.documents });
      // all or nothing unless "allowPartial": every invalid row and risky warning refuses the file
      const whole = cfg.allowPartial ? undefined : vetted.problems;
      const summaryAt = join(this.L.failed, basename(claimDir), summaryName(claim.name));
      if (vetted.documents || vetted.currencies)
        return refuse(refusalText({ ...vetted, problems: whole ?? [] }, summaryAt, nothingSent), 'refused', { problems: vetted.problems });
      const policy = await policyOf(conn, this.ledger);
      const approved = cfg.requireApprovals !== undefined || policy ? await this.approvedPlan(claimDir, claim, policy) : undefined;
      if (typeof approved === 'string') return refuse(`refused: ${approved}. ${nothingSent}`);
      // the policy judges the same checked plan (none: the engine refuses what needs one, and one set since)
      const guard = policy
        ? policyGuard(policy, approved ? policyGate(policy, approved.checked) : { ok: false, message: this.dropPlanText(claim.name) })
        : conn.sandbox
          ? undefined
          : { spend: policySetSince(conn.environment.baseUrl) };
      const { r, changedAtPlan, refusedAtPlan } = await this.send(file, claim, {
        planFile: approved?.planFile,
        policy: guard,
        whole,
        screening: screeningFor(this.L.root, { lists: cfg.sanctionsLists, clearances: 'clearances', approvers: cfg.approvers }, policy),
      });
      // a pain.001's status report, for the ERP that dropped it
      const statusReport = r.resultsWritten
        ? await writeStatusReportBeside(r.resultsPath).catch(
            (e: Error) => void this.o.logger?.warn({ file: claim.name, err: e.message }, 'no status report'),
          )
        : undefined;
      // (claimed once due, then replaced, or on a host whose clock is behind: its rows dated later wait in processing/)
      const notBefore = r.kind === 'not-finished' ? await latestExecutionDate(file) : undefined;
      if (notBefore) writeClaim(claimDir, { ...claim, notBefore });
      const out = judgeRun(r, {
        name: claim.name,
        resumed,
        changedAtPlan,
        refusedWhole: refusedAtPlan && refusalText({ problems: refusedAtPlan }, summaryAt, nothingSent),
        changedInRun: await changedOrEdited(file, claim),
        retry: this.command('retry', join(this.L.failed, basename(claimDir), basename(r.resultsPath))),
        due: notBefore,
      });
      if (out.outcome === 'processing') this.halted.add(claimDir);
      const summary = {
        batchId: r.batchId,
        results: r.resultsWritten ? basename(r.resultsPath) : undefined, // (none when nothing was sent)
        ...(statusReport ? { statusReport: basename(statusReport) } : {}),
        journal: r.journalPath,
        summary: r.summary,
        refused: r.refused,
        halted: r.halted,
        resumedRun: r.report.resumed ? r.report : undefined,
        ...(approved ? { approvedBy: approved.approvedBy } : {}),
        ...(refusedAtPlan ? { problems: refusedAtPlan } : {}),
      };
      return { out, summary };
    } catch (e) {
      if (e instanceof InputError && e.code === 'STOPPED')
        return { out: { resumed, outcome: 'processing', kind: 'ok', reason: 'stopped on request: resumed on the next start' } };
      if (e instanceof InputError || e instanceof ResultsError)
        return refuse(`unusable file: ${e.message}${e instanceof InputError ? ` [${e.code}]` : ''}`, 'unusable');
      if (e instanceof PolicyError) return refuse(`refused: ${e.message}`);
      if (e instanceof BatchUnusable) return refuse(`refused: ${e.message}. ${nothingSent}`); // (a sanctions list that cannot be read)
      if (e instanceof BatchRefused) return refuse(`refused: ${this.forTheWatch(e.message)}`);
      // (a team ledger lost, or a failure once rows may have gone: what went out is journalled, the next run resumes it)
      if (!this.ledger.lost && !(e instanceof FailedAfterSending)) throw e;
      this.halted.add(claimDir);
      return leftToResume(resumed, this.ledger.lost ?? (e as Error));
    }
  }

  /**
   * A file runs only once this process holds its content's claim in the ledger (a file ledger's
   * claim is the folder): new, or taken from a process that is gone (resumed through its journal).
   * Content claimed elsewhere, or sent before, is refused, naming where.
   */
  private async holdClaim(claimDir: string, claim: ClaimRecord, resumed: boolean): Promise<{ resumed: boolean } | Judged> {
    // (no hash recorded: its claimer stopped before it)
    const sha256 = claim.sha256 ?? (await fileSha256(join(claimDir, claim.name)).catch((e: NodeJS.ErrnoException) => e));
    if (sha256 instanceof Error) return failed(resumed, cannotRead(claim.name, sha256, nothingSentText(resumed)));
    claim.sha256 = sha256;
    const ask = { account: this.ledger.account, sha256, claim: basename(claimDir), name: claim.name, host: hostname() };
    let a;
    let sent;
    try {
      // an ended claim runs again only when it failed with nothing sent (a refused file, fixed, dropped again)
      a = await this.ledger.claim(ask, { mayRetake: async (c) => c.state === 'failed' && (await this.sentBefore(sha256)) === undefined });
      sent = !a.held || a.replaced || resumed ? undefined : await this.sentBefore(sha256, join(this.L.failed, ask.claim, claim.name));
    } catch (e) {
      if (!this.ledger.lost) throw e;
      return leftToResume(resumed, this.ledger.lost);
    }
    if (!a.held) {
      this.o.logger?.warn({ file: claim.name, claim: ask.claim, claimedElsewhere: elsewhere(a.by) }, 'claimed elsewhere');
      return failed(resumed, claimedElsewhereText(a.by), 'refused', { claimedElsewhere: elsewhere(a.by) });
    }
    if (a.replaced) this.o.logger?.warn({ file: claim.name, claim: ask.claim, previousClaim: elsewhere(a.replaced) }, 'claim taken over');
    if (sent) return failed(resumed, sent);
    return { resumed: resumed || a.replaced?.state === 'running' };
  }

  /** How a file gets the approved plan a watch runs it with. */
  private dropPlanText(name: string): string {
    const { plan, approvals } = companionsOf(name);
    return (
      `drop ${plan} (\`${this.command('plan', name, '--out', plan)}\`) and ${approvals} ` +
      `(\`payout-batch approve ${shellWord(plan)} --as NAME --key-file KEY\`, once per approver) into the inbox before ${name}`
    );
  }

  /**
   * With "requireApprovals" or the account's policy (both set: both must pass, each with its own list): why the
   * file is refused, or the approved plan, from the checked bytes, pointed at the claimed copy.
   */
  private async approvedPlan(claimDir: string, claim: ClaimRecord, policy?: AccountPolicy) {
    const required = this.o.config.requireApprovals;
    const { plan, approvals } = companionsOf(claim.name);
    // (under the policy alone with `above`, as `run`: no plan, or one short of approvals, and the guard judges the batch)
    const judged = required === undefined && !!policy!.above;
    for (const f of [plan, approvals]) {
      const st = lstatSync(join(claimDir, f), { throwIfNoEntry: false });
      if (!st && judged && f === plan) return undefined;
      if (!st && !judged)
        return required === undefined
          ? policyRefusal(policy!, { ok: false, message: this.dropPlanText(claim.name) })
          : `no ${f} beside it: ${CONFIG_FILE} requires ${plural(required, 'approval')}; ${this.dropPlanText(claim.name)}`;
      if (st && !st.isFile()) return `${f} is ${refusedEntry(join(claimDir, f), st) ?? 'not a regular file'}`;
    }
    const g =
      required === undefined
        ? policyGate(policy!, join(claimDir, plan))
        : approvalGate({ plan: join(claimDir, plan), required, approvers: resolve(this.L.root, this.o.config.approvers!) });
    if (!g.plan || (!g.ok && !judged)) return required === undefined ? policyRefusal(policy!, g) : g.message;
    // (both set: the policy's check too, before any request, unless its `above` lets the guard judge the batch)
    const byPolicy = required !== undefined && policy && !policy.above ? policyRefusal(policy, policyGate(policy, g.plan)) : undefined;
    if (byPolicy) return byPolicy;
    if (g.plan.plan.fileSha256 !== claim.sha256)
      return `${plan} was made for other content (sha256 ${g.plan.plan.fileSha256.slice(0, 16)}…) than ${claim.name} (${claim.sha256?.slice(0, 16)}…)`;
    const other = otherAccount(g.plan.plan, this.o.conn.environment);
    if (other) return `${plan} ${other}`;
    // (the same account under another label, e.g. "custom": the copy run says this watch's environment)
    const planFile = join(claimDir, '.approved-plan.json');
    await writeFile(
      planFile,
      JSON.stringify({ ...g.plan.plan, file: join(claimDir, claim.name), env: this.o.conn.environment.name }, null, 2) + '\n',
    );
    const approvedBy = g.ok ? g.check?.counted : undefined;
    if (approvedBy) this.o.logger?.info({ file: claim.name, approvedBy, approvals: g.message }, 'approved');
    return { planFile, approvedBy, checked: g.plan };
  }

  /** The engine's run of a claimed file; one no longer as claimed once the plan is made is refused before its first payout. */
  private async send(
    file: string,
    claim: ClaimRecord,
    o: { planFile?: string; policy?: Pick<GuardOptions, 'policy' | 'spend'>; whole?: FileProblem[]; screening?: ScreeningOptions },
  ): Promise<{ r: RunResult; changedAtPlan?: string; refusedAtPlan?: FileProblem[] }> {
    const { config: cfg, logger: log } = this.o;
    let batchLabel = '';
    const events: EngineEvents = new EventEmitter();
    events.on('event', (e) => {
      if (e.type === 'row-done') logRowDone(log, e, { file: claim.name, batchId: batchLabel });
      else if (e.type === 'halted') log?.error({ file: claim.name, batchId: batchLabel, reason: e.reason }, 'run halted');
    });
    const claimedDocuments = join(dirname(file), 'documents');
    const prepared = await prepareRun({
      file,
      planFile: o.planFile,
      // (a pain.001's documents, by end-to-end id, as vetRows did)
      ...(existsSync(claimedDocuments) ? { documents: claimedDocuments, documentsIfPain001: true } : {}),
      conn: this.o.conn,
      screening: o.screening,
      stateDir: this.L.state,
      allowDuplicates: cfg.allowDuplicates,
      duplicateWindowMs: durationMs(cfg.duplicateWindow),
      guards: {
        yes: true,
        interactive: false,
        envFlag: this.o.envFlag,
        allowPartial: cfg.allowPartial,
        enablePairs: cfg.enablePairs,
        expectRows: cfg.expectRows,
        expectTotals: cfg.expectTotals.map((t) => parseMoneyFlag(t, 'expectTotals')),
        maxTotals: cfg.maxTotals.map((t) => parseMoneyFlag(t, 'maxTotals')),
        maxRequests: cfg.maxRequests,
        spend: o.policy?.spend,
        ...swapRunOptions(cfg, o.policy?.policy),
      },
      settings: {
        mergeDocuments: cfg.mergeDocuments,
        concurrency: cfg.concurrency,
        stop: this.o.stop,
        events,
        crashWaitMs: this.o.crashWaitMs,
      },
    });
    const p = prepared.plan;
    if (!p) return { r: await execute(prepared) };
    const changedAtPlan =
      changedSince(file, claim) ??
      (claim.sha256 && p.fileSha256 !== claim.sha256 ? 'its content is not the one hashed at the claim' : undefined);
    // a file none of whose rows is under way yet is paid whole or not at all (the preflight's findings too)
    const problems = o.whole && p.alreadyCreated === 0 && p.toSettle === 0 ? wholeFileProblems(o.whole, p, claim.name) : [];
    const refusedAtPlan = problems.length ? problems : undefined;
    batchLabel = p.batchId.slice(0, 16);
    log?.info(
      { file: claim.name, batchId: batchLabel, toSend: p.toSend.length, alreadyCreated: p.alreadyCreated, currencies: p.currencies },
      'plan',
    );
    // a payee held by the screening refuses the file whole, whatever "allowPartial" says
    const held = screeningReasons(p, false)[0];
    const refused = changedAtPlan
      ? `${claim.name} changed after it was claimed (${changedAtPlan})`
      : held
        ? `${claim.name} is refused whole: ${held}`
        : refusedAtPlan && `${claim.name} is paid whole or not at all: ${refusedAtPlan.length} problems`;
    return { r: await execute(prepared, { refused }), changedAtPlan, refusedAtPlan };
  }

  /** To done/ or failed/, its summary written first; one still processing stays. */
  private async settle(claimDir: string, claim: ClaimRecord, { out, summary = {} }: Judged): Promise<void> {
    const id = basename(claimDir);
    const to = out.outcome === 'processing' ? claimDir : join(out.outcome === 'done' ? this.L.done : this.L.failed, id);
    out = { ...out, reason: out.reason?.replaceAll(claimDir, to) }; // (a reason naming the claim's files names them where they will lie)
    const f: FileOutcome = { ...out, name: claim.name, claim: id, folder: to, summary: summary.summary as RunSummary | undefined };
    if (out.outcome !== 'processing') {
      const record = {
        file: claim.name,
        sha256: claim.sha256,
        claim: id,
        claimedAt: claim.claimedAt,
        takenOverAt: claim.takenOverAt,
        finishedAt: new Date().toISOString(),
        environment: this.o.conn.environment.name,
        outcome: out.outcome,
        kind: out.kind,
        reason: out.reason,
        ...summary,
      };
      await writeFile(join(claimDir, summaryName(claim.name)), JSON.stringify(record, null, 2) + '\n');
      for (const p of (summary.problems as FileProblem[] | undefined) ?? [])
        this.o.logger?.warn({ file: p.file, row: p.row, column: p.column, code: p.code, expected: p.expected, risky: p.risky }, p.message);
      await this.locked(() => renameSync(claimDir, to));
      this.mine.delete(claimDir);
      this.halted.delete(claimDir);
      // unrecorded, it stays `running` under this process: once gone, another host takes it over and finds it done in its journal
      if (claim.sha256)
        await this.ledger.endClaim(claim.sha256, id, out.outcome).catch((e: Error) => {
          this.o.logger?.error({ file: claim.name, claim: id, err: e.message }, 'the end of the claim was not recorded in the team ledger');
        });
    }
    this.files.push(f);
    this.o.onFile?.(f);
    this.o.logger?.[f.kind === 'ok' ? 'info' : 'warn'](
      { file: f.name, claim: f.claim, outcome: f.outcome, kind: f.kind, reason: f.reason },
      `file ${f.outcome}`,
    );
  }
}

export const watchFolder = (o: WatchOptions): Promise<WatchResult> => new FolderWatch(o).run();
const notDueYet = (c?: ClaimRecord) => (c?.notBefore ?? '') > utcDay();
