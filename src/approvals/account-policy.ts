// The approvals every `run`, `retry` and `watch` against a service account needs, whatever their
// flags: kept in a host-wide folder no flag or variable redirects, and in the team ledger
// (REFERENCE.md). Each version keeps the history of the ones before and who signed each change.
import { lstatSync, mkdirSync } from 'node:fs';
import { hostname } from 'node:os';
import { osUserName } from '../os-user.ts';
import { isAbsolute, join, resolve } from 'node:path';
import * as z from 'zod';
import { writeFileAtomic } from '../files/atomic.ts';
import { unlessMissing } from '../files/attempt.ts';
import { whyUntrusted } from '../files/trust.ts';
import { Dec, formatAmount, groupThousands } from '../money.ts';
import { packageJson, packageRoot } from '../package-root.ts';
import { durationText, plural } from '../text.ts';
import { sha256Hex } from '../engine/identity.ts';
import { accountOf, BatchRefused, type Ledger, type PolicyKeeper, type UnapprovedPayout } from '../ledger/account-ledger.ts';
import { policyKeeperOf, redactUrl, unapprovedLedgerOf } from '../ledger/open.ts';
import type { GuardOptions } from '../engine/guards.ts';
import { approvalGate, type Expiry, type GateResult } from './sign.ts';
import { ApproverSchema } from './approvals-file.ts';
import { parseJson, readBytes, type LoadedPlan } from './payload.ts';

/** What `policy set` gives. */
export const PolicyRulesSchema = z.object({
  requireApprovals: z.number().int().min(1).max(100),
  approvers: z.array(ApproverSchema).min(1),
  /** CUR → amount: the approvals are needed only above it. */
  above: z.record(z.string().regex(/^[A-Z]{3}$/), z.string().regex(/^\d+(\.\d+)?$/)).optional(),
  expireAfterMs: z.number().int().positive().optional(),
  /** Every run screens its payees against sanctions lists at most this old. */
  screeningMaxAgeMs: z.number().int().positive().optional(),
});
export type PolicyRules = z.infer<typeof PolicyRulesSchema>;

/** `policy` null: removed. */
const VersionSchema = z.object({
  version: z.number().int().min(1),
  setAt: z.string(),
  setBy: z.string(),
  signedBy: z.array(z.string()),
  policy: z.string().nullable(),
});

const RecordSchema = z.object({
  v: z.literal(1),
  account: z.string(),
  removed: z.literal(true).optional(),
  ...PolicyRulesSchema.partial().shape,
  setAt: z.string(),
  setBy: z.string(),
  version: z.number().int().min(1),
  history: z.array(VersionSchema),
});

/** `sentToday` (and its payouts, `countedToday`), `inTeam` (kept, and counted, in the team ledger): as read for a run (policyInForce), never stored. */
export type AccountPolicy = PolicyRules &
  Omit<z.infer<typeof RecordSchema>, keyof PolicyRules | 'removed'> & {
    sentToday?: Record<string, string>;
    countedToday?: UnapprovedPayout[];
    inTeam?: boolean;
  };

/** `version` 0: never set. */
export type PolicyRecord = Pick<z.infer<typeof RecordSchema>, 'version' | 'history'> & { policy?: AccountPolicy };

/** Nothing is sent against the account (exit 3). */
export class PolicyError extends Error {
  override readonly name = 'PolicyError';
}

/** /etc/payout-batch, or the folder an installation without root fixes in its package.json (`payoutBatch.hostFolder`). */
export function hostFolder(): string {
  const named = packageJson().payoutBatch?.hostFolder; // (unreadable: throws, never the default's policies instead)
  if (typeof named !== 'string' || !named) return '/etc/payout-batch';
  return isAbsolute(named) ? named : resolve(packageRoot(), named);
}

/** The account's file (or folder) `<digest>.<what>` in the host folder: `policy.json`, `ledger.json` (its team ledger), `unapproved`. */
const hostPath = (baseUrl: string, what: string): string => join(hostFolder(), `${sha256Hex(accountOf(baseUrl)).slice(0, 32)}.${what}`);

