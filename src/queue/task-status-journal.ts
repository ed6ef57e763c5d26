import { Injectable, Logger } from '@nestjs/common';
import type { TaskProgress } from '../agent/agent-runner.js';
import { AuditService } from '../audit/audit.service.js';
import { Clock, SYSTEM_CLOCK } from '../common/clock.js';
import { SYSTEM_CALLER } from '../identity/caller.js';
import type { TaskStatus } from './task-status.js';
import type { TaskEntity } from './task.entity.js';
import { WORKER_LOG_CONTEXT } from './worker-log.js';

/**
 * What the worker tells the audit log and the service log about a Task's status changes: a
 * `task.status` event for each, and a line when a run starts and when it ends.
 */
@Injectable()
export class TaskStatusJournal {
  private readonly logger = new Logger(WORKER_LOG_CONTEXT);

  constructor(
    private readonly audit: AuditService,
    private readonly clock: Clock = SYSTEM_CLOCK,
  ) {}

  /** Audits the change and keeps `task.status` (the in-memory entity) in step with it. */
  async record(task: TaskEntity, status: TaskStatus, reason?: string): Promise<void> {
    task.status = status;
    await this.audit.record({
      caller: SYSTEM_CALLER,
      action: 'task.status',
      outcome: status === 'failed' ? 'error' : 'ok',
      taskId: task.id,
      sessionId: task.sessionId,
      detail: { status, attempt: task.attempt, ...(reason && status !== 'completed' ? { reason } : {}) },
    });
  }

  started(task: TaskEntity): void {
    const queuedMs = Date.parse(task.startedAt ?? task.createdAt) - Date.parse(task.createdAt);
    this.logger.log(`task ${task.id} started: owner ${task.owner}, session ${task.sessionId}, queued ${seconds(queuedMs)}`);
  }

  /** A run's end, once its final write went through: audited, and one line with its duration and tokens. */
  async ended(task: TaskEntity, status: TaskStatus, result: string, fields: Omit<TaskProgress, 'status'>): Promise<void> {
    await this.record(task, status, result);
    const ranMs = this.clock.now() - Date.parse(task.startedAt ?? task.createdAt);
    const tokens = `${fields.inputTokens ?? task.inputTokens} in, ${fields.outputTokens ?? task.outputTokens} out`;
    const line = `task ${task.id} ${status} after ${seconds(ranMs)} (tokens ${tokens})${status === 'completed' ? '' : `: ${result.split('\n')[0].slice(0, 200)}`}`;
    if (status === 'failed') this.logger.warn(line);
    else this.logger.log(line);
  }
}

const seconds = (ms: number) => `${(Math.max(0, ms) / 1000).toFixed(1)} s`;
