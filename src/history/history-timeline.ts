import { parseSubject, type CheckpointRef } from './checkpoint-meta.js';
import type { GitRepository } from './git-repository.js';

/** A Task's two checkpoints, as far as they were recorded. */
export interface TaskCheckpoints {
  taskId: string;
  sessionId: string;
  before: CheckpointRef | null;
  after: CheckpointRef | null;
  /** An undo Task: the Task whose changes it took back. */
  undoOf: string | null;
}

/** The Tasks of a history repository in the order their checkpoints were taken (one `for-each-ref`). */
export async function timelineOf(repo: GitRepository): Promise<TaskCheckpoints[]> {
  const listing = await repo.text(['for-each-ref', '--format=%(objectname) %(contents:subject)', 'refs/oam/tasks/']).catch(() => '');
  const refs = listing
    .split('\n')
    .map((line) => parseSubject(line.slice(0, line.indexOf(' ')), line.slice(line.indexOf(' ') + 1)))
    .filter((ref): ref is CheckpointRef => ref !== null)
    .sort((a, b) => a.seq - b.seq);
  const tasks = new Map<string, TaskCheckpoints>();
  for (const ref of refs) {
    const task = tasks.get(ref.taskId) ?? { taskId: ref.taskId, sessionId: ref.sessionId, before: null, after: null, undoOf: null };
    task[ref.kind] = ref;
    if (ref.undoOf) task.undoOf = ref.undoOf;
    tasks.set(ref.taskId, task);
  }
  // Ordered by each Task's first checkpoint.
  return [...tasks.values()].sort((a, b) => (a.before ?? a.after)!.seq - (b.before ?? b.after)!.seq);
}
