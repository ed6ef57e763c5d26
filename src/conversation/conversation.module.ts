import { Module } from '@nestjs/common';
import { AgentModule } from '../agent/agent.module.js';
import { AuditModule } from '../audit/audit.module.js';
import { IdentityModule } from '../identity/identity.module.js';
import { TaskQueueModule } from '../queue/task-queue.module.js';
import { SessionsModule } from '../sessions/sessions.module.js';
import { ConversationService } from './conversation.service.js';
import { SurfaceIdentity } from './surface-identity.js';
import { TaskFeed } from './task-feed.js';

/** What the Chat API and A2A surfaces share: conversations over the TaskQueue, the progress feed, the caller's identity. */
@Module({
  imports: [TaskQueueModule, SessionsModule, AgentModule, AuditModule, IdentityModule],
  providers: [ConversationService, TaskFeed, SurfaceIdentity],
  exports: [ConversationService, TaskFeed, SurfaceIdentity, AuditModule],
})
export class ConversationModule {}
