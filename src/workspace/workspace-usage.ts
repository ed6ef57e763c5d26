import { lstat } from 'node:fs/promises';
import { at, openRoot, walkBeneath } from './beneath.js';
import { WorkspaceError } from './workspace-error.js';
import type { Usage, WorkspacePaths } from './workspace-paths.js';

/**
 * Walks the tree once, race-free (beneath.ts), and stops after `stopAfter` entries: a workspace with
 * more is over its limit whatever the rest holds, and the walk stays bounded however many files a
 * command made.
 */
export async function measureUsage(root: string, stopAfter = Number.POSITIVE_INFINITY): Promise<Usage> {
  const usage: Usage = { bytes: 0, entries: 0 };
  const dir = await openRoot(root);
  try {
    for await (const { dir: parent, name, entry } of walkBeneath(dir)) {
      usage.entries += 1;
      if (!entry.isDirectory()) usage.bytes += (await lstat(at(parent, name)).catch(() => null))?.size ?? 0;
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
  paths.usage ??= await measureUsage(paths.root, paths.limits.maxFiles ?? Number.POSITIVE_INFINITY);
  return paths.usage;
}

/** Forgets the measured usage (a command ran) and measures again. */
export async function remeasure(paths: WorkspacePaths): Promise<Usage> {
  paths.usage = null;
  return usageOf(paths);
}

export const quotaMessage = (used: number, max: number, verb: 'would hold' | 'holds' = 'would hold') =>
  `the session workspace ${verb} ${used} bytes, more than its quota of ${max} bytes (workspace.max_session_bytes); delete files to make room`;

export const fileCountMessage = (entries: number, max: number, verb: 'would hold' | 'holds' = 'would hold') =>
  `the session workspace ${verb} ${entries > max + 1 ? `more than ${max}` : entries} files and directories, more than its limit of ${max} (workspace.max_session_files); delete files to make room`;

/** Why the workspace is over a limit (with `growth` bytes and `added` entries more), or null. */
export function overLimit(paths: WorkspacePaths, usage: Usage, growth = 0, added = 0, verb: 'would hold' | 'holds' = 'would hold'): string | null {
  const { maxBytes, maxFiles } = paths.limits;
  if (maxFiles !== null && added > 0 && usage.entries + added > maxFiles) return fileCountMessage(usage.entries + added, maxFiles, verb);
  if (maxFiles !== null && verb === 'holds' && usage.entries > maxFiles) return fileCountMessage(usage.entries, maxFiles, verb);
  if (maxBytes !== null && growth > 0 && usage.bytes + growth > maxBytes) return quotaMessage(usage.bytes + growth, maxBytes, verb);
  if (maxBytes !== null && verb === 'holds' && usage.bytes > maxBytes) return quotaMessage(usage.bytes, maxBytes, verb);
  return null;
}

/** Refuses a write that would grow the workspace by `growth` bytes and `added` entries past a limit. */
export async function assertRoom(paths: WorkspacePaths, growth: number, added: number): Promise<void> {
  if (paths.limits.maxBytes === null && paths.limits.maxFiles === null) return;
  if (growth <= 0 && added <= 0) return;
  const problem = overLimit(paths, await usageOf(paths), growth, added);
  if (problem) throw new WorkspaceError('quota_exceeded', problem);
}

/** Keeps a measured usage true after a file tool changed the tree. */
export function recordChange(paths: WorkspacePaths, growth: number, added: number): void {
  if (paths.usage) paths.usage = { bytes: paths.usage.bytes + growth, entries: paths.usage.entries + added };
}
