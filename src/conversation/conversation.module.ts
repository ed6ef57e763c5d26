import { Module } from '@nestjs/common';
import { AgentModule } from '../agent/agent.module.js';
import { ApprovalsModule } from '../approvals/approvals.module.js';
import { AuditModule } from '../audit/audit.module.js';
import { HistoryModule } from '../history/history.module.js';
import { TaskQueueModule } from '../queue/task-queue.module.js';
import { SessionsModule } from '../sessions/sessions.module.js';
import { WorkspaceModule } from '../workspace/workspace.module.js';
import { InputFilesStager } from './input-files.stager.js';
import { ConversationIntake } from './conversation-intake.js';
import { ConversationService } from './conversation.service.js';
import { TaskFeed } from './task-feed.js';

/** What the Chat API and A2A surfaces share: conversations over the TaskQueue and the progress feed. */
@Module({
  imports: [ApprovalsModule, HistoryModule, TaskQueueModule, SessionsModule, AgentModule, AuditModule, WorkspaceModule],
  providers: [ConversationService, ConversationIntake, TaskFeed, InputFilesStager],
  exports: [ConversationService, ConversationIntake, TaskFeed, InputFilesStager, AuditModule],
})
export class ConversationModule {}
