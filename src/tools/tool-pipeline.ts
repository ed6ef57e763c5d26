import { Injectable, Logger } from '@nestjs/common';
import { AuditService, type AuditDraft } from '../audit/audit.service.js';
import { isAgentError, type AgentErrorCode } from '../common/agent-error.js';
import type { Caller } from '../identity/caller.js';

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
  queue_full: 'Too many queued tasks',
  quota_exceeded: 'Quota exceeded',
  internal: 'Internal error',
};

const toolError = (text: string): ToolErrorResult => ({ content: [{ type: 'text', text }], isError: true });

/**
 * Every tool call, on every transport, goes through here. The pipeline drafts the call's audit event
 * (action and arguments); the handler validates, acts, and commits the draft as its `ok` event
 * together with what it did (agent_run in the Task's own unit of work). When the handler fails, the
 * pipeline audits the refusal or failure and turns domain errors into Tool errors. An audit write that
 * fails makes the call fail.
 */
@Injectable()
export class ToolPipeline {
  private readonly logger = new Logger(ToolPipeline.name);

  constructor(private readonly audit: AuditService) {}

  async execute<R>(tool: string, caller: Caller, args: unknown, handler: (accepted: AuditDraft) => Promise<R>): Promise<R | ToolErrorResult> {
    const call: AuditDraft = { action: `tools/call ${tool}`, detail: { arguments: args } };
    try {
      return await handler(call);
    } catch (error) {
      const known = isAgentError(error);
      if (!known) this.logger.error(`${tool} failed: ${(error as Error).stack ?? String(error)}`);
      const message = known ? error.message : 'the request could not be completed; see the service log.';
      await this.audit.record({
        ...call,
        caller,
        outcome: known && error.code !== 'internal' ? 'rejected' : 'error',
        detail: { ...call.detail, reason: known ? error.message : String((error as Error).message ?? error) },
      });
      return toolError(`${TOOL_ERROR_PREFIX[known ? error.code : 'internal']}: ${message}`);
    }
  }
}
