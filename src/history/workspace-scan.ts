import { lstat, readdir } from 'node:fs/promises';
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
 * up to `maxEntries` paths. Directories are read in parallel, a level at a time.
 */
export async function scanWorkspace(root: string, maxEntries: number): Promise<Scan> {
  const entries: ScannedEntry[] = [];
  const skipped: string[] = [];
  let level = [''];
  while (level.length > 0) {
    const next: string[] = [];
    await Promise.all(
      level.map(async (dir) => {
        const names = await readdir(join(root, dir)).catch(() => [] as string[]);
        await Promise.all(
          names.map(async (name) => {
            if (name === '.git') return;
            const path = dir === '' ? name : `${dir}/${name}`;
            const info = await lstat(join(root, path)).catch(() => null);
            if (!info) return;
            const kind = info.isSymbolicLink() ? 'symlink' : info.isDirectory() ? 'dir' : info.isFile() ? 'file' : null;
            if (kind === null) return void skipped.push(path);
            if (entries.length >= maxEntries) throw new ScanTooLarge(`the workspace holds more than ${maxEntries} paths (history.max_files)`);
            entries.push({ path, kind, mode: info.mode & 0o7777, size: info.size, stamp: `${info.mtimeMs}:${info.ctimeMs}:${info.ino}:${info.size}` });
            if (kind === 'dir') next.push(path);
          }),
        );
      }),
    );
    level = next;
  }
  entries.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  return { entries, skipped };
}
