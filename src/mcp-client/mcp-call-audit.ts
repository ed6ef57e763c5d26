import { Injectable } from '@nestjs/common';
import type { ToolCaller } from '../agent/core/tool-source.js';
import { AuditService } from '../audit/audit.service.js';
import { redact } from '../audit/redaction.js';
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
      // The worker acts for the Task's owner; the call is the service's, not a request of theirs.
      caller: { user: record.caller.user, groups: record.caller.groups, admin: false, transport: 'system', address: null, client: null },
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
}
