import { lstat, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { WorkspaceError } from './workspace-error.js';
import type { WorkspacePaths } from './workspace-paths.js';

/** Bytes held below `dir`: every entry's own size, symlinks not followed (hard links count once per name). */
export async function diskUsage(dir: string): Promise<number> {
  let total = 0;
  const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
  for (const entry of entries) {
    const full = join(dir, entry.name);
    if (entry.isDirectory()) total += await diskUsage(full);
    else total += (await lstat(full).catch(() => null))?.size ?? 0;
  }
  return total;
}

export const quotaMessage = (used: number, max: number, verb: 'would hold' | 'holds' = 'would hold') =>
  `the session workspace ${verb} ${used} bytes, more than its quota of ${max} bytes (workspace.max_session_bytes); delete files to make room`;

/** Refuses a write that would grow the workspace by `growth` bytes past its quota. */
export async function assertRoom(paths: WorkspacePaths, growth: number): Promise<void> {
  if (paths.maxBytes === null || growth <= 0) return;
  const used = await diskUsage(paths.root);
  if (used + growth > paths.maxBytes) throw new WorkspaceError('quota_exceeded', quotaMessage(used + growth, paths.maxBytes));
}
