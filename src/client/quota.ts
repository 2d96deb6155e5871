// The monthly quota (spec §8: 10,000 requests per key) as counted here: the service shows no counter.
// Per key fingerprint and UTC month, in a JSON file or the team ledger. Other machines and tools are
// not in the count: say so wherever it is shown.
import { promises as fs, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, isAbsolute, join } from 'node:path';
import pLimit from 'p-limit';
import { writeFileAtomic } from '../files/atomic.ts';
import { attempt, unlessMissing } from '../files/attempt.ts';
import { ClientConfigError, type KeyEnvironment } from './api-key.ts';
import { withLock } from '../files/lock.ts';
import { MONTHLY_QUOTA } from '../spec/codes.ts';
import { plural } from '../text.ts';

interface KeyUsage {
  months: Record<string, number>;
  /** Where the key answered 2xx: lets the tool refuse mixing. */
  environment?: KeyEnvironment;
  lastUsedAt?: string;
}
interface UsageFile {
  version: 1;
  keys: Record<string, KeyUsage>;
}

export function defaultStateDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.PAYOUT_BATCH_STATE_DIR) return env.PAYOUT_BATCH_STATE_DIR;
  // (a relative one is ignored, as the XDG spec says: from each working folder it would name another)
  if (env.XDG_STATE_HOME && isAbsolute(env.XDG_STATE_HOME)) return join(env.XDG_STATE_HOME, 'payout-batch');
  if (process.platform === 'win32' && env.LOCALAPPDATA) return join(env.LOCALAPPDATA, 'payout-batch');
  return join(homedir(), '.local', 'state', 'payout-batch');
}

export const monthOf = (d: Date): string => d.toISOString().slice(0, 7);

export type UsageReport = Awaited<ReturnType<UsageCounter['usage']>>;

/** This host's usage file (UsageFileStore), or the team ledger. */
export interface UsageStore {
  /** For messages: never a password. */
  readonly where: string;
  /** Adds to the kept counts (fingerprint -> month -> n), never overwriting another process's. */
  add(counts: ReadonlyMap<string, ReadonlyMap<string, number>>, labels: ReadonlyMap<string, KeyEnvironment>, at: Date): Promise<void>;
  requests(fingerprint: string, month: string): Promise<number>;
  environmentOf(fingerprint: string): Promise<string | undefined>;
}

/** Counts in memory and adds the delta to the store at most every `flushMs` and on close: processes add up. */
export class UsageCounter {
  /** Undefined when the counts are kept elsewhere (`store`). */
  readonly path: string | undefined;
  /** pace.ts keeps the keys' pace there too. */
  readonly stateDir: string | undefined;
  readonly store: UsageStore;
  private readonly flushMs: number;
  private readonly now: () => Date;
  private pending = new Map<string, Map<string, number>>();
  private labels = new Map<string, KeyEnvironment>();
  private timer: ReturnType<typeof setTimeout> | undefined;
  /** Flushes and reads, one at a time: a read waits for the flush before it. */
  private readonly inTurn = pLimit(1);

  constructor(options: { stateDir?: string; store?: UsageStore; flushMs?: number; now?: () => Date } = {}) {
    const file = options.store ? undefined : new UsageFileStore(join(options.stateDir ?? defaultStateDir(), 'usage.json'));
    this.store = options.store ?? file!;
    this.path = file?.path;
    this.stateDir = file && dirname(file.path);
    this.flushMs = options.flushMs ?? 1000;
    this.now = options.now ?? (() => new Date());
  }

  count(fingerprint: string, n = 1): void {
    this.addPending(fingerprint, monthOf(this.now()), n);
    this.schedule();
  }

  /** After a 2xx, to refuse the key elsewhere later. */
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

  flush(): Promise<void> {
    return this.inTurn(() => this.write());
  }

  async close(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.flush();
  }

  private async write(): Promise<void> {
    if (this.pending.size === 0 && this.labels.size === 0) return;
    const { pending, labels } = this;
    this.pending = new Map();
    this.labels = new Map();
    try {
      await this.store.add(pending, labels, this.now());
    } catch (e) {
      // the next flush retries them
      for (const [fp, months] of pending) for (const [month, n] of months) this.addPending(fp, month, n);
      for (const [fp, env] of labels) if (!this.labels.has(fp)) this.labels.set(fp, env);
      throw e;
    }
  }

  private addPending(fp: string, month: string, n: number): void {
    const m = this.pending.get(fp) ?? this.pending.set(fp, new Map()).get(fp)!;
    m.set(month, (m.get(month) ?? 0) + n);
  }

  /** `used` includes the counts not yet flushed. */
  async usage(fingerprint: string) {
    const month = monthOf(this.now());
    // read in turn with the flushes: a request being written is neither missed nor counted twice
    const used = await this.inTurn(
      async () => (await this.store.requests(fingerprint, month)) + (this.pending.get(fingerprint)?.get(month) ?? 0),
    );
    return { fingerprint, month, used, quota: MONTHLY_QUOTA, remaining: Math.max(0, MONTHLY_QUOTA - used) };
  }

  async environmentOf(fingerprint: string): Promise<KeyEnvironment | undefined> {
    const seen = this.labels.get(fingerprint) ?? (await this.store.environmentOf(fingerprint));
    return seen === 'production' || seen === 'sandbox' ? seen : undefined;
  }
}

class UsageFileStore implements UsageStore {
  constructor(readonly path: string) {}

  get where(): string {
    return `file ${this.path}`;
  }

  async add(...[counts, labels, at]: Parameters<UsageStore['add']>): Promise<void> {
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
export function quotaSentence(needed: number, usage: UsageReport, subject = 'this batch'): string {
  const fmt = (n: number) => n.toLocaleString('en-US');
  const base =
    `${subject} needs about ${plural(needed, 'request')}; this key has used ${fmt(usage.used)} of ` +
    `${fmt(usage.quota)} this month (${usage.month}, UTC), as counted here`;
  return needed > usage.remaining ? `${base}: that is more than the ${fmt(usage.remaining)} left` : base;
}

/**
 * None yet when missing. One torn or foreign refuses (writeFileAtomic leaves it whole): read as empty, the environments it
 * records were forgotten, and a key used in production no longer refused elsewhere; its counts written over.
 */
function readUsageFile(path: string): UsageFile {
  const text = unlessMissing(() => readFileSync(path, 'utf8'));
  if (text === undefined) return { version: 1, keys: {} };
  const parsed = attempt(() => JSON.parse(text) as UsageFile);
  if (parsed?.version === 1 && typeof parsed.keys === 'object' && parsed.keys) return parsed;
  throw new ClientConfigError(
    `${path} is not a usage file this tool wrote (torn, or written by another hand): where each key was used cannot be read, ` +
      `so a key used in production would not be refused elsewhere. Remove it (rm ${path}): this month's count starts again`,
    'refused',
  );
}
