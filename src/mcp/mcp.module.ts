import { Module } from '@nestjs/common';
import { ApprovalsModule } from '../approvals/approvals.module.js';
import { AuditModule } from '../audit/audit.module.js';
import { HistoryModule } from '../history/history.module.js';
import { IdentityModule } from '../identity/identity.module.js';
import { TaskQueueModule } from '../queue/task-queue.module.js';
import { ToolsModule } from '../tools/tools.module.js';
import { AgentMcpServers } from './agent-mcp-servers.js';
import { SessionFilesModule } from '../session-files/session-files.module.js';
import { McpResources } from './resources.js';
import { TasksExtension } from './tasks-extension.js';
import { SubscriptionsListen } from './subscriptions-listen.js';
import { SessionsModule } from '../sessions/sessions.module.js';
import { SkillsModule } from '../skills/skills.module.js';
import { McpSkills } from './mcp-skills.js';

/** Everything both transports share; the HTTP controller is added by the HTTP app module only. */
@Module({
  imports: [ToolsModule, TaskQueueModule, AuditModule, IdentityModule, SessionFilesModule, ApprovalsModule, HistoryModule, SessionsModule, SkillsModule],
  providers: [AgentMcpServers, TasksExtension, McpResources, McpSkills, SubscriptionsListen],
  exports: [AgentMcpServers, SubscriptionsListen, IdentityModule, AuditModule],
})
export class McpModule {}
