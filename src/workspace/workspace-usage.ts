import { randomUUID } from 'node:crypto';
import { constants, type Dirent } from 'node:fs';
import { lstat, open, readdir, rmdir, unlink, type FileHandle } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { at, locate, MAX_WALK_DEPTH, openDirAt, openRoot, removeTreeAt, walkBeneath } from './beneath.js';
import { WorkspaceError } from './workspace-error.js';
import type { FileMark, Usage, WorkspacePaths } from './workspace-paths.js';

/**
 * Walks the tree once, race-free (beneath.ts), and stops after `stopAfter` entries: a workspace with
 * more is over its limit whatever the rest holds, and the walk stays bounded however many files a
 * command made. `marks`, when given, receives each entry's size and inode by its `/`-separated relative path.
 */
export async function measureUsage(root: string, stopAfter = Number.POSITIVE_INFINITY, marks?: Map<string, FileMark>): Promise<Usage> {
  const usage: Usage = { bytes: 0, entries: 0 };
  const dir = await openRoot(root);
  try {
    for await (const { dir: parent, name, rel, entry } of walkBeneath(dir)) {
      usage.entries += 1;
      const info = await lstat(at(parent, name)).catch(() => null);
      const size = info && !entry.isDirectory() ? info.size : 0;
      usage.bytes += size;
      if (info) marks?.set(rel, { size, ino: info.ino });
      if (usage.entries > stopAfter) break;
    }
  } finally {
    await dir.close();
  }
  return usage;
}

/**
 * The workspace's usage: measured on first need for this Task's WorkspacePaths and after every command
 * (which can change anything), kept up to date by the file tools in between, so a tool call never
 * walks the tree.
 */
export async function usageOf(paths: WorkspacePaths): Promise<Usage> {
  if (paths.usage) return paths.usage;
  const marks = new Map<string, FileMark>();
  paths.usage = await measureUsage(paths.root, paths.limits.maxFiles ?? Number.POSITIVE_INFINITY, marks);
  paths.marks = marks;
  return paths.usage;
}

/** Forgets the measured usage (a command ran) and measures again. */
export async function remeasure(paths: WorkspacePaths): Promise<Usage> {
  paths.usage = null;
  paths.marks = null;
  return usageOf(paths);
}

export const quotaMessage = (used: number, max: number, verb: 'would hold' | 'holds' = 'would hold') =>
  `the session workspace ${verb} ${used} bytes, more than its quota of ${max} bytes (workspace.max_session_bytes); delete files to make room`;

export const fileCountMessage = (entries: number, max: number, verb: 'would hold' | 'holds' = 'would hold') =>
  `the session workspace ${verb} ${entries > max + 1 ? `more than ${max}` : entries} files and directories, more than its limit of ${max} (workspace.max_session_files); delete files to make room`;

/** Why a write of `growth` bytes and `added` entries would take the workspace past a limit, or null. */
export function overLimit(paths: WorkspacePaths, usage: Usage, growth = 0, added = 0): string | null {
  const { maxBytes, maxFiles } = paths.limits;
  if (maxFiles !== null && added > 0 && usage.entries + added > maxFiles) return fileCountMessage(usage.entries + added, maxFiles);
  if (maxBytes !== null && growth > 0 && usage.bytes + growth > maxBytes) return quotaMessage(usage.bytes + growth, maxBytes);
  return null;
}

/** Why the workspace's `usage` is past a limit (it holds, or a command would have left it holding, too much), or null. */
export function usageOverLimit(paths: WorkspacePaths, usage: Usage, verb: 'would hold' | 'holds' = 'holds'): string | null {
  const { maxBytes, maxFiles } = paths.limits;
  if (maxFiles !== null && usage.entries > maxFiles) return fileCountMessage(usage.entries, maxFiles, verb);
  if (maxBytes !== null && usage.bytes > maxBytes) return quotaMessage(usage.bytes, maxBytes, verb);
  return null;
}

/**
 * The clock the kernel stamps files with, now: the change time of a file made to read it. It is coarse
 * (a few milliseconds behind `Date.now()`), so an entry's birth time is compared with this, not with ours.
 */
export async function fileClockNow(): Promise<bigint> {
  const marker = join(tmpdir(), `oam-clock-${randomUUID()}`);
  const handle = await open(marker, 'wx');
  try {
    return (await handle.stat({ bigint: true })).ctimeNs;
  } finally {
    await handle.close();
    await unlink(marker);
  }
}

