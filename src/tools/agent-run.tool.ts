import { Injectable } from '@nestjs/common';
import { AppConfig } from '../config/app-config.js';
import type { Caller } from '../identity/caller.js';
import type { CallerTraceContext } from '../telemetry/trace-context.js';
import type { AuditDraft } from '../audit/audit.service.js';
import { TaskQueueService } from '../queue/task-queue.service.js';
import { agentRunLimits, validateAgentRun } from './argument-validation.js';
import type { TaskView } from './status-text.js';
import { mapTaskView } from './task-view.mapper.js';

/** agent_run: validate, then queue the Task durably (its accepting audit event commits with it). */
@Injectable()
export class AgentRunTool {
  constructor(
    private readonly queue: TaskQueueService,
    private readonly config: AppConfig,
  ) {}

  /** `answersInPlace`: the request declared the Tasks extension (its client can answer approvals while the Task waits). */
  async call(caller: Caller, args: unknown, accepted: AuditDraft, answersInPlace: boolean, trace?: CallerTraceContext): Promise<TaskView> {
    const input = validateAgentRun(args, agentRunLimits(this.config));
    return mapTaskView(await this.queue.enqueue(caller, { ...input, answersInPlace, trace }, accepted));
  }
}
