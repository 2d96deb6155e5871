// DIR/payout-batch.json. Unknown fields are refused (a misspelt guard must not pass as no guard), and
// so is a key written in it: the key comes from a key file or the environment.
import { lstatSync } from 'node:fs';
import { join, resolve, sep } from 'node:path';
import * as z from 'zod';
import { parseMoneyFlag, type GuardOptions } from '../engine/guards.ts';
import type { BatchPlan } from '../engine/batch-plan.ts';
import { Dec } from '../money.ts';
import { durationMs } from '../text.ts';
import { readBytes } from '../approvals/payload.ts';
import { attempt } from '../files/attempt.ts';
import { whyUntrusted } from '../files/trust.ts';
import { hasPassword } from '../ledger/open.ts';

export const CONFIG_FILE = 'payout-batch.json';

const money = z.string().refine((s) => attempt(() => parseMoneyFlag(s, 'total')) !== undefined, 'CUR:AMOUNT, e.g. "USD:12500.00"');

export const WatchConfig = z.strictObject({
  /** Required: never a default. */
  environment: z.enum(['local', 'sandbox', 'production']),
  baseUrl: z.string().url().optional(),
  /** Relative to DIR; default DIR/.state. */
  stateDir: z.string().min(1).optional(),
  /** The team ledger of the watch and `listen --watch-dir` (--ledger wins; else this; else $PAYOUT_BATCH_LEDGER_URL); its password is never here. */
  ledger: z
    .string()
    .regex(/^postgres(ql)?:\/\//, 'a postgres:// URL, e.g. "postgres://payout@db.example.com/payouts"')
    .refine((url) => !hasPassword(url), 'no password in the configuration: give it in PGPASSWORD, ~/.pgpass or $PAYOUT_BATCH_LEDGER_URL')
    .optional(),
  /** Else $PAYOUT_GATEWAY_HOST. */
  gatewayHost: z.string().optional(),
  /** Relative to DIR; else $PAYOUT_API_KEY / --key-file. Never the key itself. */
  keyFile: z.string().optional(),
  /** As --expect-rows, --expect-total, --max-total, --max-requests, --allow-duplicate, --duplicate-window. */
  expectRows: z.number().int().positive().optional(),
  expectTotals: z.array(money).default([]),
  maxTotals: z.array(money).default([]),
  maxRequests: z.number().int().nonnegative().optional(),
  allowDuplicates: z.array(z.string().min(1)).default([]),
  duplicateWindow: z
    .string()
    .refine((t) => durationMs(t) !== undefined, 'minutes, hours or days, e.g. "30m", "24h", "7d"')
    .default('24h'),
  /** Source currencies a file may pay from; any other refuses the file. */
  allowedCurrencies: z.array(z.string().regex(/^[A-Z]{3}$/)).optional(),
  /** A file is complete when unchanged this long, or has a .ready marker. */
  settleSeconds: z.number().min(0).max(3600).default(5),
  requireReady: z.boolean().default(false),
  /** Documents anywhere the watch can read (never through a symbolic link), not only in DIR/documents. */
  allowDocumentsOutside: z.boolean().default(false),
  pollSeconds: z.number().positive().max(3600).default(5),
  /** Another host's claim with no heartbeat this long is taken over (this host's: when its pid is dead); the heartbeat: a tenth, 10 s at most. */
  claimStaleSeconds: z.number().min(10, 'at least 10 (seconds): a claim is touched every tenth of it').default(120),
  /** As --fund-by-swap and --max-swap, for these currencies only: currency → the most a swap may credit it. */
  fundBySwap: z.record(z.string().regex(/^[A-Z]{3}$/), z.string().regex(/^\d+(\.\d+)?$/, 'an amount, e.g. "5000.00"')).optional(),
  allowPartial: z.boolean().default(false),
  enablePairs: z.boolean().default(false),
  /** As --merge-documents: a plan dropped with a file, a row of it naming several files, is then refused (approvers sign each file). */
  mergeDocuments: z.boolean().default(false),
  /** Requests per rolling second (spec §8 allows 5). */
  rate: z.number().positive().max(1000).optional(),
  concurrency: z.number().int().positive().max(64).optional(),
  /** A file runs only with `<stem>.plan.json` and its approvals dropped beside it, signed by this many listed approvers. */
  requireApprovals: z.number().int().min(1).max(100).optional(),
  /** Relative to DIR, never in the inbox. */
  approvers: z.string().min(1).optional(),
  /** As --sanctions-list (relative to DIR); clearances are DIR/clearances'. */
  sanctionsLists: z.array(z.string().min(1)).default([]),
  /** The flags win; metricsFile is relative to DIR. */
  pingUrl: z.string().url().optional(),
  metricsFile: z.string().min(1).optional(),
  notifyUrl: z.string().url().optional(),
});
export type WatchConfig = z.infer<typeof WatchConfig>;

export class WatchConfigError extends Error {
  override readonly name = 'WatchConfigError';
}

/** As the state folder is judged, whoever owns it (an administrator may keep the approvers list); a missing one is said when read. */
const untrusted = (file: string): string | undefined => {
  const st = attempt(() => lstatSync(file));
  return st && whyUntrusted(st, { anyOwner: true });
};

export function readWatchConfig(dir: string): WatchConfig {
  const path = join(dir, CONFIG_FILE);
  const text = readBytes(path, (why) => new WatchConfigError(`${path}: cannot read the configuration (${why}); see README "watch"`));
  let data: unknown;
  try {
    data = JSON.parse(text.toString('utf8'));
  } catch (e) {
    throw new WatchConfigError(`${path}: not JSON (${(e as Error).message})`);
  }
  const r = WatchConfig.safeParse(data);
  if (!r.success) {
    const i = r.error.issues[0]!;
    throw new WatchConfigError(`${path}: ${i.path.join('.') || '(top level)'}: ${i.message}`);
  }
  if (r.data.requireApprovals !== undefined && !r.data.approvers)
    throw new WatchConfigError(
      `${path}: requireApprovals: name the approvers list too ("approvers": "approvers.json", relative to ${dir})`,
    );
  if (r.data.approvers) {
    const list = resolve(dir, r.data.approvers);
    const inbox = join(resolve(dir), 'inbox');
    // Whoever can drop a file must not be able to name its approvers.
    if (list === inbox || list.startsWith(inbox + sep))
      throw new WatchConfigError(`${path}: approvers: the approvers list must not be in the inbox (anyone who drops files could write it)`);
  }
  for (const file of [path, ...(r.data.approvers ? [resolve(dir, r.data.approvers)] : [])]) {
    const why = untrusted(file);
    if (why)
      throw new WatchConfigError(
        `${file} ${why}: whoever could change it could choose what this watch pays and who approves it; make it a file (no link) writable by its owner alone`,
      );
  }
  return r.data;
}

/** The engine's options for `fundBySwap`, with a guard beside the policy's refusing a swap for a currency it does not name. */
export function swapRunOptions(
  cfg: WatchConfig,
  policy?: GuardOptions['policy'],
): Pick<GuardOptions, 'fundBySwap' | 'maxSwaps' | 'policy'> {
  const limits = Object.entries(cfg.fundBySwap ?? {});
  if (!limits.length) return policy ? { policy } : {};
  const named = new Set(limits.map(([currency]) => currency));
  const others = (plan: Partial<Pick<BatchPlan, 'swaps'>>) => {
    const s = plan.swaps?.find((x) => !named.has(x.currency));
    return s && `the plan funds ${s.currency} by a swap, but the watch's fundBySwap names only ${[...named].join(', ')}`;
  };
  return {
    fundBySwap: true,
    maxSwaps: limits.map(([currency, amount]) => ({ currency, amount: new Dec(amount) })),
    policy: (plan) => policy?.(plan) ?? others(plan),
  };
}
