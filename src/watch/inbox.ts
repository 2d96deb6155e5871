// The inbox: which entries may be batches, when one is complete, and which are refused unread.
import { lstatSync, readdirSync, readlinkSync, type Stats } from 'node:fs';
import { extname, join, resolve } from 'node:path';
import { attempt, unlessMissing } from '../files/attempt.ts';
import { WatchConfigError, type WatchConfig } from './config.ts';

export function layout(dir: string, config: Pick<WatchConfig, 'stateDir'>) {
  const root = resolve(dir);
  return {
    root,
    // the same for every user and HOME that runs this watch, so no one pays a dropped file again
    state: config.stateDir ? resolve(root, config.stateDir) : join(root, '.state'),
    inbox: join(root, 'inbox'),
    processing: join(root, 'processing'),
    done: join(root, 'done'),
    failed: join(root, 'failed'),
    lock: join(root, '.watch.lock'),
    documents: join(root, 'documents'),
  };
}

export function companionsOf(name: string): { plan: string; approvals: string } {
  const plan = `${name.slice(0, name.length - extname(name).length)}.plan.json`;
  return { plan, approvals: `${plan}.approvals.json` };
}

/** Names that may be batches: no dotfiles, temporary files, Excel's `~$` owner files or markers; with `companions`, no plans or approvals. */
export function inboxCandidates(inbox: string, o: { companions?: boolean } = {}): string[] {
  // (gone: nothing to claim; unlistable, read as empty, a watch under cron paid nothing, said nothing, and exited 0)
  const unlistable = (code: string) =>
    new WatchConfigError(
      `cannot list ${inbox} (${code}): no file dropped there is taken. Make it a folder the user this watch runs as can list`,
    );
  const names = unlessMissing(() => readdirSync(inbox), unlistable) ?? [];
  return names
    .filter((n) => !/^(\.|~\$)/.test(n) && !/\.(tmp|ready|part|crdownload|swp)$/i.test(n))
    .filter((n) => !o.companions || !/\.(plan|approvals)\.json$/i.test(n))
    .sort();
}

/**
 * Ms still to wait for a file unchanged for settleMs (unless requireReady), 0 when complete or marked .ready, -1 never by time.
 * A marker older than the file (both times) was left by an earlier file of the name: it does not mark this one.
 */
export function completeIn(inbox: string, name: string, o: { settleMs: number; requireReady: boolean; now?: number }): number {
  const st = attempt(() => lstatSync(join(inbox, name)));
  if (!st) return -1;
  // (a marker copied with its times kept is new by its ctime)
  const marker = lstatSync(join(inbox, `${name}.ready`), { throwIfNoEntry: false });
  if (marker && (marker.mtimeMs >= st.mtimeMs || marker.ctimeMs >= st.ctimeMs)) return 0;
  if (o.requireReady || !st.isFile()) return -1;
  const age = (o.now ?? Date.now()) - Math.max(st.mtimeMs, st.ctimeMs);
  return age >= o.settleMs ? 0 : Math.ceil(o.settleMs - age);
}

/** A linked inbox/, done/ or failed/ lets whoever set it choose which files are paid or where their records end. */
export function refuseLinkedFolders(L: ReturnType<typeof layout>): void {
  for (const d of [L.inbox, L.processing, L.done, L.failed]) {
    const st = lstatSync(d, { throwIfNoEntry: false });
    if (st?.isSymbolicLink())
      throw new WatchConfigError(`${d} is a symbolic link (to ${readlinkSync(d)}): links are never followed; make it a folder of its own`);
  }
}

/**
 * Why an inbox entry is refused unread (a folder is left alone, a writer may stage files in one, unless named like a batch). A
 * link is never followed: whoever can write the inbox could have any file the watch can read paid.
 */
export function refusedEntry(path: string, st: Stats): string | undefined {
  if (st.isDirectory() && /\.(csv|tsv|txt|xlsx?|xml|json)$/i.test(path))
    return 'a folder, not a file: drop the file itself (a folder named otherwise is left alone, for a writer to stage files in)';
  if (st.isSymbolicLink()) {
    const target = attempt(() => readlinkSync(path)) ?? '?'; // (gone meanwhile)
    return `a symbolic link (to ${target}): links are never followed; copy the file itself into the inbox`;
  }
  if (!st.isFile() && !st.isDirectory()) return 'not a regular file (a FIFO, socket or device)';
  if (st.isFile() && st.nlink > 1)
    return `a file with ${st.nlink} hard links: another name can change it; copy the file itself into the inbox`;
  return undefined;
}
