import { Injectable } from '@nestjs/common';
import { PlainSql, sqlStep } from '../database/plain-sql.js';
import type { FileChangeKind } from './task-file-change.entity.js';
import { TaskStepEntity, TOOL_STEP_KINDS, type StepKind } from './task-step.entity.js';

export interface StepRecord {
  taskId: string;
  subtask: string;
  kind: StepKind;
  name: string;
  /** `dropped`: corrections kept for a wait that ended with no run to read them (a `steer` step). */
  outcome: 'ok' | 'error' | 'denied' | 'timeout' | 'cancelled' | 'dropped';
  inputTokens?: number;
  outputTokens?: number;
  durationMs: number;
  startedAt: string;
  detail: Record<string, unknown>;
}

/** A file as one Task changed it (task_file_changes, folded per path). */
export interface TaskFile {
  path: string;
  /** What the Task did to it first. */
  change: FileChangeKind;
  /** Its size after the Task's last change of it; null when that was a restore. */
  bytes: number | null;
}

/**
 * The file change a step records, or null: an `ok` file_op step whose detail names a path (a file
 * tool's write or edit, or an undo's restore). The migration that created task_file_changes backfilled
 * it from the stored steps by the same rule.
 */
export function fileChangeOf(step: StepRecord): { path: string; kind: FileChangeKind; bytes: number | null } | null {
  const { path, undoOf, created, bytes } = step.detail;
  if (step.kind !== 'file_op' || step.outcome !== 'ok' || typeof path !== 'string') return null;
  const kind = undoOf !== undefined ? 'restored' : created === true ? 'created' : 'modified';
  return { path, kind, bytes: typeof bytes === 'number' && Number.isInteger(bytes) ? bytes : null };
}

/** One file a Task created or changed: its session, path and latest change. */
export interface ChangedFile {
  sessionId: string;
  path: string;
  /** The change that last touched it (task_file_changes.seq): the keyset of the newest-first order. */
  seq: number;
}

const FILES_OF_SLICE = 500;

/** Whose a step's Task is: its session and owner, as the queue gave them to the run (the tasks table is the queue's). */
export interface TraceScope {
  sessionId: string;
  owner: string;
}

/**
 * Stores the execution trace of Tasks (`task_steps`) and the file changes its steps record
 * (`task_file_changes`), and reads them: a Task's steps and files, and the deliverables of a user or a session.
 */
@Injectable()
export class TraceRepository {
  constructor(private readonly sql: PlainSql) {}

  /**
   * One step of a Task of `scope`; a step that changed a file also becomes its task_file_changes row, in the
   * same transaction, with the Task's session and owner, so that a session's or a user's changes are listed without a join.
   */
  async append(step: StepRecord, scope: TraceScope): Promise<void> {
    const row = new TaskStepEntity();
    Object.assign(row, {
      taskId: step.taskId,
      subtask: step.subtask,
      kind: step.kind,
      name: step.name.slice(0, 200),
      outcome: step.outcome,
      inputTokens: step.inputTokens ?? 0,
      outputTokens: step.outputTokens ?? 0,
      durationMs: step.durationMs,
      startedAt: step.startedAt,
      // No NUL in the stored JSON (a model may write one into a file): PostgreSQL's JSON functions refuse it.
      detail: JSON.stringify(step.detail, (_key, value: unknown) => (typeof value === 'string' ? value.replaceAll('\0', '\uFFFD') : value)),
    } satisfies Omit<TaskStepEntity, 'seq'>);
    const change = fileChangeOf(step);
    if (!change) return this.sql.insert(TaskStepEntity, [row]);
    await this.sql.transaction(function* () {
      yield sqlStep.insert(TaskStepEntity, [row]);
      yield sqlStep.run('INSERT INTO task_file_changes (task_id, session_id, owner, path, kind, bytes, changed_at) VALUES (?, ?, ?, ?, ?, ?, ?)', [
        step.taskId,
        scope.sessionId,
        scope.owner,
        change.path,
        change.kind,
        change.bytes,
        step.startedAt,
      ]);
    });
  }

