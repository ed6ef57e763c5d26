import { Injectable } from '@nestjs/common';
import { AppConfig } from '../config/app-config.js';
import { ConversationIntake } from '../conversation/conversation-intake.js';
import type { Caller } from '../identity/caller.js';
import type { CallerTraceContext } from '../telemetry/trace-context.js';
import type { AuditDraft } from '../audit/audit.service.js';
import { agentRunLimits, validateAgentRun } from './argument-validation.js';
import type { TaskView } from './status-text.js';
import { mapTaskView } from './task-view.mapper.js';

/**
 * agent_run: validate, then queue the Task durably (its accepting audit event commits with it). With
 * `agent.steering.mcp` (issue 35), a text request with the `session_id` of a session whose Task is
 * running joins that Task as a correction instead (`steered`).
 */
@Injectable()
export class AgentRunTool {
  constructor(
    private readonly intake: ConversationIntake,
    private readonly config: AppConfig,
  ) {}

  /** `answersInPlace`: the request declared the Tasks extension (its client can answer approvals while the Task waits). */
  async call(caller: Caller, args: unknown, accepted: AuditDraft, answersInPlace: boolean, trace?: CallerTraceContext): Promise<{ view: TaskView; steered: boolean }> {
    const input = validateAgentRun(args, agentRunLimits(this.config));
    const steer = this.config.agent.steering.mcp && input.sessionId !== null && input.images.length === 0;
    const outcome = await this.intake.submit(
      caller,
      { request: { ...input, answersInPlace, trace }, surface: 'mcp', ...(steer ? { steer: { sessionId: input.sessionId! } } : {}) },
      accepted,
    );
    // The intake checked the session is the caller's: its running Task is too.
    if (outcome.kind === 'not_found') throw new Error('a session of the caller has no Task of another user');
    return { view: mapTaskView(outcome.task), steered: outcome.kind === 'steered' };
  }
}
