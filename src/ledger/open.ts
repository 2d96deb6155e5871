// Which ledger a command holds: the one place, with the CLI, that knows there are two.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Connection } from '../client/connect.ts';
import { defaultStateDir } from '../client/quota.ts';
import { FileLedger, ledgerDirFor, names, unsafeStateFolder } from './file.ts';
import { BatchRefused, accountOf, type Ledger, type PolicyKeeper } from './account-ledger.ts';
import { PgLedger, PgLedgers } from './postgres.ts';

export { hasPassword, redactUrl } from './pg-db.ts';

const ephemeral = new WeakMap<object, FileLedger>();

/** `root`: the state folder, default the per-user one; a team ledger has none. */
export function ledgerOf(conn: Pick<Connection, 'environment' | 'sandbox' | 'shared'>, o: { root?: string } = {}): Ledger {
  const kept = conn.sandbox?.account;
  const account = kept ?? accountOf(conn.environment.baseUrl);
  if (conn.shared instanceof PgLedgers) return conn.shared.of(account);
  if (conn.sandbox && !kept) {
    // (left in the temporary folder when the process ends: the demo prints the journal's path)
    const made = () => new FileLedger(account, mkdtempSync(join(tmpdir(), 'payout-batch-local-')));
    return ephemeral.get(conn.sandbox) ?? ephemeral.set(conn.sandbox, made()).get(conn.sandbox)!;
  }
  const root = o.root ?? defaultStateDir();
  const dir = kept ? join(resolve(root), 'ledgers', kept) : ledgerDirFor(root, account);
  const unsafe = unsafeStateFolder(root, dir);
  if (unsafe) throw new BatchRefused(unsafe, 'UNSAFE_STATE_FOLDER');
  return new FileLedger(account, dir);
}

/**
 * Every account's ledger in these state folders and the team ledger, for commands that know a
 * payout or batch id, not its service. A folder's account is not known here: not for reserving.
 */
export async function ledgersIn(roots: string[], shared?: Connection['shared']): Promise<Ledger[]> {
  const out: Ledger[] = shared instanceof PgLedgers ? await shared.all() : [];
  for (const root of new Set(roots.map((r) => resolve(r)))) {
    const base = join(root, 'ledgers');
    for (const f of names(base)) out.push(new FileLedger(f, join(base, f)));
  }
  return out;
}

/** The team ledger `held` keeps the account's approval policy; a file ledger keeps none (the host's folder does). */
export const policyKeeperOf = (held?: Ledger): PolicyKeeper | undefined => (held instanceof PgLedger ? held : undefined);

/** Where the account's payouts sent without approval are counted: the team ledger held, else a file ledger in the host's `folder`, never a state folder's. */
export const unapprovedLedgerOf = (account: string, folder: string, held?: Ledger): Ledger =>
  held instanceof PgLedger ? held : new FileLedger(account, folder);
