import { Injectable } from '@nestjs/common';
import { PlainSql } from '../database/plain-sql.js';
import { TaskStepEntity, type StepKind } from './task-step.entity.js';

export interface StepRecord {
  taskId: string;
  subtask: string;
  kind: StepKind;
  name: string;
  outcome: 'ok' | 'error' | 'denied' | 'timeout' | 'cancelled';
  inputTokens?: number;
  outputTokens?: number;
  durationMs: number;
  startedAt: string;
  detail: Record<string, unknown>;
}

/** Stores the execution trace of Tasks (`task_steps`). */
@Injectable()
export class TraceRepository {
  constructor(private readonly sql: PlainSql) {}

  async append(step: StepRecord): Promise<void> {
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
    await this.sql.insert(TaskStepEntity, [row]);
  }

  forTask(taskId: string): Promise<TaskStepEntity[]> {
    return this.after(taskId, 0);
  }

  /** The steps written after `afterSeq`, oldest first: what a streaming surface has not sent yet. */
  after(taskId: string, afterSeq: number): Promise<TaskStepEntity[]> {
    return this.sql.entities(TaskStepEntity, 'SELECT * FROM task_steps WHERE task_id = ? AND seq > ? ORDER BY seq ASC', [taskId, afterSeq]);
  }
}
