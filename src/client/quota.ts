// The monthly quota as counted here (spec §8: 10,000 requests per month per API key): the service
// shows no counter, so every request is counted per key (by fingerprint) per calendar month (UTC),
// in a JSON file or in the team ledger (ledger/pg-usage.ts). Other machines (without the ledger) and
// other tools are not in the count: say so wherever it is shown.
import { promises as fs } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { readJsonFile, writeFileAtomic } from '../files/atomic.ts';
import { withLock } from '../files/lock.ts';
import { MONTHLY_QUOTA } from '../spec/codes.ts';

/** The label a key was used under: local runs count as sandbox (both are not production). */
export type KeyEnvironment = 'production' | 'sandbox';

interface KeyUsage {
  /** 'YYYY-MM' (UTC) -> requests sent. */
  months: Record<string, number>;
  /** The environment the key answered 2xx in, once seen: lets the tool refuse mixing. */
  environment?: KeyEnvironment;
  lastUsedAt?: string;
}
interface UsageFile {
  version: 1;
  keys: Record<string, KeyUsage>;
}

/**
 * Where the usage file lives: $PAYOUT_BATCH_STATE_DIR, else $XDG_STATE_HOME/payout-batch, else
 * ~/.local/state/payout-batch (on Windows %LOCALAPPDATA%\payout-batch).
 */
export function defaultStateDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.PAYOUT_BATCH_STATE_DIR) return env.PAYOUT_BATCH_STATE_DIR;
  if (env.XDG_STATE_HOME) return join(env.XDG_STATE_HOME, 'payout-batch');
  if (process.platform === 'win32' && env.LOCALAPPDATA) return join(env.LOCALAPPDATA, 'payout-batch');
  return join(homedir(), '.local', 'state', 'payout-batch');
}

export const monthOf = (d: Date): string => d.toISOString().slice(0, 7);

export interface UsageReport {
  fingerprint: string;
  month: string;
  /** Requests counted here this month, including ones not yet flushed to the file. */
  used: number;
  quota: number;
  remaining: number;
}

/** Where the counts are kept: this host's usage file (UsageFileStore), or the team ledger. */
export interface UsageStore {
  /** For messages: the file, or the ledger without its password. */
  readonly where: string;
  /** Adds requests (fingerprint -> month -> n) to the kept ones, never overwriting another process's, and records where keys worked. */
  add(counts: ReadonlyMap<string, ReadonlyMap<string, number>>, labels: ReadonlyMap<string, KeyEnvironment>, at: Date): Promise<void>;
  requests(fingerprint: string, month: string): Promise<number>;
  environmentOf(fingerprint: string): Promise<string | undefined>;
}

/**
 * Counts requests in memory and adds them to the store on flush (at most every `flushMs`, and on
 * close): the usage file of the state folder, unless another store is given (the team ledger's).
 * The file is re-read under its lock (files/lock.ts) at each flush and this process's delta added,
 * so two processes using the same key add up instead of overwriting each other.
 */
export class UsageCounter {
  /** The usage file; undefined when the counts are kept elsewhere (`store`). */
  readonly path: string | undefined;
  /** The folder of the usage file: the per-user state of the keys (pace.ts keeps their pace there too). */
  readonly stateDir: string | undefined;
  readonly store: UsageStore;
  private readonly flushMs: number;
  private readonly now: () => Date;
  /** fingerprint -> month -> requests not yet written. */
  private pending = new Map<string, Map<string, number>>();
  private labels = new Map<string, KeyEnvironment>();
  private timer: ReturnType<typeof setTimeout> | undefined;
  /** The last flush or read, settled: the next waits for it. */
  private flushing: Promise<unknown> = Promise.resolve();

  constructor(options: { path?: string; stateDir?: string; store?: UsageStore; flushMs?: number; now?: () => Date } = {}) {
    const file = options.store ? undefined : new UsageFileStore(options.path ?? join(options.stateDir ?? defaultStateDir(), 'usage.json'));
    this.store = options.store ?? file!;
    this.path = file?.path;
    this.stateDir = file && dirname(file.path);
    this.flushMs = options.flushMs ?? 1000;
    this.now = options.now ?? (() => new Date());
  }

  /** One request sent with the key of this fingerprint. */
  count(fingerprint: string, n = 1): void {
    this.addPending(fingerprint, monthOf(this.now()), n);
    this.schedule();
  }

  /** Remember the environment a key worked in (after a 2xx), to refuse it elsewhere later. */
  label(fingerprint: string, environment: KeyEnvironment): void {
    if (this.labels.get(fingerprint) === environment) return;
    this.labels.set(fingerprint, environment);
    this.schedule();
  }

