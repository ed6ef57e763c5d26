import { Module } from '@nestjs/common';
import { AuditModule } from '../audit/audit.module.js';
import { OllamaModule } from '../ollama/ollama.module.js';
import { TelemetryModule } from '../telemetry/telemetry.module.js';
import { McpCallAudit } from './mcp-call-audit.js';
import { McpToolSources } from './mcp-tool-sources.js';

/** The service as an MCP client: other MCP servers' tools for the agent (`agent.mcp_servers`). */
@Module({
  imports: [AuditModule, OllamaModule, TelemetryModule],
  providers: [McpCallAudit, McpToolSources],
  exports: [McpToolSources],
})
export class McpClientModule {}
