// DIR/payout-batch.json: the environment, the guards every file of the folder must pass, and the
// timings. Unknown fields are refused (a misspelt guard must not pass as no guard), and so is a key
// written in it: the key comes from a key file or the environment.
import { join, resolve, sep } from 'node:path';
import { z } from 'zod';
import { parseMoneyFlag, type GuardOptions } from '../engine/guards.ts';
import type { BatchPlan } from '../engine/batch-plan.ts';
import { windowMs } from '../engine/duplicates.ts';
import { Dec } from '../money.ts';
import { readBytes } from '../approvals/payload.ts';

export const CONFIG_FILE = 'payout-batch.json';

const money = z.string().refine((s) => {
  try {
    parseMoneyFlag(s, 'total');
    return true;
  } catch {
    return false;
  }
}, 'CUR:AMOUNT, e.g. "USD:12500.00"');

/** A connection string without a password (in its authority or a `password=` parameter). */
function noPassword(url: string): boolean {
  try {
    const u = new URL(url);
    return !u.password && !u.searchParams.has('password');
  } catch {
    return !/:[^/@]*@|password=/i.test(url);
  }
}

export const WatchConfig = z.strictObject({
  /** Which service: local (embedded sandbox), sandbox or production. Required: never a default. */
  environment: z.enum(['local', 'sandbox', 'production']),
  /** Another server than the environment's (e.g. a sandbox on this machine). */
  baseUrl: z.string().url().optional(),
  /**
   * The state folder (relative to DIR) whose ledgers hold the journals and the quota count;
   * default the per-user one, shared with every other command (src/ledger).
   */
  stateDir: z.string().min(1).optional(),
  /**
   * The team ledger (as --ledger, which wins; else this; else $PAYOUT_BATCH_LEDGER_URL): the
   * journals and the watch claims in PostgreSQL, so two hosts given one file run it once. No
   * password here: PGPASSWORD or ~/.pgpass give it (the configuration is not a secret).
   */
  ledger: z
    .string()
    .regex(/^postgres(ql)?:\/\//, 'a postgres:// URL, e.g. "postgres://payout@db.example.com/payouts"')
    .refine(noPassword, 'no password in the configuration: give it in PGPASSWORD or ~/.pgpass')
    .optional(),
  /** The production gateway host (else $PAYOUT_GATEWAY_HOST). */
  gatewayHost: z.string().optional(),
  /** A key file (relative to DIR); else $PAYOUT_API_KEY / --key-file. Never the key itself. */
  keyFile: z.string().optional(),
  /** Control totals checked for every file (the engine's --expect-rows / --expect-total / --max-total). */
  expectRows: z.number().int().positive().optional(),
  expectTotals: z.array(money).default([]),
  maxTotals: z.array(money).default([]),
  /** The engine's --max-requests: a file whose plan needs more requests of the key's month is refused, nothing sent. */
  maxRequests: z.number().int().nonnegative().optional(),
  /** As --allow-duplicate and --duplicate-window: a row repeating a recent payout of another reference is refused (engine/duplicates.ts). */
  allowDuplicates: z.array(z.string().min(1)).default([]),
  duplicateWindow: z
    .string()
    .refine((t) => windowMs(t) !== undefined, 'minutes, hours or days, e.g. "30m", "24h", "7d"')
    .default('24h'),
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
  /**
   * Fund a short wallet by a swap (as `run --fund-by-swap`), for these currencies only: the currency
   * funded → the most a swap may credit it, its amountToBeSent (as `--max-swap`), e.g.
   * {"USD": "5000.00"}. A file whose plan needs a larger swap, or one for another currency, is
   * refused with nothing sent.
   */
  fundBySwap: z.record(z.string().regex(/^[A-Z]{3}$/), z.string().regex(/^\d+(\.\d+)?$/, 'an amount, e.g. "5000.00"')).optional(),
  allowPartial: z.boolean().default(false),
  enablePairs: z.boolean().default(false),
  mergeDocuments: z.boolean().default(false),
  /** Requests per rolling second for the key (the spec allows 5). */
  rate: z.number().positive().max(1000).optional(),
  concurrency: z.number().int().positive().max(64).optional(),
  /**
   * Four eyes: a file is run only with its plan and that plan's approvals dropped beside it
   * (`payroll.csv` + `payroll.plan.json` + `payroll.plan.json.approvals.json`), signed by this many
   * distinct approvers of the `approvers` list, none the plan's maker (src/approvals).
   */
  requireApprovals: z.number().int().min(1).max(100).optional(),
  /** The approvers list (relative to DIR, never in the inbox): a JSON array of {name, publicKey}. */
  approvers: z.string().min(1).optional(),
  /**
   * As --sanctions-list (relative to DIR): every payee is screened first, and a file with any payee
   * held is refused whole; clearances are DIR/clearances', signed by the `approvers` (or the policy's).
   */
  sanctionsLists: z.array(z.string().min(1)).default([]),
  /** As --ping-url, --metrics-file (relative to DIR) and --notify-url, which win (src/signals). */
  pingUrl: z.string().url().optional(),
  metricsFile: z.string().min(1).optional(),
  notifyUrl: z.string().url().optional(),
});
export type WatchConfig = z.infer<typeof WatchConfig>;

export class WatchConfigError extends Error {
  override readonly name = 'WatchConfigError';
}

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
  return r.data;
}

/**
 * The engine's options for a watch's `fundBySwap` (none without it): --fund-by-swap, --max-swap per
 * currency, and, beside the account's approval policy, a guard that refuses a swap for a currency
 * the configuration does not name.
 */
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
