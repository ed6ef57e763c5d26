import { Module } from '@nestjs/common';
import { AuditModule } from '../audit/audit.module.js';
import { McpClientModule } from '../mcp-client/mcp-client.module.js';
import { AgentToolSources } from './agent-tool-sources.js';
import { SkillsService } from './skills.service.js';

/** Agent Skills (issue 40): the operator's folders and the MCP servers' skills, for the agent and the MCP surface. */
@Module({
  imports: [AuditModule, McpClientModule],
  providers: [SkillsService, AgentToolSources],
  exports: [SkillsService, AgentToolSources],
})
export class SkillsModule {}
