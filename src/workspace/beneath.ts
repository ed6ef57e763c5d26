import { constants, type Dirent, type Stats } from 'node:fs';
import { lstat, mkdir, open, readdir, readlink, rmdir, unlink, type FileHandle } from 'node:fs/promises';
import { isAbsolute, posix, relative, sep } from 'node:path';
import { WorkspaceError } from './workspace-error.js';

/*
 * Race-free access to a directory tree that a sandboxed command may be changing at the same moment.
 * Node has no openat(2); `/proc/self/fd/<dirfd>/<name>` is its equivalent: the kernel starts the lookup
 * at the directory the descriptor holds (not at a path that could be swapped meanwhile) and, with
 * O_NOFOLLOW, refuses a symbolic link as the one name looked up there. Every walk below goes one name
 * at a time from the workspace root's descriptor, so a directory swapped with a link to /etc between
 * two steps is met as a link, never entered. Links inside the workspace are followed by reading their
 * text (atomic) and walking the target from the root again, with the same rules; a target outside the
 * root is refused. Nothing is ever opened outside the root, so neither a FIFO nor a device out there
 * can be touched.
 */

const { O_RDONLY, O_DIRECTORY, O_NOFOLLOW, O_NONBLOCK } = constants;
/** O_NONBLOCK: opening a FIFO (or a device) never waits for the other end. */
export const DIR_FLAGS = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_NONBLOCK;
export const READ_FLAGS = O_RDONLY | O_NOFOLLOW | O_NONBLOCK;
/** Symbolic links followed in one resolution, as the kernel's MAXSYMLINKS. */
const MAX_LINK_HOPS = 40;
/** Directory depth a walk descends to; deeper trees are a command's doing and are not walked. */
export const MAX_WALK_DEPTH = 64;

/** The name `name` inside the directory open as `dir`, resolved by the kernel from that descriptor. */
export const at = (dir: FileHandle, name?: string) => (name === undefined ? `/proc/self/fd/${dir.fd}` : `/proc/self/fd/${dir.fd}/${name}`);

export const openDirAt = (dir: FileHandle, name: string) => open(at(dir, name), DIR_FLAGS);

export const openRoot = (root: string) => open(root, DIR_FLAGS);

const denied = (path: string, why: string) => new WorkspaceError('path_denied', `${path.replace(/\0/g, '\\0')}: refused, ${why}`);
const notFound = (path: string) => new WorkspaceError('not_found', `${path}: no such file or directory`);

/** Where a resolution ended: the open parent directory and the last name (null: the root itself). */
export interface Located {
  parent: FileHandle;
  name: string | null;
  /** The segments from the root after following links inside, for display. */
  segments: string[];
}

export interface LocateOptions {
  /** Follow a link as the last name too (reads); writes replace the name itself and refuse a link. */
  followLast: boolean;
  /** Create missing directories on the way (writes). */
  createDirs?: boolean;
}

/**
 * Resolves workspace-relative `segments` (already free of `.`, `..` and empty names) from the root.
 * The caller owns `parent` and must close it.
 */
export async function locate(root: string, segments: string[], path: string, options: LocateOptions): Promise<Located> {
  let current = segments;
  for (let hop = 0; hop <= MAX_LINK_HOPS; hop++) {
    const step = await walkOnce(root, current, path, options);
    if ('parent' in step) return step;
    current = linkTarget(root, current.slice(0, step.index), step.target, current.slice(step.index + 1), path);
  }
  throw denied(path, 'has too many levels of symbolic links');
}

async function walkOnce(root: string, segments: string[], path: string, options: LocateOptions): Promise<Located | { index: number; target: string }> {
  let dir = await openRoot(root);
  try {
    for (let index = 0; index < segments.length - 1; index++) {
      const next = await enterDir(dir, segments[index], path, options.createDirs ?? false);
      if (typeof next === 'string') {
        await dir.close();
        return { index, target: next };
      }
      await dir.close();
      dir = next;
    }
    const name = segments.at(-1) ?? null;
    if (name !== null && options.followLast) {
      const info = await lstat(at(dir, name)).catch(() => null);
      if (info?.isSymbolicLink()) {
        const target = await readlink(at(dir, name));
        await dir.close();
        return { index: segments.length - 1, target };
      }
    }
    return { parent: dir, name, segments };
  } catch (error) {
    await dir.close().catch(() => undefined);
    throw error;
  }
}

