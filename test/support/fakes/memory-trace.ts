import type { StepRecord, TraceRepository } from '../../../src/agent/trace.repository.js';
import { TaskStepEntity } from '../../../src/agent/task-step.entity.js';

/** The `task_steps` table in memory: the steps Tasks traced, numbered as the table numbers them. */
export class MemoryTrace implements Pick<TraceRepository, 'append' | 'after'> {
  readonly steps: StepRecord[] = [];

  async append(step: StepRecord): Promise<void> {
    this.steps.push(step);
  }

  async after(taskId: string, afterSeq: number): Promise<TaskStepEntity[]> {
    return this.steps
      .map((step, index) => Object.assign(new TaskStepEntity(), step, { seq: index + 1, detail: JSON.stringify(step.detail) }))
      .filter((row) => row.taskId === taskId && row.seq > afterSeq);
  }
}
