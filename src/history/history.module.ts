import { Module } from '@nestjs/common';
import { AgentModule } from '../agent/agent.module.js';
import { SessionsModule } from '../sessions/sessions.module.js';
import { WorkspaceModule } from '../workspace/workspace.module.js';
import { HistoryService } from './history.service.js';

/** Workspace history: checkpoints around each Task, diffs, undo, the workspace of a fork. */
@Module({
  imports: [WorkspaceModule, AgentModule, SessionsModule],
  providers: [HistoryService],
  exports: [HistoryService],
})
export class HistoryModule {}
