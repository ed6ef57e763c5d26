import { Injectable } from '@nestjs/common';
import { TraceRepository, type TaskFile } from '../agent/trace.repository.js';
import type { TaskStatus } from './task-status.js';
import type { TaskEntity } from './task.entity.js';

/**
 * One view of a Task for every edge (issue 21): MCP's agent_status and tasks/get, the admin API, the
 * Chat API and A2A each map this to their own wire shape, and none reads TaskEntity or works out which
 * files a Task changed. Built here, from the tasks row (`taskReadModel`) and, for the views that show
 * deliverables, the table of file changes (`TaskReadModels`). TaskQueueService returns
 * nothing else.
 */
export interface TaskReadModel {
  id: string;
  sessionId: string;
  owner: string;
  request: string;
  status: TaskStatus;
  /** `agent`: tools and the workspace; `direct`: one model call. */
  mode: 'agent' | 'direct';
  /** The model tier (`default` is `ollama.model`). */
  tier: string;
  /** The surface that accepted it (`mcp-http`, `stdio`, `chat`, `a2a`); null for Tasks older than that column. */
  surface: string | null;
  /** Issue 38: the schedule or trigger that started it (`schedule/<id>`, `trigger/<id>`); null when a person did. */
  startedBy: string | null;
  /** How many times a runner claimed it (a re-queued Task runs again). */
  attempt: number;
  progress: { completedSubtasks: number; totalSubtasks: number; currentTask: string; criticalPathTokens: number };
  usage: { input: number; output: number; total: number };
  /** Issue 35: the limit that ended its tool work (it completed with a summary), or null. */
  stoppedBy: string | null;
  /** Issue 35: corrections the person sent it while it ran (steering). */
  steerCount: number;
  /** What the row holds: the final answer of a completed Task, or why a failed or cancelled one ended; null before the end. */
  result: string | null;
  /** Why a failed or cancelled Task ended (its `result`, '' when the row holds none); null for any other status. */
  error: string | null;
  createdAt: string;
  updatedAt: string;
  startedAt: string | null;
  finishedAt: string | null;
  /** From its start to its end; null until it has both. */
  durationMs: number | null;
  /** The id of the Task's trace (issue 39): its own, or its caller's it continues; null when it has none. */
  traceId: string | null;
}

/**
 * A Task as a listing returns it: with `seq`, the order Tasks were accepted in (listings go newest first
 * by it, and their cursors carry it). A Task just accepted has none yet: the database numbers it on insert.
 */
export interface ListedTask extends TaskReadModel {
  seq: number;
}

/**
 * A Task with the workspace files it created, changed or restored (its deliverables), each once, in the
 * order it first changed them, with what it did first and the size its last change left.
 */
export type WithFiles<T extends TaskReadModel = TaskReadModel> = T & { files: TaskFile[] };

export function taskReadModel(task: TaskEntity): TaskReadModel {
  const { inputTokens: input, outputTokens: output } = task;
  return {
    id: task.id,
    sessionId: task.sessionId,
    owner: task.owner,
    request: task.request,
    status: task.status,
    mode: task.mode,
    tier: task.tier,
    surface: task.surface,
    startedBy: task.surface === 'schedule' || task.surface === 'trigger' ? task.client : null,
    attempt: task.attempt,
    progress: { completedSubtasks: task.completedSubtasks, totalSubtasks: task.totalSubtasks, currentTask: task.currentTask, criticalPathTokens: task.criticalPathTokens },
    usage: { input, output, total: input + output },
    stoppedBy: task.stoppedBy ?? null,
    steerCount: Number(task.steerCount ?? 0),
    result: task.result,
    error: task.status === 'failed' || task.status === 'cancelled' ? (task.result ?? '') : null,
    createdAt: task.createdAt,
    updatedAt: task.updatedAt,
    startedAt: task.startedAt,
    finishedAt: task.finishedAt,
    durationMs: task.startedAt && task.finishedAt ? Date.parse(task.finishedAt) - Date.parse(task.startedAt) : null,
    traceId: task.traceId ?? null,
  };
}

export const listedTask = (task: TaskEntity): ListedTask => ({ ...taskReadModel(task), seq: Number(task.seq) });

/** Adds the files each Task changed (task_file_changes, one query for all of them) to their read models. */
@Injectable()
export class TaskReadModels {
  constructor(private readonly trace: TraceRepository) {}

  async allWithFiles<T extends TaskReadModel>(tasks: readonly T[]): Promise<WithFiles<T>[]> {
    const files = await this.trace.filesOf(tasks.map((task) => task.id));
    return tasks.map((task) => ({ ...task, files: files.get(task.id) ?? [] }));
  }

  async withFiles<T extends TaskReadModel>(task: T): Promise<WithFiles<T>> {
    const [withFiles] = await this.allWithFiles([task]);
    return withFiles;
  }
}
