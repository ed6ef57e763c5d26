import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { ApprovalsModule } from '../approvals/approvals.module.js';
import { OllamaModule } from '../ollama/ollama.module.js';
import { WorkspaceModule } from '../workspace/workspace.module.js';
import { AgentRunner } from './agent-runner.js';
import { AgentService } from './agent.service.js';
import { TaskFileChangeEntity } from './task-file-change.entity.js';
import { TaskStepEntity } from './task-step.entity.js';
import { RunEventHub } from './run-event-hub.js';
import { TraceRepository } from './trace.repository.js';
import { WorkspaceToolbox } from './workspace-toolbox.js';
import { RunLimits } from './core/run-limits.js';
import { RunWaitEntity } from './run-wait.entity.js';
import { SteerInboxRepository } from './steer-inbox.repository.js';
import { PausedRuns } from './paused-runs.js';
import { RunWaitsRepository } from './run-waits.repository.js';

@Module({
  imports: [TypeOrmModule.forFeature([TaskStepEntity, TaskFileChangeEntity, RunWaitEntity]), OllamaModule, WorkspaceModule, ApprovalsModule],
  providers: [TraceRepository, WorkspaceToolbox, RunEventHub, RunLimits, SteerInboxRepository, RunWaitsRepository, PausedRuns, { provide: AgentRunner, useClass: AgentService }],
  exports: [AgentRunner, TraceRepository, RunEventHub, RunLimits, SteerInboxRepository],
})
export class AgentModule {}
