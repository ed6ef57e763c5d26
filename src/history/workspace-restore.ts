import { createHash } from 'node:crypto';
import { constants } from 'node:fs';
import { chmod, lstat, mkdir, open, readdir, rm, rmdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { readMeta } from './change-set.js';
import type { CheckpointMeta } from './checkpoint-meta.js';
import { canonicalMode } from './checkpoint-meta.js';
import type { GitRepository } from './git-repository.js';

export interface RestoreOutcome {
  restored: string[];
  /** Large files the checkpoint holds by hash only, whose current content differs: left as they are. */
  notRestorable: string[];
}

interface TreeEntry {
  gitMode: string;
  oid: string;
}

/** Paths come from checkpoints this service wrote; anything else is refused before touching the disk. */
function checkedPath(path: string): string[] {
  const parts = path.split('/');
  if (parts.some((part) => part === '' || part === '.' || part === '..' || part === '.git' || part.includes('\0'))) {
    throw new Error(`refusing to restore the path ${JSON.stringify(path)}`);
  }
  return parts;
}

async function listTree(repo: GitRepository, commit: string): Promise<Map<string, TreeEntry>> {
  const { stdout } = await repo.git(['ls-tree', '-r', '-z', '--full-tree', commit]);
  const entries = new Map<string, TreeEntry>();
  for (const line of stdout.toString('utf8').split('\0')) {
    const tab = line.indexOf('\t');
    if (tab === -1) continue;
    const [gitMode, , oid] = line.slice(0, tab).split(' ');
    entries.set(line.slice(tab + 1), { gitMode, oid });
  }
  return entries;
}

/**
 * Puts `paths` of a workspace back as `commit` recorded them: content byte for byte, symlinks as links,
 * exact permission bits; a path the checkpoint lacks is removed. Every directory on the way is checked
 * with lstat and a link or file there is replaced by a directory, so a write never follows a link the
 * agent planted out of the workspace. `all` restores the whole checkpoint (a fork's new workspace).
 */
export async function restoreCheckpoint(repo: GitRepository, commit: string, root: string, paths: string[] | 'all'): Promise<RestoreOutcome> {
  const [meta, tree] = await Promise.all([readMeta(repo, commit), listTree(repo, commit)]);
  const wanted = paths === 'all' ? [...tree.keys()] : [...new Set(paths)];
  const present = wanted.filter((path) => tree.has(path) && !meta.large[path]);
  const blobs = await repo.objects(present.map((path) => tree.get(path)!.oid));
  const outcome: RestoreOutcome = { restored: [], notRestorable: [] };
  // Removals first (deepest first), so a directory the checkpoint wants where a file is now can be made.
  for (const path of wanted
    .filter((candidate) => !tree.has(candidate))
    .sort()
    .reverse()) {
    checkedPath(path);
    await rm(join(root, path), { recursive: true, force: true });
    await pruneEmptyParents(root, path, meta);
    outcome.restored.push(path);
  }
  for (const path of wanted.filter((candidate) => tree.has(candidate)).sort()) {
    const parts = checkedPath(path);
    const entry = tree.get(path)!;
    const absolute = join(root, path);
    if (meta.large[path]) {
      if ((await sha256Of(absolute)) === meta.large[path].sha256) continue;
      outcome.notRestorable.push(path);
      continue;
    }
    await ensureDirectories(root, parts.slice(0, -1), meta);
    await rm(absolute, { recursive: true, force: true });
    const bytes = blobs.get(entry.oid) ?? Buffer.alloc(0);
    if (entry.gitMode === '120000') await symlink(bytes.toString('utf8'), absolute);
    else {
      const mode = meta.modes[path] ?? canonicalMode(entry.gitMode);
      await writeFile(absolute, bytes, { flag: 'wx', mode });
      await chmod(absolute, mode);
    }
    outcome.restored.push(path);
  }
  if (paths === 'all') for (const dir of Object.keys(meta.dirs).sort()) await ensureDirectories(root, checkedPath(dir), meta);
  return outcome;
}

async function ensureDirectories(root: string, parts: string[], meta: CheckpointMeta): Promise<void> {
  let relative = '';
  for (const part of parts) {
    relative = relative ? `${relative}/${part}` : part;
    const absolute = join(root, relative);
    const info = await lstat(absolute).catch(() => null);
    if (info?.isDirectory()) continue;
    if (info) await rm(absolute, { force: true });
    await mkdir(absolute);
    await chmod(absolute, meta.dirs[relative] ?? 0o755);
  }
}

/** Directories left empty by a removal, which the checkpoint did not have, go too. */
async function pruneEmptyParents(root: string, path: string, meta: CheckpointMeta): Promise<void> {
  const parts = path.split('/').slice(0, -1);
  while (parts.length > 0) {
    const dir = parts.join('/');
    if (meta.dirs[dir] !== undefined) return;
    const absolute = join(root, dir);
    const info = await lstat(absolute).catch(() => null);
    if (!info?.isDirectory() || (await readdir(absolute)).length > 0) return;
    await rmdir(absolute);
    parts.pop();
  }
}

async function sha256Of(absolute: string): Promise<string | null> {
  const handle = await open(absolute, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK).catch(() => null);
  if (!handle) return null;
  try {
    if (!(await handle.stat()).isFile()) return null;
    const hash = createHash('sha256');
    for await (const chunk of handle.createReadStream({ autoClose: false })) hash.update(chunk as Buffer);
    return hash.digest('hex');
  } finally {
    await handle.close();
  }
}
