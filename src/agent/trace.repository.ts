import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, MoreThan } from 'typeorm';
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

/** Stores the execution trace of Tasks. */
@Injectable()
export class TraceRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  async append(step: StepRecord): Promise<void> {
    await this.dataSource.getRepository(TaskStepEntity).insert({
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
    });
  }

  forTask(taskId: string): Promise<TaskStepEntity[]> {
    return this.dataSource.getRepository(TaskStepEntity).find({ where: { taskId }, order: { seq: 'ASC' } });
  }

  /** The steps written after `afterSeq`, oldest first: what a streaming surface has not sent yet. */
  after(taskId: string, afterSeq: number): Promise<TaskStepEntity[]> {
    return this.dataSource.getRepository(TaskStepEntity).find({ where: { taskId, seq: MoreThan(afterSeq) }, order: { seq: 'ASC' } });
  }
}
