import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { isUuid } from '../common/uuid.js';
import { forgetHead } from './checkpoint-store.js';
import { GitRepository } from './git-repository.js';
import { timelineOf, type TaskCheckpoints } from './history-timeline.js';

/** Each checkpoint is one small pack: folded before there are enough to slow every lookup. */
const MAX_PACKS = 40;
/**
 * Each Task leaves two loose refs (a file each, a file-system block each, uncounted by the object store):
 * folded into `packed-refs` past this many Tasks, so many small Tasks cannot fill the disk with refs.
 */
const MAX_LOOSE_TASKS = 500;

/** Says, in a repository's journal, that a Task's checkpoints were removed and why. */
export type DropJournal = (repo: GitRepository, taskId: string, note: string) => Promise<void>;

/** A session's history repository, as the total bound sees it. */
interface Held {
  sessionId: string;
  repo: GitRepository;
  bytes: number;
  /** When it last took a checkpoint (its pack folder changes with each). */
  touchedMs: number;
}

/**
 * What bounds the workspace history (history.service.ts): each repository by `history.max_bytes` (its
 * oldest Tasks' checkpoints go, never the one just recorded), all of them together by
 * `history.max_total_bytes` (every checkpoint of the sessions that took none for longest goes, never those of
 * the session that just took one or of one with a Task in progress), and the packs and refs many Tasks leave are folded. A removal is
 * journaled, so the Task's diff says why it is gone.
 */
export class HistoryBounds {
  constructor(
    private readonly dir: string,
    private readonly limits: { maxBytes: number; maxTotalBytes: number },
    private readonly dropped: DropJournal,
    private readonly inProgress: (repo: GitRepository) => Promise<boolean> = async () => false,
  ) {}

  /** After a Task's end checkpoint in `repo`: folds, then holds the repository to `history.max_bytes`. */
  async boundRepository(repo: GitRepository, keepTaskId: string): Promise<void> {
    const counts = await repo.objectStore();
    let size = counts.bytes;
    if (counts.packs > MAX_PACKS) {
      await repo.git(['repack', '-a', '-d', '-q']);
      size = (await repo.objectStore()).bytes;
    }
    const looseTasks = await readdir(join(repo.dir, 'refs', 'oam', 'tasks')).catch(() => [] as string[]);
    if (looseTasks.length > MAX_LOOSE_TASKS) await repo.git(['pack-refs', '--all', '--prune']);
    if (size <= this.limits.maxBytes) return;
    const timeline = await timelineOf(repo);
    const note = `history.max_bytes (${this.limits.maxBytes} bytes) reached; this Task's checkpoints were removed`;
    while (size > this.limits.maxBytes && timeline.length > 1) {
      const oldest = timeline.shift()!;
      if (oldest.taskId === keepTaskId) break;
      size = await this.drop(repo, [oldest], note);
    }
  }

  /**
   * Holds every session's history together to `history.max_total_bytes`: while past it, the session whose
   * history took no checkpoint for longest (never `keepSessionId`, nor one with a Task in progress) loses
   * all its checkpoints, its newest too. `serial` runs
   * the removal in that session's queue, so it never races one of its checkpoints. Reads only the sizes of
   * the pack folders, so it runs after every Task.
   */
  async boundTotal(keepSessionId: string, serial: (sessionId: string, work: () => Promise<void>) => Promise<void>): Promise<void> {
    const held = await this.held();
    let total = held.reduce((sum, repo) => sum + repo.bytes, 0);
    const note = `history.max_total_bytes (${this.limits.maxTotalBytes} bytes) reached; this session's checkpoints were removed, the least recently used first`;
    for (const victim of held.filter((repo) => repo.sessionId !== keepSessionId).sort((a, b) => a.touchedMs - b.touchedMs)) {
      if (total <= this.limits.maxTotalBytes) return;
      await serial(victim.sessionId, async () => {
        // A Task of that session in progress keeps it (its start checkpoint is its diff's base).
        if (await this.inProgress(victim.repo)) return;
        await forgetHead(victim.repo);
        total -= victim.bytes - (await this.drop(victim.repo, await timelineOf(victim.repo), note));
      });
    }
  }

  /** Removes the checkpoints of `tasks`, lets git drop their objects, journals each; returns the repository's size after. */
  private async drop(repo: GitRepository, tasks: TaskCheckpoints[], note: string): Promise<number> {
    if (tasks.length === 0) return (await repo.objectStore()).bytes;
    const refs = tasks.flatMap((task) => [task.before, task.after].filter((ref) => ref !== null).map((ref) => `delete refs/oam/tasks/${task.taskId}/${ref.kind}\n`));
    await repo.git(['update-ref', '--stdin'], { input: refs.join('') });
    await repo.git(['gc', '--quiet', '--prune=now']);
    for (const task of tasks) await this.dropped(repo, task.taskId, note);
    return (await repo.objectStore()).bytes;
  }

  /** Every session's history repository with its size (a readdir of its pack folder). */
  private async held(): Promise<Held[]> {
    const sessions = join(this.dir, 'sessions');
    const held: Held[] = [];
    for (const name of await readdir(sessions).catch(() => [] as string[])) {
      const sessionId = name.replace(/\.git$/, '');
      if (!name.endsWith('.git') || !isUuid(sessionId)) continue;
      const repo = new GitRepository(join(sessions, name));
      const touched = await stat(join(repo.dir, 'objects', 'pack')).catch(() => null);
      held.push({ sessionId, repo, bytes: (await repo.objectStore()).bytes, touchedMs: touched?.mtimeMs ?? 0 });
    }
    return held;
  }
}