/** False when missing; throws for a path another user could have written, or this user may not look at. */
function trusted(path: string, what: string): boolean {
  // (a policy may be there: read as none, the run would go without the approvals it asks)
  const cannotLook = (code: string) =>
    new PolicyError(`cannot look at ${what} ${path} (${code}): nothing is sent until this user can read it`);
  const st = unlessMissing(() => lstatSync(path), cannotLook, ['ENOENT', 'ENOTDIR']);
  if (!st) return false;
  if (whyUntrusted(st, { rootMayOwn: true }))
    throw new PolicyError(
      `${what} ${path} is a link, another user's, or writable by others: nothing is sent until it is root's or yours alone (chmod go-w)`,
    );
  return true;
}

const trustedInHost = (path: string, what: string) => trusted(hostFolder(), 'the host folder of approval policies') && trusted(path, what);

const readInHost = (path: string, what: string): Buffer =>
  readBytes(path, (why) => new PolicyError(`cannot read ${what} ${path} (${why}): nothing is sent until this user can read it`));

function parseRecord(text: string, where: string): PolicyRecord {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (e) {
    throw new PolicyError(`the approval policy ${where} cannot be read (${(e as Error).message}): nothing is sent until it is set again`);
  }
  const r = RecordSchema.safeParse(data);
  const rules = r.success && !r.data.removed ? PolicyRulesSchema.safeParse(r.data) : undefined;
  if (!r.success || (rules && !rules.success)) throw new PolicyError(`the approval policy ${where} is not a policy: set it again`);
  const { version, history } = r.data;
  return r.data.removed ? { version, history } : { policy: { ...r.data, ...rules!.data }, version, history };
}

export const who = () => `${osUserName()}@${hostname()}`;

export type PolicyStore = ReturnType<typeof storeOf>;

/** A store whose next version (null: removed) is written as `save` keeps its text. */
function storeOf(where: string, account: string, read: () => Promise<PolicyRecord>, save: (text: string) => Promise<void>) {
  return {
    where,
    read,
    async write(next: (PolicyRules & { account: string }) | null, signedBy: string[], setBy = who()): Promise<PolicyRecord> {
      const current = await read();
      const setAt = new Date().toISOString();
      const version = current.version + 1;
      const base = { v: 1 as const, account, setAt, setBy, version };
      const history = [...current.history, { version, setAt, setBy, signedBy, policy: next && describePolicy(next) }];
      const text = JSON.stringify(next ? { ...base, ...next, history } : { ...base, removed: true as const, history }, null, 2) + '\n';
      await save(text);
      return parseRecord(text, where);
    },
  };
}

export function hostStore(baseUrl: string): PolicyStore {
  const path = hostPath(baseUrl, 'policy.json');
  const read = async (): Promise<PolicyRecord> =>
    trustedInHost(path, 'the approval policy')
      ? parseRecord(readInHost(path, 'the approval policy').toString('utf8'), path)
      : { version: 0, history: [] };
  const cannotWrite = (e: NodeJS.ErrnoException) => {
    throw new PolicyError(
      `cannot write ${path} (${e.code ?? e.message}): the host's policies are kept in ${hostFolder()}; ` +
        `create it for the user who sets them (\`sudo install -d -m 755 -o $USER ${hostFolder()}\`)`,
    );
  };
  return storeOf(path, accountOf(baseUrl), read, (text) => writeInHost(path, text).catch(cannotWrite));
}

/** This host records that the account has one (teamOnRecordIs), so that a run here without the ledger is refused. */
export function teamStore(ledger: PolicyKeeper): PolicyStore {
  const where = `of ${ledger.account} in the team ledger`;
  const read = async (): Promise<PolicyRecord> => {
    const p = await ledger.policy();
    return p === undefined ? { version: 0, history: [] } : parseRecord(p.text, where);
  };
  return storeOf(where, ledger.account, read, async (text) => {
    teamOnRecordIs(ledger.account, ledger); // (else its record here would name this one, whose policy then binds instead)
    await ledger.setPolicy(text);
    await recordTeam(ledger);
  });
}

async function writeInHost(path: string, text: string): Promise<void> {
  mkdirSync(hostFolder(), { recursive: true, mode: 0o755 });
  await writeFileAtomic(path, text, { mode: 0o644 });
}

/** Where the host folder lets this user (else its owner records it when they use it). */
const recordTeam = (ledger: PolicyKeeper): Promise<void> =>
  writeInHost(hostPath(ledger.account, 'ledger.json'), JSON.stringify({ account: ledger.account, ledger: ledger.where }) + '\n').catch(
    () => undefined, // (not this user's to write)
  );

