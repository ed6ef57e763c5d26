import { Module } from '@nestjs/common';
import { AuditModule } from '../audit/audit.module.js';
import { ConversationModule } from '../conversation/conversation.module.js';
import { TaskQueueModule } from '../queue/task-queue.module.js';
import { AgentRunTool } from './agent-run.tool.js';
import { AgentStatusTool } from './agent-status.tool.js';
import { ToolPipeline } from './tool-pipeline.js';

@Module({
  imports: [TaskQueueModule, AuditModule, ConversationModule],
  providers: [AgentRunTool, AgentStatusTool, ToolPipeline],
  exports: [AgentRunTool, AgentStatusTool, ToolPipeline],
})
export class ToolsModule {}
