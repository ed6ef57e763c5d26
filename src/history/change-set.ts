import { canonicalMode, type CheckpointMeta, type LargeFile } from './checkpoint-meta.js';
import type { GitRepository } from './git-repository.js';

/** One side of a changed path: the blob, the exact permission bits, a symlink or not, a large file's hash. */
export interface FileSide {
  oid: string;
  gitMode: string;
  mode: number;
  large: LargeFile | null;
}

/** One path of a change set; a rename is a deleted and an added path with the same content, paired. */
export interface FileChange {
  status: 'added' | 'changed' | 'deleted' | 'renamed' | 'mode';
  path: string;
  /** The old path of a rename. */
  from?: string;
  before: FileSide | null;
  after: FileSide | null;
}

const ZERO = /^0+$/;
/** Empty files are all alike: deleting one and adding another is no rename. */
const EMPTY_BLOB = 'e69de29bb2d1d6434b8b29ae775ad8c2e48c5391';

/**
 * Checkpoint commits' metas (each message after its subject line), read together by one git process. A commit
 * object is its headers, a blank line and the message; fast-import writes no header that holds a blank line.
 */
export async function readMetas(repo: GitRepository, commits: string[]): Promise<CheckpointMeta[]> {
  const objects = await repo.objects(commits);
  return commits.map((commit) => {
    const raw = objects.get(commit)?.toString('utf8');
    if (raw === undefined) throw new Error(`checkpoint ${commit} is missing from the history`);
    const message = raw.slice(raw.indexOf('\n\n') + 2);
    return JSON.parse(message.slice(message.indexOf('\n\n') + 2)) as CheckpointMeta;
  });
}

export async function readMeta(repo: GitRepository, commit: string): Promise<CheckpointMeta> {
  return (await readMetas(repo, [commit]))[0];
}

/**
 * Whether two checkpoints hold the same files, without a git process: the same root tree (contents, git modes,
 * links, large files' pointers) and the same permission bits, which are all that `changeSet` compares.
 */
export function sameFiles(a: { tree: string; meta: CheckpointMeta }, b: { tree: string; meta: CheckpointMeta }): boolean {
  const paths = new Set([...Object.keys(a.meta.modes), ...Object.keys(b.meta.modes)]);
  return a.tree === b.tree && [...paths].every((path) => a.meta.modes[path] === b.meta.modes[path]);
}

/**
 * Every path that differs between two checkpoints: added, changed, deleted, renamed (same content under
 * a new name: exact renames only, so a pairing is never a guess) and permission-only changes, which git
 * trees see for the executable bit and the metas for the other bits. Sorted by path.
 */
export async function changeSet(repo: GitRepository, beforeCommit: string, afterCommit: string): Promise<FileChange[]> {
  const [beforeMeta, afterMeta] = await readMetas(repo, [beforeCommit, afterCommit]);
  const raw = await repo.git(['diff-tree', '-r', '-z', '--raw', '--no-renames', '--no-textconv', '--no-ext-diff', beforeCommit, afterCommit, '--']);
  const fields = raw.stdout.toString('utf8').split('\0');
  const changes: FileChange[] = [];
  const side = (meta: CheckpointMeta, path: string, gitMode: string, oid: string): FileSide | null =>
    ZERO.test(oid) || gitMode === '000000' ? null : { oid, gitMode, mode: meta.modes[path] ?? canonicalMode(gitMode), large: meta.large[path] ?? null };
  for (let i = 0; i + 1 < fields.length; i += 2) {
    const [oldMode, newMode, oldOid, newOid] = fields[i].slice(1).split(' ');
    const path = fields[i + 1];
    const before = side(beforeMeta, path, oldMode, oldOid);
    const after = side(afterMeta, path, newMode, newOid);
    const status = !before ? 'added' : !after ? 'deleted' : before.oid === after.oid ? 'mode' : 'changed';
    changes.push({ status, path, before, after });
  }
  const listed = new Set(changes.map((change) => change.path));
  const candidates = [...new Set([...Object.keys(beforeMeta.modes), ...Object.keys(afterMeta.modes)])].filter(
    (path) => !listed.has(path) && (beforeMeta.modes[path] ?? -1) !== (afterMeta.modes[path] ?? -1),
  );
  if (candidates.length > 0) changes.push(...(await bitsOnly(repo, afterCommit, candidates, beforeMeta, afterMeta)));
  return pairRenames(changes).sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

/** Paths whose content and git mode stayed while their other permission bits changed (0644 → 0600). */
async function bitsOnly(repo: GitRepository, commit: string, paths: string[], beforeMeta: CheckpointMeta, afterMeta: CheckpointMeta): Promise<FileChange[]> {
  const listing = await repo.git(['ls-tree', '-z', '--full-tree', commit, '--', ...paths]);
  const changes: FileChange[] = [];
  for (const line of listing.stdout.toString('utf8').split('\0')) {
    const tab = line.indexOf('\t');
    if (tab === -1) continue;
    const [gitMode, , oid] = line.slice(0, tab).split(' ');
    const path = line.slice(tab + 1);
    const large = afterMeta.large[path] ?? null;
    changes.push({
      status: 'mode',
      path,
      before: { oid, gitMode, mode: beforeMeta.modes[path] ?? canonicalMode(gitMode), large },
      after: { oid, gitMode, mode: afterMeta.modes[path] ?? canonicalMode(gitMode), large },
    });
  }
  return changes;
}

function pairRenames(changes: FileChange[]): FileChange[] {
  const deleted = new Map<string, FileChange[]>();
  for (const change of changes) {
    if (change.status !== 'deleted' || !change.before || change.before.oid === EMPTY_BLOB) continue;
    const key = `${change.before.oid} ${change.before.gitMode}`;
    deleted.set(key, [...(deleted.get(key) ?? []), change]);
  }
  const paired = new Set<FileChange>();
  const result: FileChange[] = [];
  for (const change of changes) {
    if (change.status !== 'added' || !change.after) continue;
    const source = deleted.get(`${change.after.oid} ${change.after.gitMode}`)?.find((candidate) => !paired.has(candidate));
    if (!source) continue;
    paired.add(source);
    paired.add(change);
    result.push({ status: 'renamed', path: change.path, from: source.path, before: source.before, after: change.after });
  }
  return [...result, ...changes.filter((change) => !paired.has(change))];
}

/** The paths a change set touches (both names of a rename). */
export function touchedPaths(changes: FileChange[]): string[] {
  return changes.flatMap((change) => (change.from ? [change.from, change.path] : [change.path]));
}
