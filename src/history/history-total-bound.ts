import { Injectable } from '@nestjs/common';
import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { Clock, nowIso, SYSTEM_CLOCK } from '../common/clock.js';
import { isUuid } from '../common/uuid.js';
import { AppConfig } from '../config/app-config.js';
import { forgetHead } from './checkpoint-store.js';
import { HistoryStores } from './history-stores.js';
import { historyJournal } from './history-journal.js';
import { timelineOf } from './history-timeline.js';

/** A session's history repository, as the total bound sees it. */
interface Held {
  sessionId: string;
  bytes: number;
  /** When it last took a checkpoint (its pack folder changes with each). */
  touchedMs: number;
}

/**
 * A pack folder left unchanged for this long before a walk is settled: its walked size is kept and read again only
 * once the folder changes. Every object is packed (`fastimport.unpackLimit=0`, `gc`), and each pack written or
 * removed changes the folder's time, so an unchanged time means unchanged bytes; the margin covers the file system's
 * coarse timestamps and a pack still being written.
 */
const SETTLED_MS = 2_000;

/**
 * Holds every session's history together to `history.max_total_bytes` (issue 37: many sessions, each under
 * `history.max_bytes`, could still fill the disk): while past it, the session whose history took no checkpoint
 * for longest (never the one that just took one, nor one with a Task in progress) loses every checkpoint, its
 * newest too, in that session's own queue (HistoryStores.serial), so it never races one of its checkpoints. The
 * removal is journaled, so its Tasks' diffs say why they are gone. It runs after every Task: it stats each
 * session's pack folder, and walks only the folders that changed since it last walked them. Not for a shared root,
 * whose one repository `history.max_bytes` bounds.
 */
@Injectable()
export class HistoryTotalBound {
  /** The sizes of the settled repositories at their last walk, by session (only the sessions listed at the last bound). */
  private settled = new Map<string, { touchedMs: number; bytes: number }>();

  constructor(
    private readonly config: AppConfig,
    private readonly stores: HistoryStores,
    private readonly clock: Clock = SYSTEM_CLOCK,
  ) {}

  async bound(keepSessionId: string): Promise<void> {
    const limit = this.config.history.maxTotalBytes;
    const held = await this.held();
    let total = held.reduce((sum, repo) => sum + repo.bytes, 0);
    const note = `history.max_total_bytes (${limit} bytes) reached; this session's checkpoints were removed, the least recently used first`;
    for (const victim of held.filter((repo) => repo.sessionId !== keepSessionId).sort((a, b) => a.touchedMs - b.touchedMs)) {
      if (total <= limit) return;
      await this.stores.serial(victim.sessionId, async () => {
        const store = this.stores.store(victim.sessionId);
        // A Task of that session in progress keeps it (its start checkpoint is its diff's base).
        if ((await historyJournal.readMarker(store)) !== null) return;
        const tasks = await timelineOf(store.repo);
        await forgetHead(store.repo);
        const refs = tasks.flatMap((task) => [task.before, task.after].filter((ref) => ref !== null).map((ref) => `delete refs/oam/tasks/${task.taskId}/${ref.kind}\n`));
        if (refs.length > 0) await store.repo.git(['update-ref', '--stdin'], { input: refs.join('') });
        await store.repo.git(['gc', '--quiet', '--prune=now']);
        for (const task of tasks) await historyJournal.append(store, { at: nowIso(this.clock), taskId: task.taskId, event: 'dropped', note });
        total -= victim.bytes - (await store.repo.objectStore()).bytes;
      });
    }
  }

  /** Every session's history repository with its size (walked again only where its pack folder changed). */
  private async held(): Promise<Held[]> {
    const sessions = join(this.stores.dir, 'sessions');
    const held: Held[] = [];
    const settled = new Map<string, { touchedMs: number; bytes: number }>();
    // The file system's times, not the run's clock: they are compared with the folders' mtimes.
    const settledBefore = Date.now() - SETTLED_MS;
    for (const name of await readdir(sessions).catch(() => [] as string[])) {
      const sessionId = name.replace(/\.git$/, '');
      if (!name.endsWith('.git') || !isUuid(sessionId)) continue;
      const repo = this.stores.store(sessionId).repo;
      const touched = await stat(join(repo.dir, 'objects', 'pack')).catch(() => null);
      const touchedMs = touched?.mtimeMs ?? 0;
      const known = this.settled.get(sessionId);
      const bytes = known?.touchedMs === touchedMs ? known.bytes : (await repo.objectStore()).bytes;
      if (touched && touchedMs < settledBefore) settled.set(sessionId, { touchedMs, bytes });
      held.push({ sessionId, bytes, touchedMs });
    }
    this.settled = settled;
    return held;
  }
}
