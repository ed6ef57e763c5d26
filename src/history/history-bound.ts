import { Injectable } from '@nestjs/common';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { Clock, nowIso, SYSTEM_CLOCK } from '../common/clock.js';
import { AppConfig } from '../config/app-config.js';
import type { CheckpointStore } from './checkpoint-store.js';
import type { GitRepository } from './git-repository.js';
import { historyJournal } from './history-journal.js';
import { timelineOf } from './history-timeline.js';

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
    const dropped: string[] = [];
    // What the refs left still reach: what the repository will hold once `gc` has pruned the rest.
    let kept = size;
    while (kept > limit * LOW_WATER && timeline.length > 1) {
      const oldest = timeline.shift()!;
      if (oldest.taskId === keepTaskId) break;
      const refs = [oldest.before, oldest.after].filter((ref) => ref !== null).map((ref) => `delete refs/oam/tasks/${oldest.taskId}/${ref.kind}\n`);
      await store.repo.git(['update-ref', '--stdin'], { input: refs.join('') });
      dropped.push(oldest.taskId);
      kept = await reachableBytes(store.repo);
    }
    if (dropped.length === 0) return;
    await store.repo.git(['gc', '--quiet', '--prune=now']);
    for (const taskId of dropped) {
      const note = `history.max_bytes (${limit} bytes) reached; this Task's checkpoints were removed`;
      await historyJournal.append(store, { at: nowIso(this.clock), taskId, event: 'dropped', note });
    }
  }
}

/** The bytes on disk of the objects some ref still reaches (`rev-list --disk-usage`, git 2.38+): read, nothing rewritten. */
async function reachableBytes(repo: GitRepository): Promise<number> {
  return Number(await repo.text(['rev-list', '--objects', '--all', '--disk-usage']));
}