/** The directory `name` inside `dir`, opened without following a link; a link's text instead. */
async function enterDir(dir: FileHandle, name: string, path: string, create: boolean): Promise<FileHandle | string> {
  try {
    return await openDirAt(dir, name);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    // O_NOFOLLOW|O_DIRECTORY meets a link as ELOOP or ENOTDIR (by kernel version): ask the name itself.
    if ((code === 'ELOOP' || code === 'ENOTDIR') && (await lstat(at(dir, name)).catch(() => null))?.isSymbolicLink()) {
      return readlink(at(dir, name)).catch(() => {
        throw notFound(path);
      });
    }
    if (code === 'ENOENT' && create) {
      await mkdir(at(dir, name), 0o755).catch((mkdirError: NodeJS.ErrnoException) => {
        if (mkdirError.code !== 'EEXIST') throw mkdirError;
      });
      return enterDir(dir, name, path, false);
    }
    if (code === 'ENOTDIR') throw new WorkspaceError(create ? 'invalid' : 'not_found', `${path}: a component is not a directory`);
    throw notFound(path);
  }
}

/** The segments a link at `before/<link>` with `target` stands for, followed by `after`; outside: refused. */
function linkTarget(root: string, before: string[], target: string, after: string[], path: string): string[] {
  const joined = isAbsolute(target) ? relative(root, posix.normalize(target)) : posix.normalize(posix.join(before.join('/') || '.', target));
  if (joined === '..' || joined.startsWith(`..${sep}`) || isAbsolute(joined)) throw denied(path, 'resolves outside the workspace');
  return [...joined.split('/').filter((part) => part !== '' && part !== '.'), ...after];
}

/** Opens an existing file or directory, links inside followed; `kind` decides what counts as found. */
export async function openBeneath(root: string, segments: string[], path: string): Promise<{ handle: FileHandle; info: Stats; segments: string[] }> {
  const found = await locate(root, segments, path, { followLast: true });
  if (found.name === null) return { handle: found.parent, info: await found.parent.stat(), segments: [] };
  try {
    const handle = await open(at(found.parent, found.name), READ_FLAGS).catch(() => {
      // ELOOP here: the name became a link after it was checked, a race this read does not take part in.
      throw notFound(path);
    });
    return { handle, info: await handle.stat(), segments: found.segments };
  } finally {
    await found.parent.close();
  }
}

/**
 * The entry at `segments` below `dir` as it is now, never through a link (a directory swapped for one
 * reads as absent); null when absent. Unlike `locate`, a link inside is not followed either: the entry is
 * the one at exactly that place, as a walk would meet it.
 */
export async function lstatBeneath(dir: FileHandle, segments: string[]): Promise<Stats | null> {
  let current = dir;
  try {
    for (const name of segments.slice(0, -1)) {
      const next = await openDirAt(current, name);
      if (current !== dir) await current.close();
      current = next;
    }
    return await lstat(at(current, segments.at(-1)));
  } catch {
    return null;
  } finally {
    if (current !== dir) await current.close().catch(() => undefined);
  }
}

export interface WalkEntry {
  /** The directory holding the entry (open while the entry is being handled). */
  dir: FileHandle;
  name: string;
  /** Relative to where the walk started, `/`-separated. */
  rel: string;
  entry: Dirent;
}

/**
 * Every entry below `dir`, depth first in name order, never following a link and never entering a
 * directory that became something else meanwhile. `skip` names directories not entered.
 */
export async function* walkBeneath(dir: FileHandle, skip: ReadonlySet<string> = new Set(), prefix = '', depth = 0): AsyncGenerator<WalkEntry> {
  const entries = await readdir(at(dir), { withFileTypes: true }).catch(() => [] as Dirent[]);
  for (const entry of entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
    const rel = prefix ? `${prefix}/${entry.name}` : entry.name;
    yield { dir, name: entry.name, rel, entry };
    if (!entry.isDirectory() || skip.has(entry.name) || depth >= MAX_WALK_DEPTH) continue;
    const sub = await openDirAt(dir, entry.name).catch(() => null);
    if (!sub) continue;
    try {
      yield* walkBeneath(sub, skip, rel, depth + 1);
    } finally {
      await sub.close();
    }
  }
}

/** Removes `name` inside `parent` and everything below it, never following a link out of the tree. */
export async function removeTreeAt(parent: FileHandle, name: string): Promise<void> {
  const dir = await openDirAt(parent, name).catch(() => null);
  if (!dir) {
    await unlink(at(parent, name)).catch(() => undefined);
    return;
  }
  try {
    for (const entry of await readdir(at(dir), { withFileTypes: true }).catch(() => [] as Dirent[])) {
      if (entry.isDirectory()) await removeTreeAt(dir, entry.name);
      else await unlink(at(dir, entry.name)).catch(() => undefined);
    }
  } finally {
    await dir.close();
  }
  await rmdir(at(parent, name)).catch(() => undefined);
}