/** Where payouts sent without approval are counted: the team ledger `held`, for a policy kept there, else the host's folder beside the policy. */
const allowanceLedger = (baseUrl: string, held?: Ledger): Ledger => unapprovedLedgerOf(accountOf(baseUrl), unapprovedFolder(baseUrl), held);

const unapprovedFolder = (baseUrl: string) => hostPath(baseUrl, 'unapproved');

function hostFolderRefusal(e: unknown, baseUrl: string): string {
  if (e instanceof BatchRefused) return e.message; // (its count not read)
  const code = (e as NodeJS.ErrnoException).code;
  if (code !== 'EACCES' && code !== 'EPERM' && code !== 'EROFS') throw e;
  return `this account's count of payouts sent without approval today is kept in ${unapprovedFolder(baseUrl)}, which this user cannot write (${code}): run as the folder's owner, or have the plan approved (payout-batch plan FILE --out PLAN, then approve and run --plan)`;
}

/** UTC, as the day's allowance and a ReqdExctnDt are counted. */
export const utcDay = (): string => new Date().toISOString().slice(0, 10);

const amountsText = (amounts: Record<string, string | Dec> = {}, join = ', ') =>
  Object.entries(amounts)
    .map(([c, a]) => `${c} ${groupThousands(formatAmount(new Dec(a), c))}`)
    .join(join);

export function describePolicy(p: PolicyRules): string {
  const above = p.above ? ` for a batch sending more than ${amountsText(p.above, ' or ')} (any other currency: always)` : '';
  const expire = p.expireAfterMs ? `; approvals expire after ${durationText(p.expireAfterMs)}` : '';
  const lists = p.screeningMaxAgeMs ? `; payees screened against sanctions lists at most ${durationText(p.screeningMaxAgeMs)} old` : '';
  return `${plural(p.requireApprovals, 'approval')} of ${p.approvers.map((a) => a.name).join(', ')}${above}${expire}${lists}`;
}

type Sends = Parameters<NonNullable<GuardOptions['policy']>>[0];

/**
 * With `above`, only when what it sends and what went without approval today pass it, or in a currency it does not name.
 * A payout today's count holds as it is (a resumed run's) is counted once, as the count counts it.
 */
export function needsApprovals(p: AccountPolicy, plan: Sends): boolean {
  const held = new Set(p.countedToday?.map((x) => JSON.stringify([x.reference, x.currency, x.amount])));
  const again = (plan.payouts ?? []).filter((x) => held.delete(JSON.stringify([x.reference, x.currency, x.amount])));
  const over = (currency: string, amount: string) => {
    const limit = p.above?.[currency];
    const fresh = again.filter((x) => x.currency === currency).reduce((d, x) => d.minus(new Dec(x.amount)), new Dec(amount));
    return limit === undefined || fresh.plus(new Dec(p.sentToday?.[currency] ?? 0)).gt(new Dec(limit));
  };
  return plan.currencies.some((c) => c.rows > 0 && (!p.above || over(c.currency, c.amount)));
}

export function allowanceLeft(p: AccountPolicy): string | undefined {
  if (!p.above) return undefined;
  const left = Object.entries(p.above).map(([c, a]) => [c, Dec.max(0, new Dec(a).minus(new Dec(p.sentToday?.[c] ?? 0)))] as const);
  return `left today (UTC) to send without approval: ${amountsText(Object.fromEntries(left))} (of ${amountsText(p.above)})`;
}

/** The team ledger this host has on record for the account; PolicyError when there is one and `team` is not it. */
export function teamOnRecordIs(account: string, team?: PolicyKeeper): string | undefined {
  const path = hostPath(account, 'ledger.json');
  if (!trustedInHost(path, 'the record of the team ledger')) return undefined;
  const ledger = parseJson(readInHost(path, 'the record of the team ledger'), z.object({ ledger: z.string() }))?.ledger;
  const onRecord = ledger === undefined ? '(unreadable)' : redactUrl(ledger); // (an earlier version's: its password as ***)
  if (team?.where !== onRecord)
    throw new PolicyError(
      `this account's approval policy is kept in the team ledger ${onRecord}: run with it (\`--ledger ${onRecord}\`, the password from PGPASSWORD, ~/.pgpass or $PAYOUT_BATCH_LEDGER_URL)`,
    );
  return onRecord;
}

