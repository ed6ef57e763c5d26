import { lstatSync, readdirSync, type Stats } from 'node:fs';
import { join } from 'node:path';

/** What a checkpoint records of one path (relative, `/`-separated): kind, permission bits, and what tells a change. */
export interface ScannedEntry {
  path: string;
  kind: 'file' | 'symlink' | 'dir';
  /** Permission bits (`st_mode & 0o7777`). */
  mode: number;
  size: number;
  /** mtime, ctime, inode and size together: unchanged means the content need not be read again. */
  stamp: string;
}

export interface Scan {
  entries: ScannedEntry[];
  /** Sockets, FIFOs and devices: not recorded, named in the checkpoint. */
  skipped: string[];
}

export class ScanTooLarge extends Error {}

/**
 * Lists a workspace without following any symbolic link and without entering any entry named `.git`
 * (the workspace's own repository, or one the agent planted deeper, is neither recorded nor touched),
 * nor the top-level `.inputs/` the service writes a Task's images to,
 * up to `maxEntries` paths.
 */
const SLICE = 1000;
/** The service's own copy of a Task's image inputs (`.inputs/<task_id>/`): the images are the Task's, not work. */
const TOP_LEVEL_EXCLUDED = ['.inputs'];
export async function scanWorkspace(root: string, maxEntries: number): Promise<Scan> {
  const entries: ScannedEntry[] = [];
  const skipped: string[] = [];
  const pending = [''];
  let sinceYield = 0;
  // Synchronous calls in slices: a promise per lstat costs ten times the call itself (10 000 files: ~40 ms
  // this way against ~500 ms through the thread pool), and yielding every slice keeps the event loop free.
  while (pending.length > 0) {
    const dir = pending.pop()!;
    let names: string[];
    try {
      names = readdirSync(join(root, dir));
    } catch {
      continue;
    }
    for (const name of names) {
      if (name === '.git' || (dir === '' && TOP_LEVEL_EXCLUDED.includes(name))) continue;
      const path = dir === '' ? name : `${dir}/${name}`;
      let info: Stats;
      try {
        info = lstatSync(join(root, path));
      } catch {
        continue;
      }
      const kind = info.isSymbolicLink() ? 'symlink' : info.isDirectory() ? 'dir' : info.isFile() ? 'file' : null;
      if (kind === null) {
        skipped.push(path);
        continue;
      }
      if (entries.length >= maxEntries) throw new ScanTooLarge(`the workspace holds more than ${maxEntries} paths (history.max_files)`);
      entries.push({ path, kind, mode: info.mode & 0o7777, size: info.size, stamp: `${info.mtimeMs}:${info.ctimeMs}:${info.ino}:${info.size}` });
      if (kind === 'dir') pending.push(path);
      if (++sinceYield >= SLICE) {
        sinceYield = 0;
        await new Promise((resolve) => setImmediate(resolve));
      }
    }
  }
  entries.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  return { entries, skipped };
}