/**
 * Takes back what was made after `since` (a file-clock reading): every file, link and directory born
 * since, a directory only once empty (something that existed before and was moved into it stays, as
 * does the directory). Never follows a link; nothing that existed before is removed. Returns how many
 * entries went. It walks the whole tree, so it runs only when a command left the workspace past a limit.
 * A file system without birth times (`statx` gives none: birthtime 0) takes nothing back.
 */
export async function removeBornSince(root: string, since: bigint): Promise<number> {
  const dir = await openRoot(root);
  try {
    return await removeBornIn(dir, since, 0);
  } finally {
    await dir.close();
  }
}

async function removeBornIn(dir: FileHandle, since: bigint, depth: number): Promise<number> {
  let removed = 0;
  for (const entry of await readdir(at(dir), { withFileTypes: true }).catch(() => [] as Dirent[])) {
    const info = await lstat(at(dir, entry.name), { bigint: true }).catch(() => null);
    if (!info) continue;
    const born = info.birthtimeNs > since;
    if (!info.isDirectory()) {
      if (
        born &&
        (await unlink(at(dir, entry.name)).then(
          () => true,
          () => false,
        ))
      )
        removed += 1;
      continue;
    }
    // Deeper than a walk goes, a directory born since holds only what was made since (or moved from above it).
    if (depth >= MAX_WALK_DEPTH) {
      if (born) await removeTreeAt(dir, entry.name).then(() => (removed += 1));
      continue;
    }
    const sub = await openDirAt(dir, entry.name).catch(() => null);
    if (sub) {
      try {
        removed += await removeBornIn(sub, since, depth + 1);
      } finally {
        await sub.close();
      }
    }
    if (
      born &&
      (await rmdir(at(dir, entry.name)).then(
        () => true,
        () => false,
      ))
    )
      removed += 1;
  }
  return removed;
}

/**
 * Cuts every file that existed before a command and grew while it ran back to its size then (`before`:
 * the marks of the walk before the command, `after`: those of the walk after it): the growth is the
 * command's, like the files it made. Only the same inode, not born since `since`, with no other hard link
 * (which could be outside the workspace), never following a link. Returns how many files were cut.
 */
export async function cutBackGrown(root: string, before: Map<string, FileMark>, after: Map<string, FileMark>, since: bigint): Promise<number> {
  let cut = 0;
  for (const [rel, now] of after) {
    const then = before.get(rel);
    if (then && now.ino === then.ino && now.size > then.size && (await cutBack(root, rel, then, since))) cut += 1;
  }
  return cut;
}

async function cutBack(root: string, rel: string, then: FileMark, since: bigint): Promise<boolean> {
  const found = await locate(root, rel.split('/'), rel, { followLast: false }).catch(() => null);
  if (!found) return false;
  try {
    if (found.name === null) return false;
    const handle = await open(at(found.parent, found.name), constants.O_WRONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK).catch(() => null);
    if (!handle) return false;
    try {
      const info = await handle.stat({ bigint: true });
      if (!info.isFile() || info.ino !== BigInt(then.ino) || info.nlink !== 1n || info.birthtimeNs > since) return false;
      await handle.truncate(then.size);
      return true;
    } finally {
      await handle.close();
    }
  } finally {
    await found.parent.close();
  }
}

/** Refuses a write that would grow the workspace by `growth` bytes and `added` entries past a limit. */
export async function assertRoom(paths: WorkspacePaths, growth: number, added: number): Promise<void> {
  if (paths.limits.maxBytes === null && paths.limits.maxFiles === null) return;
  if (growth <= 0 && added <= 0) return;
  const problem = overLimit(paths, await usageOf(paths), growth, added);
  if (problem) throw new WorkspaceError('quota_exceeded', problem);
}

/**
 * Keeps a measured usage true after a file tool changed the tree: `rel` is the file it wrote, `mark` its size and
 * inode now (inode -1 when it could not be read: a cut-back then never touches it), so the quota watch's tally stays exact.
 */
export function recordChange(paths: WorkspacePaths, growth: number, added: number, rel: string, mark: FileMark): void {
  if (paths.usage) paths.usage = { bytes: paths.usage.bytes + growth, entries: paths.usage.entries + added };
  paths.marks?.set(rel, mark);
}
