import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AgentModule } from '../agent/agent.module.js';
import { AuditModule } from '../audit/audit.module.js';
import { HistoryModule } from '../history/history.module.js';
import { SessionsModule } from '../sessions/sessions.module.js';
import { AbandonedTaskRecovery } from './abandoned-task-recovery.js';
import { LeaseKeeper } from './lease-keeper.js';
import { RunnerIdentity } from './runner-identity.js';
import { TaskConversation } from './task-conversation.js';
import { SessionFork } from './session-fork.js';
import { TaskExecution } from './task-execution.js';
import { TaskImageEntity } from './task-image.entity.js';
import { TaskQueueService } from './task-queue.service.js';
import { TaskReadModels } from './task-read-model.js';
import { TaskStatusJournal } from './task-status-journal.js';
import { TaskEntity } from './task.entity.js';
import { TaskWorker } from './task-worker.js';
import { TasksRepository } from './tasks.repository.js';
import { TelemetryModule } from '../telemetry/telemetry.module.js';
import { UsageModule } from '../usage/usage.module.js';

@Module({
  imports: [TypeOrmModule.forFeature([TaskEntity, TaskImageEntity]), AgentModule, AuditModule, SessionsModule, HistoryModule, TelemetryModule, UsageModule],
  providers: [
    TasksRepository,
    RunnerIdentity,
    TaskStatusJournal,
    TaskConversation,
    LeaseKeeper,
    TaskExecution,
    AbandonedTaskRecovery,
    TaskWorker,
    TaskQueueService,
    SessionFork,
    TaskReadModels,
  ],
  exports: [TaskQueueService, SessionFork, TaskReadModels, HistoryModule, TelemetryModule, UsageModule],
})
export class TaskQueueModule {}
