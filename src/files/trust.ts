import type { Stats } from 'node:fs';

/** From its lstat; `rootMayOwn`: a host folder root set up; `anyOwner`: a file another person (an administrator) may keep. */
export function whyUntrusted(st: Stats, o: { rootMayOwn?: boolean; anyOwner?: boolean } = {}): string | undefined {
  const uid = process.getuid?.();
  if (st.isSymbolicLink()) return 'is a symbolic link';
  if (uid !== undefined && st.uid !== uid && !o.anyOwner && !(o.rootMayOwn && st.uid === 0))
    return `belongs to another user (uid ${st.uid})`;
  if ((st.mode & 0o022) !== 0) return `is writable by ${st.mode & 0o020 ? 'its group' : 'others'} (mode ${(st.mode & 0o777).toString(8)})`;
  return undefined;
}
