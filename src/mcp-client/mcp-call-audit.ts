import { Injectable } from '@nestjs/common';
import type { ToolCaller } from '../agent/core/tool-source.js';
import { AuditService } from '../audit/audit.service.js';
import { redact } from '../audit/redaction.js';
import { cutText } from '../common/cut-text.js';
import { AppConfig } from '../config/app-config.js';
import { mcpServerSecrets } from '../config/agent-config.js';

export interface McpCallRecord {
  caller: ToolCaller;
  taskId: string;
  sessionId: string;
  server: string;
  tool: string;
  args: Record<string, unknown>;
  outcome: 'ok' | 'error' | 'timeout' | 'cancelled' | 'denied';
  durationMs: number;
  error?: string;
}

export interface DeclinedForm {
  caller: ToolCaller;
  taskId: string;
  sessionId: string;
  server: string;
  tool: string;
  message: string;
  reason: string;
}

/** A declined form's message as the audit keeps it. */
const MAX_MESSAGE_CHARS = 2000;

/** Every call to another MCP server, as one audit event `mcp_tool.call` (arguments redacted and bounded). */
@Injectable()
export class McpCallAudit {
  private readonly secrets: string[];

  constructor(
    private readonly audit: AuditService,
    config: AppConfig,
  ) {
    this.secrets = mcpServerSecrets(config.agent.mcpServers).filter((secret) => secret.length > 0);
  }

  /** The arguments as the trace shows them: redacted and bounded like the audit's copy. */
  boundedArguments(args: Record<string, unknown>): unknown {
    return redact(args, this.secrets);
  }

  async record(record: McpCallRecord): Promise<void> {
    await this.audit.record({
      caller: actor(record.caller),
      action: 'mcp_tool.call',
      outcome: record.outcome === 'ok' ? 'ok' : record.outcome === 'denied' ? 'rejected' : 'error',
      taskId: record.taskId,
      sessionId: record.sessionId,
      detail: {
        server: record.server,
        tool: record.tool,
        arguments: this.boundedArguments(record.args),
        result: record.outcome,
        durationMs: record.durationMs,
        ...(record.error ? { error: record.error } : {}),
      },
    });
  }

  /** A server's form that was not put to the person (`elicitation.declined`): the server was told `decline`. */
  async recordDeclinedForm(record: DeclinedForm): Promise<void> {
    await this.audit.record({
      caller: actor(record.caller),
      action: 'elicitation.declined',
      outcome: 'rejected',
      taskId: record.taskId,
      sessionId: record.sessionId,
      detail: { server: record.server, mcp_tool: record.tool, message: cutText(record.message, MAX_MESSAGE_CHARS, { mark: 'cut' }), in_place: false, reason: record.reason },
    });
  }
}

/** The worker acts for the Task's owner; the call is the service's, not a request of theirs. */
const actor = (caller: ToolCaller) => ({ user: caller.user, groups: caller.groups, admin: false, transport: 'system' as const, address: null, client: null });
