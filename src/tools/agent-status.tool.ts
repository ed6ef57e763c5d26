import { Injectable } from '@nestjs/common';
import { AuditService, type AuditDraft } from '../audit/audit.service.js';
import type { Caller } from '../identity/caller.js';
import { TaskQueueService } from '../queue/task-queue.service.js';
import { validateAgentStatus } from './argument-validation.js';
import type { TaskView } from './status-text.js';
import { mapTaskView } from './task-view.mapper.js';

/**
 * agent_status: the caller's Task, or null when it is unknown, another user's, or in another session;
 * a queued Task's `current_task` is its queue position (`queue position 3`, 1 runs next).
 * The lookup is audited (`accepted`, with the Task's ids when it was visible) before it is answered.
 */
@Injectable()
export class AgentStatusTool {
  constructor(
    private readonly queue: TaskQueueService,
    private readonly audit: AuditService,
  ) {}

  async call(caller: Caller, args: unknown, accepted: AuditDraft): Promise<{ taskId: string; view: TaskView | null }> {
    const input = validateAgentStatus(args);
    const task = await this.queue.findOwned(caller, input.taskId);
    const view = task && (input.sessionId === null || task.sessionId === input.sessionId) ? mapTaskView(task) : null;
    // A queued Task has no step yet: its place in the fair order is what its owner wants to know.
    if (view && task!.status === 'queued') {
      const position = (await this.queue.queuePositions([task!])).get(task!.id);
      if (position !== undefined) view.currentTask = `queue position ${position}`;
    }
    await this.audit.record({ ...accepted, caller, outcome: 'ok', taskId: view ? input.taskId : null, sessionId: view?.sessionId ?? null });
    return { taskId: input.taskId, view };
  }
}
