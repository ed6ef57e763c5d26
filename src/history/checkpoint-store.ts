import { createHash } from 'node:crypto';
import { constants } from 'node:fs';
import { open, readFile, readlink, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { SYSTEM_CLOCK, type Clock } from '../common/clock.js';
import { type GitRepository } from './git-repository.js';
import { canonicalMode, pointerOf, quotePath, subjectOf, type CheckpointKind, type CheckpointMeta, type LargeFile } from './checkpoint-meta.js';
import { scanWorkspace, type ScannedEntry } from './workspace-scan.js';

const HEAD = 'refs/oam/head';
const STAT_CACHE = 'oam-stat-cache.json';
/** A file changed this close to the scan may change again within the same timestamp: read it again next time. */
const RACY_MS = 2000;

export interface CheckpointLabel {
  kind: CheckpointKind;
  taskId: string;
  sessionId: string;
  undoOf?: string;
  note?: string;
}

export interface Checkpoint {
  commit: string;
  /** The commit's root tree: two checkpoints with the same tree and modes hold the same files. */
  tree: string;
  meta: CheckpointMeta;
  /** Files read and stored this time (the rest were unchanged since the previous checkpoint). */
  stored: number;
}

interface CachedFile {
  stamp: string;
  gitMode: string;
  large?: LargeFile;
}

/** The newest checkpoint: its commit, root tree and sequence number. */
export interface CheckpointHead {
  commit: string;
  tree: string;
  seq: number;
}

/**
 * Written after every checkpoint, beside the repository: each file's stat as that checkpoint read it, and the
 * checkpoint itself (`head`; written at the repository's creation too), so the next one needs no git process to
 * learn what it builds on. A cache from before a crash may name an older checkpoint than the repository's newest:
 * `head` is then left out (see `distrustHead`), and the files count only where their commit is the newest one git
 * reports.
 */
interface StatCache {
  commit: string;
  /** null: the repository has no checkpoint yet; absent: unknown, ask git. */
  head?: CheckpointHead | null;
  files: Record<string, CachedFile>;
}

export interface CheckpointLimits {
  maxFiles: number;
  /** Files larger than this are recorded by SHA-256 and size only. */
  largeFileBytes: number;
}

/**
 * Records a workspace as a commit of the history repository: a tree of its files and symlinks (git's
 * own objects, packed by `git fast-import`), and a JSON message with what git trees cannot hold (exact
 * permission bits, directories, large files by hash). Only paths whose stat changed since the previous
 * checkpoint are read again; the rest come from that checkpoint's tree, so a checkpoint of a large
 * workspace where few files changed costs one directory walk and a small pack.
 */
export class CheckpointStore {
  constructor(
    readonly repo: GitRepository,
    private readonly limits: CheckpointLimits,
    private readonly clock: Clock = SYSTEM_CLOCK,
  ) {}

  /** Creates the repository once, with a cache that says it has no checkpoint yet. */
  async ensure(): Promise<void> {
    if (await this.repo.ensure()) await this.writeCache({ commit: '', head: null, files: {} });
  }

  async take(root: string, label: CheckpointLabel): Promise<Checkpoint> {
    await this.ensure();
    const scanStart = this.clock.now();
    const scan = await scanWorkspace(root, this.limits.maxFiles);
    const cache = await this.readCache();
    const head = cache && cache.head !== undefined ? cache.head : await this.head();
    const base = head && cache?.commit === head.commit ? cache : null;
    const meta: CheckpointMeta = { v: 1, ...label, seq: (head?.seq ?? 0) + 1, dirs: {}, modes: {}, large: {}, skipped: scan.skipped };
    const files: Record<string, CachedFile> = {};
    let stored = 0;
    const ref = `refs/oam/tasks/${label.taskId}/${label.kind}`;
    // First what the message needs (it precedes the file commands): modes, directories, large files' hashes.
    const changed: { entry: ScannedEntry; gitMode: string }[] = [];
    const present = new Set<string>();
    for (const entry of scan.entries) {
      if (entry.kind === 'dir') {
        meta.dirs[entry.path] = entry.mode;
        continue;
      }
      present.add(entry.path);
      const gitMode = entry.kind === 'symlink' ? '120000' : entry.mode & 0o111 ? '100755' : '100644';
      if (entry.kind === 'file' && entry.mode !== canonicalMode(gitMode)) meta.modes[entry.path] = entry.mode;
      const known = base?.files[entry.path];
      if (known && known.stamp === entry.stamp && known.gitMode === gitMode) {
        files[entry.path] = known;
        if (known.large) meta.large[entry.path] = known.large;
      } else {
        if (entry.kind === 'file' && entry.size > this.limits.largeFileBytes) {
          const large = await this.hashLarge(join(root, entry.path));
          if (large) meta.large[entry.path] = large;
        }
        changed.push({ entry, gitMode });
      }
    }
    const printed = await this.repo.fastImport(async (write) => {
      const message = Buffer.from(`${subjectOf(meta)}\n\n${JSON.stringify(meta)}`);
      await write(`commit ${ref}\nmark :1\ncommitter ollama-agent-mcp <history@localhost> ${Math.floor(scanStart / 1000)} +0000\n`);
      await write(Buffer.concat([Buffer.from(`data ${message.length}\n`), message, Buffer.from('\n')]));
      if (base && head) {
        await write(`M 040000 ${head.tree} ""\n`);
        for (const path of Object.keys(base.files)) if (!present.has(path)) await write(`D ${quotePath(path)}\n`);
      }
      for (const { entry, gitMode } of changed) {
        const large = meta.large[entry.path];
        const bytes = large ? pointerOf(large) : await this.contentOf(root, entry);
        if (bytes === null) {
          if (base?.files[entry.path]) await write(`D ${quotePath(entry.path)}\n`);
          continue;
        }
        const racy = scanStart - Number(entry.stamp.split(':')[0]) < RACY_MS;
        files[entry.path] = { stamp: racy ? '' : entry.stamp, gitMode, ...(large ? { large } : {}) };
        await write(`M ${gitMode} inline ${quotePath(entry.path)}\ndata ${bytes.length}\n`);
        await write(bytes);
        await write('\n');
        stored++;
      }
      // The new commit and its root tree from fast-import itself, instead of a `git log` (a process less per checkpoint).
      await write(`\nreset ${HEAD}\nfrom :1\n\nls :1 ""\nget-mark :1\ndone\n`);
    });
    const commit = /^[0-9a-f]{40,64}$/m.exec(printed)?.[0];
    const tree = /^040000 tree ([0-9a-f]{40,64})\t/m.exec(printed)?.[1];
    if (!commit || !tree) throw new Error(`checkpoint ${ref} was not recorded`);
    await this.writeCache({ commit, head: { commit, tree, seq: meta.seq }, files });
    return { commit, tree, meta, stored };
  }

  /**
   * After a crash (CheckpointRecorder finds a Task's marker) the cache may name an older checkpoint than the
   * repository's newest, when the process stopped between the two: the next checkpoint asks git instead.
   */
  async distrustHead(): Promise<void> {
    const cache = await this.readCache();
    if (cache?.head === undefined) return;
    // Where the cache cannot be written again (a full disk), it goes: every file is then read again, but none is missed.
    await this.writeCache({ commit: cache.commit, files: cache.files }).catch(() => rm(join(this.repo.dir, STAT_CACHE), { force: true }));
  }

  /** The newest checkpoint, its tree and sequence number, as git reports it; null before the first. */
  async head(): Promise<CheckpointHead | null> {
    const line = await this.repo.text(['log', '-1', '--format=%H %T %s', HEAD, '--']).catch(() => '');
    const [commit, tree, seq] = line.trim().split(' ');
    return commit && tree ? { commit, tree, seq: Number(seq?.replace('#', '')) || 0 } : null;
  }

  /** A file's bytes, a symlink's target; null when it vanished or is no longer what the walk saw. */
  private async contentOf(root: string, entry: ScannedEntry): Promise<Buffer | null> {
    const absolute = join(root, entry.path);
    if (entry.kind === 'symlink') return readlink(absolute, { encoding: 'buffer' }).catch(() => null);
    // O_NOFOLLOW: a file swapped for a link after the walk is not followed out of the workspace.
    const handle = await open(absolute, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK).catch(() => null);
    if (!handle) return null;
    try {
      return (await handle.stat()).isFile() ? await handle.readFile() : null;
    } finally {
      await handle.close();
    }
  }

  private async hashLarge(absolute: string): Promise<LargeFile | null> {
    const handle = await open(absolute, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK).catch(() => null);
    if (!handle) return null;
    try {
      const info = await handle.stat();
      if (!info.isFile()) return null;
      const hash = createHash('sha256');
      for await (const chunk of handle.createReadStream({ autoClose: false })) hash.update(chunk as Buffer);
      return { sha256: hash.digest('hex'), size: info.size };
    } finally {
      await handle.close();
    }
  }

  private async readCache(): Promise<StatCache | null> {
    try {
      return JSON.parse(await readFile(join(this.repo.dir, STAT_CACHE), 'utf8')) as StatCache;
    } catch {
      return null;
    }
  }

  /** Written beside and renamed in: a crash leaves the old cache (which then names an older commit and is ignored). */
  private async writeCache(cache: StatCache): Promise<void> {
    const path = join(this.repo.dir, STAT_CACHE);
    await writeFile(`${path}.tmp`, JSON.stringify(cache));
    await rename(`${path}.tmp`, path);
  }
}

/**
 * Forgets a repository's newest checkpoint (its head and the stat cache built on it), once every Task's
 * checkpoints were removed (`history.max_total_bytes`): git may then drop every object, and the next
 * checkpoint reads every file again, as the first one did.
 */
export async function forgetHead(repo: GitRepository): Promise<void> {
  await rm(join(repo.dir, STAT_CACHE), { force: true });
  await repo.git(['update-ref', '-d', HEAD]);
}
