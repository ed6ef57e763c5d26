import { appendFile, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { CheckpointStore } from './checkpoint-store.js';

/** A stale marker: the service stopped while a Task ran or was checkpointed. */
export interface Marker {
  taskId: string;
  sessionId: string;
  phase: 'before' | 'running' | 'after';
  at: string;
}

/** A journal line: what happened to a Task's checkpoints besides being taken (interrupted, failed, dropped). */
export interface JournalEntry {
  at: string;
  taskId: string;
  event: 'interrupted' | 'checkpoint_failed' | 'dropped';
  phase?: Marker['phase'];
  note: string;
}

const MARKER = 'oam-task.json';
const JOURNAL = 'oam-journal.jsonl';

/**
 * The two files beside a history repository's objects that say what git cannot: the marker of the Task being
 * checkpointed (left behind only by a process that stopped mid-Task) and the journal of what befell Tasks' checkpoints.
 */
export const historyJournal = {
  async mark(store: CheckpointStore, marker: Marker): Promise<void> {
    await writeFile(join(store.repo.dir, MARKER), JSON.stringify(marker));
  },

  /** The marker's text, null when there is none; a marker cut by a crash is returned as it is, for the caller to judge. */
  readMarker(store: CheckpointStore): Promise<string | null> {
    return readFile(join(store.repo.dir, MARKER), 'utf8').catch(() => null);
  },

  async clearMarker(store: CheckpointStore): Promise<void> {
    await rm(join(store.repo.dir, MARKER), { force: true });
  },

  async append(store: CheckpointStore, entry: JournalEntry): Promise<void> {
    await appendFile(join(store.repo.dir, JOURNAL), `${JSON.stringify(entry)}\n`);
  },

  /** What the journal says of a Task (interrupted, a failed checkpoint, dropped by the bound); a torn line is skipped. */
  async of(store: CheckpointStore, taskId: string): Promise<JournalEntry[]> {
    const journal = await readFile(join(store.repo.dir, JOURNAL), 'utf8').catch(() => '');
    return journal
      .split('\n')
      .filter((line) => line.includes(taskId))
      .flatMap((line) => {
        try {
          return [JSON.parse(line) as JournalEntry];
        } catch {
          return [];
        }
      });
  },
};
