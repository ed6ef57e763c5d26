import { Injectable, Logger } from '@nestjs/common';
import { AuditService } from '../audit/audit.service.js';
import { isAgentError, type AgentErrorCode } from '../common/agent-error.js';
import type { Caller } from '../identity/caller.js';
import type { AuditedCall } from '../queue/task-queue.service.js';

export interface ToolReply<R> {
  result: R;
  taskId?: string | null;
  sessionId?: string | null;
  /** True when the handler committed the audit event in its own transaction. */
  audited?: boolean;
}

export interface ToolErrorResult {
  content: { type: 'text'; text: string }[];
  isError: true;
}

/** How each domain error code reads as a Tool error (`isError: true`); exhaustive by construction. */
const TOOL_ERROR_PREFIX: Record<AgentErrorCode, string> = {
  invalid_input: 'Invalid arguments',
  session_not_found: 'Invalid arguments',
  resource_not_found: 'Invalid arguments',
  resource_too_large: 'Invalid arguments',
  files_expired: 'Invalid arguments',
  shutting_down: 'Unavailable',
  internal: 'Internal error',
};

export const toolError = (text: string): ToolErrorResult => ({ content: [{ type: 'text', text }], isError: true });

/**
 * Every tool call, on every transport, goes through here: the handler validates and acts, and the
 * pipeline audits the outcome (accepted, rejected or failed) and turns domain errors into Tool errors.
 * An audit write that fails makes the call fail.
 */
@Injectable()
export class ToolPipeline {
  private readonly logger = new Logger(ToolPipeline.name);

  constructor(private readonly audit: AuditService) {}

  async execute<R>(
    tool: string,
    caller: Caller,
    args: unknown,
    handler: (call: AuditedCall) => Promise<ToolReply<R>>,
  ): Promise<R | ToolErrorResult> {
    const call: AuditedCall = { action: `tools/call ${tool}`, detail: { arguments: args } };
    let reply: ToolReply<R>;
    try {
      reply = await handler(call);
    } catch (error) {
      const known = isAgentError(error);
      if (!known) this.logger.error(`${tool} failed: ${(error as Error).stack ?? String(error)}`);
      const message = known ? error.message : 'the request could not be completed; see the service log.';
      await this.audit.record({
        caller,
        action: call.action,
        outcome: known && error.code !== 'internal' ? 'rejected' : 'error',
        detail: { ...call.detail, reason: known ? error.message : String((error as Error).message ?? error) },
      });
      return toolError(`${TOOL_ERROR_PREFIX[known ? error.code : 'internal']}: ${message}`);
    }
    if (!reply.audited) {
      await this.audit.record({
        caller,
        action: call.action,
        outcome: 'ok',
        taskId: reply.taskId,
        sessionId: reply.sessionId,
        detail: call.detail,
      });
    }
    return reply.result;
  }
}