/** The host's, else the team ledger's; PolicyError also when this host has a team ledger on record and `team` is not it. */
export async function policyInForce(baseUrl: string, team?: Ledger): Promise<AccountPolicy | undefined> {
  const teamLedger = policyKeeperOf(team);
  const onRecord = teamOnRecordIs(accountOf(baseUrl), teamLedger);
  const fromTeam = teamLedger && (await teamStore(teamLedger).read()).policy;
  if (fromTeam && !onRecord) await recordTeam(teamLedger); // (this host learns it)
  const p = (await hostStore(baseUrl).read()).policy ?? (fromTeam && { ...fromTeam, inTeam: true });
  if (!p?.above) return p;
  const today = await allowanceLedger(baseUrl, p.inTeam ? team : undefined)
    .unapproved(utcDay())
    .catch((e: unknown) => {
      throw new PolicyError(hostFolderRefusal(e, baseUrl));
    });
  return { ...p, sentToday: today.totals, countedToday: today.recorded };
}

/** `--approvals-expire-after`: of a plan's approvals, and of a change to the policy itself. */
export const expiryOf = (p: AccountPolicy): Expiry | undefined => (p.expireAfterMs ? { afterMs: p.expireAfterMs } : undefined);

export function policyGate(p: AccountPolicy, plan: string | LoadedPlan): GateResult {
  return approvalGate({ plan, required: p.requireApprovals, approvers: p.approvers, expiry: expiryOf(p), makerSigned: true });
}

/** `approved`: the policy's check of the plan being run (undefined: no plan). */
export function policyGuard(
  p: AccountPolicy,
  approved?: Pick<GateResult, 'ok' | 'message' | 'plan'>,
): Pick<GuardOptions, 'policy' | 'spend'> {
  const policy = (plan: Sends): string | undefined => (needsApprovals(p, plan) ? policyRefusal(p, approved) : undefined);
  const spend = async (ledger: Ledger, payouts: UnapprovedPayout[]) => {
    const changed = await policyChanged(p.account, p, ledger);
    // (approvals counted again: one that expired while the run waited at its confirmation no longer counts)
    const still = approved?.ok && approved.plan ? policyGate(p, approved.plan) : approved;
    if (changed || still?.ok) return changed;
    if (!p.above) return still && policyRefusal(p, still);
    const r = await allowanceLedger(p.account, p.inTeam ? ledger : undefined)
      .unapproved(utcDay(), { payouts, above: p.above })
      .catch((e: unknown) => hostFolderRefusal(e, p.account));
    if (typeof r === 'string') return r;
    return r.taken ? undefined : policyRefusal({ ...p, sentToday: r.totals }, still);
  };
  return { policy, spend };
}

/** Read again just before the first payout: the run was judged under `p` (none: no policy), and a version set since binds instead. */
async function policyChanged(account: string, p: AccountPolicy | undefined, ledger: Ledger): Promise<string | undefined> {
  const now = await policyInForce(account, ledger).catch((e: unknown) => {
    if (e instanceof PolicyError) return e.message;
    throw e;
  });
  if (typeof now === 'string') return now;
  if (now?.version === p?.version && now?.setAt === p?.setAt) return undefined;
  const version = now ? `version ${now.version}: ${describePolicy(now)}` : 'none';
  return `this account's approval policy changed since this run read it (${p ? `version ${p.version}` : 'none'}, now ${version}): run again under the policy in force`;
}

/** The last check of a run against an account that had no policy when it started. */
export const policySetSince = (baseUrl: string) => (ledger: Ledger) => policyChanged(baseUrl, undefined, ledger);

export function policyRefusal(p: AccountPolicy, approved?: Pick<GateResult, 'ok' | 'message'>): string | undefined {
  if (approved?.ok) return undefined;
  const today = amountsText(p.sentToday);
  const rule = `this account's approval policy needs ${describePolicy(p)}${today ? ` (sent without approval today, UTC: ${today})` : ''}`;
  return `${rule}: ${approved?.message ?? 'make a plan (payout-batch plan FILE --out PLAN), have it approved (payout-batch approve PLAN), then run it (payout-batch run --plan PLAN)'}`;
}
