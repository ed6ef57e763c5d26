import { Injectable } from '@nestjs/common';
import type { Caller } from '../identity/caller.js';
import { TaskQueueService } from '../queue/task-queue.service.js';
import { validateAgentStatus } from './argument-validation.js';
import type { TaskView } from './status-text.js';
import { mapTaskView } from './task-view.mapper.js';

/** agent_status: the caller's Task, or null when it is unknown, another user's, or in another session. */
@Injectable()
export class AgentStatusTool {
  constructor(private readonly queue: TaskQueueService) {}

  async call(caller: Caller, args: unknown): Promise<{ taskId: string; view: TaskView | null }> {
    const input = validateAgentStatus(args);
    const task = await this.queue.findOwned(caller, input.taskId);
    const visible = task && (input.sessionId === null || task.sessionId === input.sessionId);
    return { taskId: input.taskId, view: visible ? mapTaskView(task) : null };
  }
}
