import { Injectable } from '@nestjs/common';
import { setTimeout as sleep } from 'node:timers/promises';
import type { TaskStepEntity } from '../agent/task-step.entity.js';
import { AppConfig } from '../config/app-config.js';
import type { TaskEntity } from '../queue/task.entity.js';
import { ConversationService, isTerminal } from './conversation.service.js';

/** One look at a followed Task: its row, and the trace steps written since the previous look. */
export interface TaskUpdate {
  task: TaskEntity;
  steps: TaskStepEntity[];
  /** The status or the current subtask changed since the previous look (always true on the first). */
  moved: boolean;
}

/**
 * Follows a Task through the database until it is terminal, for the streaming surfaces. The row and
 * the trace are the record whichever process or replica runs the Task, so this reads them every
 * `queue.progress_poll_ms` instead of listening to the local worker.
 */
@Injectable()
export class TaskFeed {
  private readonly intervalMs: number;

  constructor(
    private readonly conversations: ConversationService,
    config: AppConfig,
  ) {
    this.intervalMs = config.queue.progressPollMs;
  }

  /** Yields on every change, the last time with the terminal row; ends early when `signal` aborts. */
  async *follow(taskId: string, signal?: AbortSignal): AsyncGenerator<TaskUpdate> {
    let lastSeq = 0;
    let lastKey = '';
    while (!signal?.aborted) {
      const task = await this.conversations.read(taskId);
      if (!task) return;
      const steps = await this.conversations.stepsAfter(taskId, lastSeq);
      const key = `${task.status}|${task.currentTask}|${task.completedSubtasks}/${task.totalSubtasks}`;
      if (steps.length > 0 || key !== lastKey) yield { task, steps, moved: key !== lastKey };
      lastSeq = steps.at(-1)?.seq ?? lastSeq;
      lastKey = key;
      if (isTerminal(task.status)) return;
      await sleep(this.intervalMs, undefined, { signal }).catch(() => undefined);
    }
  }

  /** The Task once it is terminal (null when it disappears, or `signal` aborts first). */
  async untilTerminal(taskId: string, signal?: AbortSignal): Promise<TaskEntity | null> {
    let last: TaskEntity | null = null;
    for await (const update of this.follow(taskId, signal)) last = update.task;
    return last && isTerminal(last.status) ? last : null;
  }
}