  /** How many model calls and tool calls (TOOL_STEP_KINDS) a Task's trace holds: what usage adds to its owner's day when it ends. */
  async callCounts(taskId: string): Promise<{ modelCalls: number; toolCalls: number }> {
    const [row] = await this.sql.all<{ model_calls: unknown; tool_calls: unknown }>(
      `SELECT COALESCE(SUM(CASE WHEN kind = 'model_call' THEN 1 ELSE 0 END), 0) AS model_calls,
         COALESCE(SUM(CASE WHEN kind IN (${TOOL_STEP_KINDS.map(() => '?').join(', ')}) THEN 1 ELSE 0 END), 0) AS tool_calls
       FROM task_steps WHERE task_id = ?`,
      [...TOOL_STEP_KINDS, taskId],
    );
    return { modelCalls: Number(row?.model_calls ?? 0), toolCalls: Number(row?.tool_calls ?? 0) };
  }

  forTask(taskId: string): Promise<TaskStepEntity[]> {
    return this.after(taskId, 0);
  }

  /** The steps written after `afterSeq`, oldest first: what a streaming surface has not sent yet. */
  after(taskId: string, afterSeq: number): Promise<TaskStepEntity[]> {
    return this.sql.entities(TaskStepEntity, 'SELECT * FROM task_steps WHERE task_id = ? AND seq > ? ORDER BY seq ASC', [taskId, afterSeq]);
  }

  /**
   * The files each Task created, changed or restored, each once, in the order the Task first changed
   * them: with what it did first (a file it created stays `created` after later edits) and the size
   * its last change left (null after a restore).
   */
  async filesOf(taskIds: readonly string[]): Promise<Map<string, TaskFile[]>> {
    const files = new Map(taskIds.map((id) => [id, new Map<string, TaskFile>()]));
    const ids = [...files.keys()];
    // A page of Tasks is one query; a longer list goes in slices, well within either database's parameter limit.
    for (let start = 0; start < ids.length; start += FILES_OF_SLICE) {
      const slice = ids.slice(start, start + FILES_OF_SLICE);
      const rows = await this.sql.all<{ task_id: string; path: string; kind: FileChangeKind; bytes: number | string | null }>(
        `SELECT task_id, path, kind, bytes FROM task_file_changes WHERE task_id IN (${slice.map(() => '?').join(', ')}) ORDER BY seq`,
        slice,
      );
      for (const row of rows) {
        const ofTask = files.get(row.task_id)!;
        ofTask.set(row.path, { path: row.path, change: ofTask.get(row.path)?.change ?? row.kind, bytes: row.bytes === null ? null : Number(row.bytes) });
      }
    }
    return new Map([...files].map(([id, ofTask]) => [id, [...ofTask.values()]]));
  }

  /**
   * The files the Tasks of a user or a session created or changed (their deliverables, SessionFilesService):
   * newest change first, one row per (session, path), only files whose newest change is older than
   * `before` (a keyset). It walks the scope's changes down from `before` on (owner, seq) or
   * (session_id, seq) and keeps a change only when (session_id, path, seq) holds no later one, so a page
   * costs its own rows and the superseded changes between them, never the whole history. A session's
   * Tasks are all its owner's (a Task joins only a session its caller owns), so a later change of the
   * same session and path is the same owner's.
   */
  async changedFiles(scope: { owner: string } | { sessionId: string }, limit: number, before: number | null): Promise<ChangedFile[]> {
    const [condition, value] = 'owner' in scope ? ['change.owner = ?', scope.owner] : ['change.session_id = ?', scope.sessionId];
    const rows = await this.sql.all<{ session_id: string; path: string; seq: number | string }>(
      `SELECT change.session_id AS session_id, change.path AS path, change.seq AS seq FROM task_file_changes change ` +
        `WHERE ${condition}${before === null ? '' : ' AND change.seq < ?'} ` +
        'AND NOT EXISTS (SELECT 1 FROM task_file_changes later WHERE later.session_id = change.session_id AND later.path = change.path AND later.seq > change.seq) ' +
        'ORDER BY change.seq DESC LIMIT ?',
      [value, ...(before === null ? [] : [before]), limit],
    );
    return rows.map((row) => ({ sessionId: row.session_id, path: row.path, seq: Number(row.seq) }));
  }
}