  private schedule(): void {
    if (this.timer || this.flushMs <= 0) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.flush().catch(() => undefined);
    }, this.flushMs);
    this.timer.unref?.();
  }

  /** Writes pending counts; safe to call any time, serialised with itself. */
  flush(): Promise<void> {
    const run = this.flushing.then(() => this.write());
    this.flushing = run.catch(() => undefined);
    return run;
  }

  async close(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    await this.flush();
  }

  private async write(): Promise<void> {
    if (this.pending.size === 0 && this.labels.size === 0) return;
    const pending = this.pending;
    const labels = this.labels;
    this.pending = new Map();
    this.labels = new Map();
    try {
      await this.store.add(pending, labels, this.now());
    } catch (e) {
      // Put the counts back so the next flush retries them.
      for (const [fp, months] of pending) for (const [month, n] of months) this.addPending(fp, month, n);
      for (const [fp, env] of labels) if (!this.labels.has(fp)) this.labels.set(fp, env);
      throw e;
    }
  }

  private addPending(fp: string, month: string, n: number): void {
    let m = this.pending.get(fp);
    if (!m) this.pending.set(fp, (m = new Map<string, number>()));
    m.set(month, (m.get(month) ?? 0) + n);
  }

  /** This month's count for a key: the store's plus what this process has not written yet. */
  async usage(fingerprint: string, quota: number = MONTHLY_QUOTA): Promise<UsageReport> {
    const month = monthOf(this.now());
    // read in turn with the flushes: a request being written is neither missed nor counted twice
    const read = this.flushing.then(
      async () => (await this.store.requests(fingerprint, month)) + (this.pending.get(fingerprint)?.get(month) ?? 0),
    );
    this.flushing = read.catch(() => undefined);
    const used = await read;
    return { fingerprint, month, used, quota, remaining: Math.max(0, quota - used) };
  }

  /** The environment a key was last seen working in, if any. */
  async environmentOf(fingerprint: string): Promise<KeyEnvironment | undefined> {
    const seen = this.labels.get(fingerprint) ?? (await this.store.environmentOf(fingerprint));
    return seen === 'production' || seen === 'sandbox' ? seen : undefined;
  }
}

/** The usage file of a state folder: one per user on this host, added to under its lock. */
class UsageFileStore implements UsageStore {
  constructor(readonly path: string) {}

  get where(): string {
    return `file ${this.path}`;
  }

  async add(
    counts: ReadonlyMap<string, ReadonlyMap<string, number>>,
    labels: ReadonlyMap<string, KeyEnvironment>,
    at: Date,
  ): Promise<void> {
    await fs.mkdir(dirname(this.path), { recursive: true, mode: 0o700 });
    await withLock(
      `${this.path}.lock`,
      async () => {
        const file = readUsageFile(this.path);
        for (const [fp, months] of counts) {
          const k = (file.keys[fp] ??= { months: {} });
          for (const [month, n] of months) k.months[month] = (k.months[month] ?? 0) + n;
          k.lastUsedAt = at.toISOString();
        }
        for (const [fp, env] of labels) (file.keys[fp] ??= { months: {} }).environment = env;
        await writeFileAtomic(this.path, JSON.stringify(file, null, 2) + '\n', { mode: 0o600 });
      },
      { waitMs: 5000, staleMs: 10_000, purpose: 'quota count' },
    );
  }

  async requests(fingerprint: string, month: string): Promise<number> {
    return readUsageFile(this.path).keys[fingerprint]?.months[month] ?? 0;
  }

  async environmentOf(fingerprint: string): Promise<KeyEnvironment | undefined> {
    return readUsageFile(this.path).keys[fingerprint]?.environment;
  }
}

/** "this batch needs about N requests; this key has used M of 10,000 this month, as counted here" */
export function quotaSentence(needed: number, usage: UsageReport): string {
  const fmt = (n: number) => n.toLocaleString('en-US');
  const base =
    `this batch needs about ${fmt(needed)} requests; this key has used ${fmt(usage.used)} of ` +
    `${fmt(usage.quota)} this month (${usage.month}, UTC), as counted here`;
  return needed > usage.remaining ? `${base}: that is more than the ${fmt(usage.remaining)} left` : base;
}

function readUsageFile(path: string): UsageFile {
  const parsed = readJsonFile(path) as UsageFile | undefined;
  // a damaged counter starts again rather than stopping the tool
  return parsed?.version === 1 && typeof parsed.keys === 'object' && parsed.keys ? parsed : { version: 1, keys: {} };
}
