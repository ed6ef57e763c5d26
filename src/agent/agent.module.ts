import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { ApprovalsModule } from '../approvals/approvals.module.js';
import { OllamaModule } from '../ollama/ollama.module.js';
import { WorkspaceModule } from '../workspace/workspace.module.js';
import { AgentRunner } from './agent-runner.js';
import { PlanningAgent } from './planning-agent.js';
import { TaskStepEntity } from './task-step.entity.js';
import { TraceRepository } from './trace.repository.js';
import { WorkspaceToolbox } from './workspace-toolbox.js';

@Module({
  imports: [TypeOrmModule.forFeature([TaskStepEntity]), OllamaModule, WorkspaceModule, ApprovalsModule],
  providers: [TraceRepository, WorkspaceToolbox, { provide: AgentRunner, useClass: PlanningAgent }],
  exports: [AgentRunner, TraceRepository],
})
export class AgentModule {}
