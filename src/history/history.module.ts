import { Module } from '@nestjs/common';
import { AgentModule } from '../agent/agent.module.js';
import { SessionsModule } from '../sessions/sessions.module.js';
import { WorkspaceModule } from '../workspace/workspace.module.js';
import { CheckpointRecorder } from './checkpoint-recorder.js';
import { HistoryBound } from './history-bound.js';
import { HistoryTotalBound } from './history-total-bound.js';
import { HistoryDiffs } from './history-diffs.js';
import { HistoryFork } from './history-fork.js';
import { HistoryRetention } from './history-retention.js';
import { HistoryService } from './history.service.js';
import { HistoryStores } from './history-stores.js';
import { HistoryUndo } from './history-undo.js';

/** Workspace history: checkpoints around each Task, diffs, undo, the workspace of a fork. */
@Module({
  imports: [WorkspaceModule, AgentModule, SessionsModule],
  providers: [HistoryStores, HistoryBound, HistoryTotalBound, CheckpointRecorder, HistoryDiffs, HistoryUndo, HistoryFork, HistoryRetention, HistoryService],
  exports: [HistoryService],
})
export class HistoryModule {}
