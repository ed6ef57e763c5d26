import { Module } from '@nestjs/common';
import { AgentModule } from '../agent/agent.module.js';
import { AuditModule } from '../audit/audit.module.js';
import { TaskQueueModule } from '../queue/task-queue.module.js';
import { SessionsModule } from '../sessions/sessions.module.js';
import { ConversationService } from './conversation.service.js';
import { TaskFeed } from './task-feed.js';

/** What the Chat API and A2A surfaces share: conversations over the TaskQueue and the progress feed. */
@Module({
  imports: [TaskQueueModule, SessionsModule, AgentModule, AuditModule],
  providers: [ConversationService, TaskFeed],
  exports: [ConversationService, TaskFeed, AuditModule],
})
export class ConversationModule {}
