import { AgentFailure } from '../agent/agent-runner.js';
import { changeSet, touchedPaths } from './change-set.js';
import type { GitRepository } from './git-repository.js';
import type { TaskCheckpoints } from './history-timeline.js';
import type { UndoTarget } from './undo-request.js';

export interface UndoPlan {
  target: TaskCheckpoints;
  /** The paths the target changed: each goes back to its start checkpoint. */
  paths: string[];
}

const list = (paths: string[]) => paths.map((path) => JSON.stringify(path)).join(', ');

/**
 * Which Task an undo takes back, and which paths: the last Task of the session that is neither an undo
 * nor undone (so a second undo takes back the one before), or the named Task. Refused when the Task's
 * files changed since it ended (by a later Task, or by hand in a shared root): undoing it would throw
 * those changes away, so the refusal names the files and the later Tasks that touched them.
 */
export async function planUndo(
  repo: GitRepository,
  timeline: TaskCheckpoints[],
  undoTask: { id: string; sessionId: string },
  request: UndoTarget,
  currentCommit: string,
): Promise<UndoPlan> {
  const ours = timeline.filter((task) => task.sessionId === undoTask.sessionId && task.taskId !== undoTask.id);
  const undone = new Set(ours.filter((task) => task.after && task.undoOf).map((task) => task.undoOf!));
  let target: TaskCheckpoints | undefined;
  if (request.kind === 'last') {
    target = ours.filter((task) => task.before && task.after && !task.undoOf && !undone.has(task.taskId)).at(-1);
    if (!target) throw new AgentFailure('Nothing to undo: no earlier Task of this session changed the workspace with a recorded history, or all were undone.');
  } else {
    target = ours.find((task) => task.taskId === request.taskId);
    if (!target) throw new AgentFailure(`Undo refused: task ${request.taskId} is not a Task of this session with a recorded history.`);
    if (!target.before || !target.after) throw new AgentFailure(`Undo refused: task ${request.taskId} has no complete history (its checkpoints were not both recorded).`);
    if (undone.has(target.taskId)) throw new AgentFailure(`Undo refused: task ${request.taskId} was already undone.`);
  }
  const paths = touchedPaths(await changeSet(repo, target.before!.commit, target.after!.commit));
  if (paths.length === 0) throw new AgentFailure(`Nothing to undo: task ${target.taskId} changed no file.`);
  const since = new Set(touchedPaths(await changeSet(repo, target.after!.commit, currentCommit)));
  const conflicts = paths.filter((path) => since.has(path));
  if (conflicts.length > 0) {
    const later: string[] = [];
    for (const task of ours.filter((entry) => entry.before && entry.after && entry.before.seq > target.after!.seq)) {
      const touched = new Set(touchedPaths(await changeSet(repo, task.before!.commit, task.after!.commit)));
      if (conflicts.some((path) => touched.has(path))) later.push(task.taskId);
    }
    const by = later.length > 0 ? ` by later task(s) ${later.join(', ')}` : ' since it ended';
    throw new AgentFailure(`Undo refused: ${list(conflicts)} changed${by} after task ${target.taskId}; undoing it would discard those changes.`);
  }
  return { target, paths };
}
