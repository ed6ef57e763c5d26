import { Injectable } from '@nestjs/common';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { Clock, nowIso, SYSTEM_CLOCK } from '../common/clock.js';
import { AppConfig } from '../config/app-config.js';
import type { CheckpointStore } from './checkpoint-store.js';
import type { GitRepository } from './git-repository.js';
import { historyJournal } from './history-journal.js';
import { timelineOf, type TaskCheckpoints } from './history-timeline.js';

/** Each checkpoint is one small pack: past this many they are folded into one, before they slow every lookup. */
const MAX_PACKS = 40;
/**
 * Once over `history.max_bytes`, the oldest Tasks go until the history is back under this share of it (ADR 0041):
 * one `git gc` then makes room for several Tasks, instead of one `gc` (a rewrite of every pack) per dropped Task and,
 * at the bound, one per Task that ends.
 */
const LOW_WATER = 0.8;
/**
 * Each Task leaves two loose refs (a file each, a file-system block each, uncounted by the object store): folded
 * into `packed-refs` past this many Tasks, so many small Tasks cannot fill the disk with refs (issue 37).
 */
const MAX_LOOSE_TASKS = 500;

/**
 * Keeps a history repository within `history.max_bytes`: past it, the oldest Tasks' checkpoints go (never the one
 * just recorded) down to the low-water mark, their objects leave in one `git gc`, and the journal says which went.
 */
@Injectable()
export class HistoryBound {
  constructor(
    private readonly config: AppConfig,
    private readonly clock: Clock = SYSTEM_CLOCK,
  ) {}

  async bound(store: CheckpointStore, keepTaskId: string): Promise<void> {
    const limit = this.config.history.maxBytes;
    const counts = await store.repo.objectStore();
    let size = counts.bytes;
    if (counts.packs > MAX_PACKS) {
      await store.repo.git(['repack', '-a', '-d', '-q']);
      size = (await store.repo.objectStore()).bytes;
    }
    const looseTasks = await readdir(join(store.repo.dir, 'refs', 'oam', 'tasks')).catch(() => [] as string[]);
    if (looseTasks.length > MAX_LOOSE_TASKS) await store.repo.git(['pack-refs', '--all', '--prune']);
    if (size <= limit) return;
    const timeline = await timelineOf(store.repo);
    // Never the Task just recorded (nor any after it), nor the newest.
    const keep = timeline.findIndex((task) => task.taskId === keepTaskId);
    const most = keep === -1 ? timeline.length - 1 : Math.min(keep, timeline.length - 1);
    if (most < 1) return;
    const dropped = timeline.slice(0, await fewestToDrop(store.repo, timeline, most, limit * LOW_WATER));
    const refs = dropped.flatMap((task) => [task.before, task.after].filter((ref) => ref !== null).map((ref) => `delete refs/oam/tasks/${task.taskId}/${ref.kind}\n`));
    await store.repo.git(['update-ref', '--stdin'], { input: refs.join('') });
    await store.repo.git(['gc', '--quiet', '--prune=now']);
    for (const { taskId } of dropped) {
      const note = `history.max_bytes (${limit} bytes) reached; this Task's checkpoints were removed`;
      await historyJournal.append(store, { at: nowIso(this.clock), taskId, event: 'dropped', note });
    }
  }
}

/**
 * How many of the oldest Tasks (at least one, at most `most`) must go for what the refs left reach to fit in
 * `target`: the fewest, found by halving (what stays reachable only shrinks as more go), so a history of thousands
 * of small Tasks costs a dozen reads of the object graph, not one per dropped Task.
 */
async function fewestToDrop(repo: GitRepository, timeline: TaskCheckpoints[], most: number, target: number): Promise<number> {
  let low = 1;
  let high = most;
  while (low < high) {
    const middle = Math.floor((low + high) / 2);
    if ((await reachableBytes(repo, timeline.slice(middle))) <= target) high = middle;
    else low = middle + 1;
  }
  return low;
}

/**
 * The bytes on disk of the objects that the refs other than Tasks' and the checkpoints of `kept` reach
 * (`rev-list --disk-usage`, git 2.38+): what the repository would hold once those Tasks' refs went and `gc` pruned
 * the rest. Read, nothing rewritten.
 */
async function reachableBytes(repo: GitRepository, kept: TaskCheckpoints[]): Promise<number> {
  const commits = kept.flatMap((task) => [task.before, task.after].filter((ref) => ref !== null).map((ref) => `${ref.commit}\n`));
  const { stdout } = await repo.git(['rev-list', '--objects', '--disk-usage', '--exclude=refs/oam/tasks/*', '--all', '--stdin'], { input: commits.join('') });
  return Number(stdout.toString('utf8'));
}
