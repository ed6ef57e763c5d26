import { Module } from '@nestjs/common';
import { AgentModule } from '../agent/agent.module.js';
import { AuditModule } from '../audit/audit.module.js';
import { SessionsModule } from '../sessions/sessions.module.js';
import { TaskQueueService } from './task-queue.service.js';
import { TaskConversation } from './task-conversation.js';
import { TaskWorker } from './task-worker.js';
import { TasksRepository } from './tasks.repository.js';

@Module({
  imports: [AgentModule, AuditModule, SessionsModule],
  providers: [TasksRepository, TaskConversation, TaskWorker, TaskQueueService],
  exports: [TaskQueueService],
})
export class TaskQueueModule {}
