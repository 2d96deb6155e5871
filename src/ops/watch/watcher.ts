// The watch itself: a cron job's steps over one folder, each a method of FolderWatch: tick() takes
// over abandoned claims first, then claims each complete inbox file, process()es it through the
// engine and settle()s it into done/ or failed/ (or leaves it in processing/).
//
// Every move happens under the folder's lock (locked()), held for milliseconds; the engine's run is
// outside it, so two watches on one folder share the files between them.
import {
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { utimes, writeFile } from 'node:fs/promises';
import { setTimeout as delay } from 'node:timers/promises';
import { hostname } from 'node:os';
import { basename, extname, join, resolve } from 'node:path';
import type { Logger } from 'pino';
import { approvalGate } from '../../approvals/gate.ts';
import { PolicyError, policyGate, policyGuard, readAccountPolicy, type AccountPolicy } from '../../approvals/account-policy.ts';
import type { LoadedPlan } from '../../approvals/payload.ts';
import type { Connection } from '../../client/connect.ts';
import { parseMoneyFlag, type GuardOptions } from '../../engine/approval.ts';
import { fileSha256 } from '../../engine/identity.ts';
import { findBatchJournal, ledgerOf, type Ledger } from '../../engine/ledger.ts';
import { ENGINE_STATUSES, isCreatedStatus, logRowDone } from '../../engine/outcome.ts';
import { runBatch, type RunResult } from '../../engine/pipeline.ts';
import { foldJournalFile } from '../../journal/rows.ts';
import { BatchRefused } from '../../engine/session.ts';
import { InputError } from '../../input/errors.ts';
import { ResultsError } from '../../results/errors.ts';
import { isStale, myStart, withLock } from '../../files/lock.ts';
import { vetRows } from './checks.ts';
import { changedSince, claimFile, newClaimId, readClaim, writeClaim, type ClaimRecord } from './claims.ts';
import { CONFIG_FILE, swapRunOptions, type WatchConfig } from './config.ts';
import { companionsOf, completeIn, inboxCandidates, layout, refusedEntry } from './inbox.ts';

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
  /** Opened once by the caller and used for every file: one client, so one limiter paces the key. */
  conn: Connection;
  once: boolean;
  /** --env as given on the command line (production must be named there too). */
  envFlag?: string;
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

type RunJudgement = Omit<FileOutcome, 'folder' | 'claim' | 'name'>;

/** The exit codes are ordered by severity: the worst is the highest. */
export const worstExit = (codes: number[]): 0 | 1 | 2 | 3 | 4 => Math.max(0, ...codes) as 0 | 1 | 2 | 3 | 4;

/** Waits ms, or less when stopped. */
const sleep = (ms: number, stop?: AbortSignal) => delay(ms, undefined, { signal: stop }).catch(() => undefined);

const WRITE_WHOLE = (name: string) =>
  `A writer must finish the file, then create ${name}.ready beside it (and ${CONFIG_FILE} may say "requireReady": true).`;

const unusable = (e: InputError | ResultsError) => `unusable file: ${e.message}${e instanceof InputError ? ` [${e.code}]` : ''}`;

const changedAfterClaim = (name: string, what: string, nothingSent: string) =>
  `refused: ${name} changed after it was claimed (${what}). ${nothingSent} ${WRITE_WHOLE(name)}`;

/**
 * Where a claimed file goes once the engine has run it. `changedAtPlan`: the file was not the one
 * claimed when the engine had read it (nothing was sent); `changedInRun`: it changed once rows were
 * under way (they were paid as read at the claim; what the writer added since was not).
 */
export function judgeRun(r: RunResult, o: { name: string; resumed: boolean; changedAtPlan?: string; changedInRun?: string }): RunJudgement {
  const { name, resumed } = o;
  const judged = (outcome: RunJudgement['outcome'], exitCode: RunJudgement['exitCode'], reason?: string): RunJudgement =>
    reason === undefined ? { resumed, outcome, exitCode } : { resumed, outcome, exitCode, reason };
  const nothingSent = resumed ? 'Nothing more was sent.' : 'Nothing was sent.';
  if (o.changedAtPlan) return judged('failed', 3, changedAfterClaim(name, o.changedAtPlan, nothingSent));
  if (r.stopped) return judged('processing', r.exitCode === 4 ? 4 : 0, 'stopped on request: resumed on the next start');
  if (r.exitCode === 4) return judged('processing', 4, `service unavailable: ${r.halted}; left in processing/, resumed on the next run`);
  if (r.exitCode === 3) return judged('failed', 3, `refused by the guards: ${(r.refused ?? []).join('; ')}`);
  if (o.changedInRun)
    return judged(
      'failed',
      1,
      `${name} changed while it was processed (${o.changedInRun}): the rows read at the claim were processed ` +
        `(${r.summary.created} created, see ${basename(r.resultsPath)}); anything written after was NOT processed: send it in a new file. ` +
        WRITE_WHOLE(name),
    );
  if (r.exitCode === 1) {
    const bad = Object.entries(r.summary.byStatus)
      .filter(([k]) => !isCreatedStatus(k))
      .map(([k, n]) => `${n} ${k}`)
      .join(', ');
    const unknown = r.summary.byStatus[ENGINE_STATUSES.UNKNOWN_OUTCOME]
      ? ' (rows of unknown outcome are settled with their original key by retry)'
      : '';
    const reason = `${r.summary.created} created, ${bad}: see ${basename(r.resultsPath)}; fix the rows and run \`payout-batch retry\` on it${unknown}`;
    return judged('failed', 1, reason);
  }
  return judged('done', 0);
}

/** A new file just claimed: its folder, and why it is not run (a link, or content already sent). */
interface Claimed {
  claimDir: string;
  refused?: string;
}

export class FolderWatch {
  private readonly L: ReturnType<typeof layout>;
  private readonly staleMs: number;
  private readonly settleMs: number;
  private readonly ledger: Ledger;
  private readonly files: FileOutcome[] = [];
  /** Claim folders this process holds. */
  private readonly mine = new Set<string>();
  /** Claims of ours left in processing (service unreachable): tried again on each tick. */
  private readonly halted = new Set<string>();
  private notComplete: string[] = [];

  constructor(private readonly o: WatchOptions) {
    this.L = layout(o.dir, o.config);
    for (const d of [this.L.inbox, this.L.processing, this.L.done, this.L.failed]) mkdirSync(d, { recursive: true });
    this.staleMs = o.config.claimStaleSeconds * 1000;
    this.settleMs = o.config.settleSeconds * 1000;
    this.ledger = ledgerOf(o.conn, { root: this.L.state });
  }

  private get stopped(): boolean {
    return this.o.stop?.aborted ?? false;
  }

  /** With --once one tick; else a tick every pollSeconds until stopped. */
  async run(): Promise<WatchResult> {
    if (this.o.once) await this.tick();
    else
      while (!this.stopped) {
        await this.tick();
        await sleep(this.o.config.pollSeconds * 1000, this.o.stop);
      }
    return { exitCode: worstExit(this.files.map((f) => f.exitCode)), files: [...this.files], notComplete: [...this.notComplete] };
  }

  /** One look at the folder: claims left by a stopped run first, then new files. */
  async tick(): Promise<void> {
    await this.resumeAbandoned();
    if (this.stopped) return;
    await this.takeNewFiles();
  }

  /** Claims left by a stopped run, and our own halted ones, run again through their journals. */
  private async resumeAbandoned(): Promise<void> {
    for (const claimDir of [...(await this.takeOver()), ...this.halted]) {
      if (this.stopped) return;
      this.halted.delete(claimDir);
      if (existsSync(claimDir)) await this.process(claimDir, true);
    }
  }

  /** New files, complete ones only, until the inbox has none left to take. */
  private async takeNewFiles(): Promise<void> {
    let waitedOnce = false;
    for (;;) {
      if (this.stopped) return;
      const { ready, wait } = this.scanInbox();
      for (const n of ready) {
        if (this.stopped) return;
        await this.take(n);
      }
      if (ready.length) continue; // new files may have arrived meanwhile
      // --once: a file that was still being written when we looked gets one more look when it would have settled.
      if (this.o.once && !waitedOnce && wait !== Infinity && wait <= this.settleMs + 1000) {
        waitedOnce = true;
        await sleep(wait + 50, this.o.stop);
        continue;
      }
      break;
    }
    for (const n of this.notComplete) this.o.logger?.info({ file: n }, 'not complete yet: left in the inbox');
  }

  /** The inbox entries to take now; the others are `notComplete`, `wait` the ms until the first of them would have settled. */
  private scanInbox(): { ready: string[]; wait: number } {
    const ready: string[] = [];
    let wait = Infinity;
    this.notComplete = [];
    for (const n of inboxCandidates(this.L.inbox, { companions: this.o.config.requireApprovals !== undefined })) {
      const ms = this.readyIn(n);
      if (ms === 0) ready.push(n);
      else if (ms !== null) {
        this.notComplete.push(n);
        if (ms > 0) wait = Math.min(wait, ms);
      }
    }
    return { ready, wait };
  }

  /**
   * Milliseconds until an inbox entry may be taken: 0 now (complete, or a link or special file,
   * refused at once: there is nothing to wait for, it is never read), -1 never by time (it needs
   * its marker), null when it is gone.
   */
  private readyIn(name: string): number | null {
    const path = join(this.L.inbox, name);
    try {
      if (refusedEntry(path, lstatSync(path))) return 0;
    } catch {
      return null;
    }
    return completeIn(this.L.inbox, name, { settleMs: this.settleMs, requireReady: this.o.config.requireReady });
  }

  /** Claims one file found ready, and runs it, or settles it at once when it must not be run. */
  private async take(name: string): Promise<void> {
    // Checked again just before the claim: still unchanged (a link is refused by claim()).
    if (this.readyIn(name) !== 0) return;
    const c = await this.claim(name);
    if (!c) return;
    const claim = readClaim(c.claimDir)!;
    if (c.refused) return this.settle(c.claimDir, claim, { outcome: 'failed', exitCode: 3, reason: c.refused, resumed: false });
    await this.o.onClaim?.(join(c.claimDir, claim.name));
    await this.process(c.claimDir, false);
  }

  /** The short critical section around every move. */
  private locked<T>(job: () => Promise<T> | T): Promise<T> {
    return withLock(this.L.lock, async () => job(), { waitMs: 60_000, staleMs: 30_000, purpose: 'watch' });
  }

  /** Takes over claims whose owner is gone (crash), under the lock. */
  private takeOver(): Promise<string[]> {
    return this.locked(() => {
      const taken: string[] = [];
      for (const id of readdirSync(this.L.processing).sort()) {
        const claimDir = join(this.L.processing, id);
        if (this.mine.has(claimDir)) continue;
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
        // Its owner is gone: on this host by the process table (a live owner keeps its claim whatever
        // its heartbeat: a blocked process would otherwise have its file paid twice at once); from
        // another host, no heartbeat for claimStaleSeconds.
        const abandoned = isStale(claimFile(claimDir), this.staleMs);
        if (!existsSync(join(claimDir, c.name))) {
          // Crashed between claim.json and the rename: the file is still in the inbox.
          if (abandoned) rmSync(claimDir, { recursive: true, force: true });
          continue;
        }
        if (!abandoned) continue;
        writeClaim(claimDir, {
          ...c,
          pid: process.pid,
          host: hostname(),
          pidStart: myStart().pidStart,
          takenOverAt: new Date().toISOString(),
        });
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

  /**
   * Claims one inbox entry, and checks its content was never sent before. A link or special file
   * is claimed too (the link itself: rename never follows it) but never read: `refused` says why.
   */
  private claim(name: string): Promise<Claimed | undefined> {
    return this.locked(async (): Promise<Claimed | undefined> => {
      const src = join(this.L.inbox, name);
      try {
        lstatSync(src);
      } catch {
        return undefined; // gone (another process took it)
      }
      const id = newClaimId(name);
      const claimDir = join(this.L.processing, id);
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
      this.mine.add(claimDir);
      try {
        unlinkSync(`${src}.ready`);
      } catch {
        /* no marker */
      }
      // Its plan and approvals go with it, in the same critical section (renamed, never followed).
      if (this.o.config.requireApprovals !== undefined)
        for (const c of Object.values(companionsOf(name))) {
          try {
            renameSync(join(this.L.inbox, c), join(claimDir, c));
          } catch {
            /* not dropped: process() says so */
          }
        }
      const claimed = join(claimDir, name);
      // Looked at again after the rename: what was looked at before may have been replaced meanwhile.
      const st = lstatSync(claimed);
      const refused = refusedEntry(claimed, st);
      if (refused || !st.isFile())
        return { claimDir, refused: `refused: inbox/${name} is ${refused ?? 'not a regular file'}. Nothing was read or sent.` };
      const sha = await fileSha256(claimed);
      writeClaim(claimDir, { ...claim, sha256: sha, size: st.size, mtimeMs: st.mtimeMs });
      return { claimDir, refused: this.duplicateOf(claimDir, sha) };
    });
  }

  /** Why content just claimed must not be paid: the same content is being processed, or was sent before. */
  private duplicateOf(claimDir: string, sha: string): string | undefined {
    // The same content under another claim still in processing/ (another watch, or one to resume).
    for (const other of readdirSync(this.L.processing)) {
      const od = join(this.L.processing, other);
      if (od === claimDir) continue;
      const oc = readClaim(od);
      if (oc?.sha256 === sha) return `the same content as ${oc.name} (processing/${other}) is being processed; it is not paid twice`;
    }
    // The same content sent before to this account, from here or anywhere (its journal has sent rows).
    const jp = findBatchJournal(this.ledger, sha);
    if (!jp) return undefined;
    const { folded } = foldJournalFile(jp);
    const sent = [...folded.rows.values()].filter((s) => s.phase !== 'none').length;
    if (sent === 0) return undefined;
    const h = folded.header;
    const where = h ? `${basename(h.file)} (claim ${basename(resolve(h.file, '..'))})` : 'an earlier file';
    return (
      `already processed: the same content as ${where}, first run ${h?.createdAt.slice(0, 19) ?? '?'}Z in ${this.o.conn.environment.name}, ${sent} row${sent === 1 ? '' : 's'} sent. ` +
      'Not paid again. To re-send failed rows of that batch, run `payout-batch retry` on its results file.'
    );
  }

  /** Touches claim.json while the file is processed, so other hosts see its owner alive. */
  private heartbeat(claimDir: string): () => void {
    const touch = () => utimes(claimFile(claimDir), new Date(), new Date()).catch(() => undefined); // (moved meanwhile)
    const beat = setInterval(() => void touch(), Math.max(1000, Math.min(10_000, this.staleMs / 4)));
    beat.unref();
    return () => clearInterval(beat);
  }

  /** Runs one claimed file: vetted, sent through the engine, then settled where its outcome says. */
  private async process(claimDir: string, resumed: boolean): Promise<void> {
    const claim = readClaim(claimDir)!;
    const file = join(claimDir, claim.name);
    const stopBeat = this.heartbeat(claimDir);
    try {
      if (existsSync(this.L.documents) && !existsSync(join(claimDir, 'documents'))) {
        try {
          symlinkSync(this.L.documents, join(claimDir, 'documents'), 'dir');
        } catch {
          /* documents/… paths are then not found: the rows say so */
        }
      }
      const refuse = (reason: string, exitCode: 2 | 3 = 3) =>
        this.settle(claimDir, claim, { resumed, outcome: 'failed', exitCode, reason });
      const nothingSent = resumed ? 'Nothing more was sent.' : 'Nothing was sent.';
      const changedBeforeRun = changedSince(file, claim);
      if (changedBeforeRun) return await refuse(changedAfterClaim(claim.name, changedBeforeRun, nothingSent));
      let vetted: string | undefined;
      try {
        vetted = await vetRows(file, {
          claimDir,
          documents: this.L.documents,
          allowOutside: this.o.config.allowDocumentsOutside,
          allowedCurrencies: this.o.config.allowedCurrencies,
        });
      } catch (e) {
        if (e instanceof InputError || e instanceof ResultsError) return await refuse(unusable(e), 2);
        throw e;
      }
      if (vetted) return await refuse(`${vetted}. ${nothingSent}`);
      let policy: AccountPolicy | undefined;
      try {
        policy = this.ledger.ephemeral ? undefined : readAccountPolicy(this.ledger.dir);
      } catch (e) {
        if (e instanceof PolicyError) return await refuse(`refused: ${e.message}`);
        throw e;
      }
      const approved = this.o.config.requireApprovals !== undefined ? this.approvedPlan(claimDir, claim, file) : undefined;
      if (typeof approved === 'string') return await refuse(`refused: ${approved}. ${nothingSent}`);
      // The account's approval policy applies too, to the same checked plan (none: the engine refuses what needs one).
      const guard = policy && policyGuard(policy, approved && policyGate(policy, approved.checked));

      let sent: { r: RunResult; changedAtPlan?: string };
      try {
        sent = await this.send(file, claim, approved?.planFile, guard);
      } catch (e) {
        if (e instanceof BatchRefused) return await refuse(`refused: ${e.message}`);
        if (e instanceof InputError || e instanceof ResultsError) return await refuse(unusable(e), 2);
        throw e;
      }
      const { r, changedAtPlan } = sent;
      const out = judgeRun(r, { name: claim.name, resumed, changedAtPlan, changedInRun: changedSince(file, claim) });
      if (out.outcome === 'processing') this.halted.add(claimDir);
      return await this.settle(claimDir, claim, out, {
        batchId: r.batchId,
        results: basename(r.resultsPath),
        journal: r.journalPath,
        summary: r.summary,
        refused: r.refused,
        halted: r.halted,
        resumedRun: r.report.resumed ? r.report : undefined,
        ...(approved ? { approvedBy: approved.approvedBy } : {}),
      });
    } finally {
      stopBeat();
    }
  }

  /**
   * With "requireApprovals": the plan and approvals claimed with the file, checked (src/approvals);
   * why the file is refused, or the plan to run: the one approved, pointed at the claimed copy of the
   * file (the engine checks a plan's file by path, then sha256 and environment), written from the
   * bytes that were checked.
   */
  private approvedPlan(
    claimDir: string,
    claim: ClaimRecord,
    file: string,
  ): { planFile: string; approvedBy: string[]; checked: LoadedPlan } | string {
    const required = this.o.config.requireApprovals!;
    const { plan, approvals } = companionsOf(claim.name);
    for (const f of [plan, approvals]) {
      let st;
      try {
        st = lstatSync(join(claimDir, f));
      } catch {
        return (
          `no ${f} beside it: ${CONFIG_FILE} requires ${required} approval${required === 1 ? '' : 's'}; drop ${plan} ` +
          `(\`payout-batch plan FILE --out\`) and ${approvals} (\`payout-batch approve\`) into the inbox before ${claim.name}`
        );
      }
      if (!st.isFile()) return `${f} is ${refusedEntry(join(claimDir, f), st) ?? 'not a regular file'}`;
    }
    const g = approvalGate({ plan: join(claimDir, plan), required, approvers: resolve(this.L.root, this.o.config.approvers!) });
    if (!g.ok || !g.plan || !g.check) return g.message;
    if (g.plan.plan.fileSha256 !== claim.sha256)
      return `${plan} was made for other content (sha256 ${g.plan.plan.fileSha256.slice(0, 16)}…) than ${claim.name} (${claim.sha256?.slice(0, 16)}…)`;
    const planFile = join(claimDir, '.approved-plan.json');
    writeFileSync(planFile, JSON.stringify({ ...g.plan.plan, file }, null, 2) + '\n');
    this.o.logger?.info({ file: claim.name, approvedBy: g.check.counted, approvals: g.message }, 'approved');
    return { planFile, approvedBy: g.check.counted, checked: g.plan };
  }

  /**
   * The engine's run of a claimed file, with the configuration's guards, logging each row. The
   * engine reads the file again: if it is not what was claimed by the time the plan is made (all
   * rows read, nothing sent yet), the run is stopped before its first payout (`changedAtPlan`).
   */
  private async send(
    file: string,
    claim: ClaimRecord,
    planFile?: string,
    policy?: GuardOptions['policy'],
  ): Promise<{ r: RunResult; changedAtPlan?: string }> {
    const { config: cfg, logger: log } = this.o;
    let changedAtPlan: string | undefined;
    const halt = new AbortController();
    const stop = this.o.stop ? AbortSignal.any([this.o.stop, halt.signal]) : halt.signal;
    let batchLabel = '';
    const r = await runBatch({
      file,
      planFile,
      conn: this.o.conn,
      stateDir: this.L.state,
      yes: true,
      interactive: false,
      envFlag: this.o.envFlag,
      allowPartial: cfg.allowPartial,
      enablePairs: cfg.enablePairs,
      expectRows: cfg.expectRows,
      expectTotals: cfg.expectTotals.map((t) => parseMoneyFlag(t, 'expectTotals')),
      maxTotals: cfg.maxTotals.map((t) => parseMoneyFlag(t, 'maxTotals')),
      maxRequests: cfg.maxRequests,
      ...swapRunOptions(cfg, policy),
      mergeDocuments: cfg.mergeDocuments,
      concurrency: cfg.concurrency,
      stop,
      crashWaitMs: this.o.crashWaitMs,
      onPlan: (p) => {
        changedAtPlan =
          changedSince(file, claim) ??
          (claim.sha256 && p.batchId !== claim.sha256 ? 'its content is not the one hashed at the claim' : undefined);
        if (changedAtPlan) halt.abort();
        batchLabel = p.batchId.slice(0, 16);
        log?.info(
          { file: claim.name, batchId: batchLabel, toSend: p.toSend.length, alreadyCreated: p.alreadyCreated, currencies: p.currencies },
          'plan',
        );
      },
      onEvent: (e) => {
        if (e.type === 'row-done') logRowDone(log, e, { file: claim.name, batchId: batchLabel });
        else if (e.type === 'halted') log?.error({ file: claim.name, batchId: batchLabel, reason: e.reason }, 'run halted');
      },
    });
    return { r, changedAtPlan };
  }

  /** Moves a claim folder to done/ or failed/ (summary written first); one still processing stays. */
  private async settle(claimDir: string, claim: ClaimRecord, out: RunJudgement, summary: Record<string, unknown> = {}): Promise<void> {
    const id = basename(claimDir);
    if (out.outcome === 'processing') {
      this.report({ ...out, name: claim.name, claim: id, folder: claimDir });
      return;
    }
    const record = {
      file: claim.name,
      sha256: claim.sha256,
      claim: id,
      claimedAt: claim.claimedAt,
      takenOverAt: claim.takenOverAt,
      finishedAt: new Date().toISOString(),
      environment: this.o.conn.environment.name,
      outcome: out.outcome,
      exitCode: out.exitCode,
      reason: out.reason,
      ...summary,
    };
    const stem = basename(claim.name, extname(claim.name));
    await writeFile(join(claimDir, `${stem}.summary.json`), JSON.stringify(record, null, 2) + '\n');
    const target = join(out.outcome === 'done' ? this.L.done : this.L.failed, id);
    await this.locked(() => renameSync(claimDir, target));
    this.mine.delete(claimDir);
    this.halted.delete(claimDir);
    this.report({ ...out, name: claim.name, claim: id, folder: target });
  }

  private report(f: FileOutcome): void {
    this.files.push(f);
    this.o.onFile?.(f);
    this.o.logger?.[f.exitCode === 0 ? 'info' : 'warn'](
      { file: f.name, claim: f.claim, outcome: f.outcome, exitCode: f.exitCode, reason: f.reason },
      `file ${f.outcome}`,
    );
  }
}

/** Watches DIR as the options say; with `once`, one look at it. */
export const watchFolder = (o: WatchOptions): Promise<WatchResult> => new FolderWatch(o).run();
