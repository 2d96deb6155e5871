// Whether a file or folder may be trusted with what decides a payout (a ledger, a policy): one
// another user could have written is not. The one rule of the tool, for the state folder
// (ledger/file.ts), a file ledger's policy and the host's policies (approvals/account-policy.ts).
import type { Stats } from 'node:fs';

/**
 * Why a path (its lstat) cannot be trusted, or undefined: a symbolic link, another user's (root's
 * too, unless `rootMayOwn`: a host folder root set up), or writable by its group or others.
 */
export function whyUntrusted(st: Stats, o: { rootMayOwn?: boolean } = {}): string | undefined {
  const uid = process.getuid?.();
  if (st.isSymbolicLink()) return 'is a symbolic link';
  if (uid !== undefined && st.uid !== uid && !(o.rootMayOwn && st.uid === 0)) return `belongs to another user (uid ${st.uid})`;
  if ((st.mode & 0o022) !== 0) return `is writable by ${st.mode & 0o020 ? 'its group' : 'others'} (mode ${(st.mode & 0o777).toString(8)})`;
  return undefined;
}
