import { Injectable, Logger, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import type { AgentOutcome } from '../agent/agent-runner.js';
import { AgentError } from '../common/agent-error.js';
import { AppConfig } from '../config/app-config.js';
import { SessionsService } from '../sessions/sessions.service.js';
import type { FileChange } from './change-set.js';
import { CheckpointRecorder, type HistoryTask, type TaskHistory } from './checkpoint-recorder.js';
import { HistoryDiffs } from './history-diffs.js';
import { HistoryFork } from './history-fork.js';
import { HistoryRetention } from './history-retention.js';
import { HistoryStores } from './history-stores.js';
import type { TaskCheckpoints } from './history-timeline.js';
import { HistoryUndo } from './history-undo.js';

export type { HistoryTask, TaskHistory } from './checkpoint-recorder.js';

/**
 * Workspace history, the module's one door: a checkpoint before and after every Task (CheckpointRecorder, kept
 * within `history.max_bytes` by HistoryBound), each Task's change set and diff (HistoryDiffs), undo as a Task of its
 * own (HistoryUndo), the workspace of a fork (HistoryFork), retention (HistoryRetention). One bare git repository per
 * session workspace (HistoryStores), under `history.dir`, outside every workspace. The callers (the queue, MCP
 * resources, the admin) see this class only; each job is done by its own provider.
 */
@Injectable()
export class HistoryService implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger('History');

  constructor(
    private readonly config: AppConfig,
    private readonly stores: HistoryStores,
    private readonly sessions: SessionsService,
    private readonly checkpoints: CheckpointRecorder,
    private readonly diffs: HistoryDiffs,
    private readonly undos: HistoryUndo,
    private readonly forks: HistoryFork,
    private readonly retention: HistoryRetention,
  ) {}

  async onModuleInit(): Promise<void> {
    if (!this.enabled) return;
    // Without git there is no history: said once at boot, and every Task runs without checkpoints.
    const missing = await this.stores.probeGit();
    if (missing) {
      this.logger.warn(`workspace history is off: git could not be run (${missing.message}); install git or set history.enabled: false`);
      return;
    }
    this.retention.start(this.config.workspace.retentionDays);
  }

  onModuleDestroy(): void {
    this.retention.stop();
  }

  get enabled(): boolean {
    return this.stores.enabled;
  }

  get shared(): boolean {
    return this.stores.shared;
  }

  begin(task: HistoryTask): Promise<TaskHistory> {
    return this.checkpoints.begin(task);
  }

  finish(history: TaskHistory, result: string): Promise<string> {
    return this.checkpoints.finish(history, result);
  }

  isUndo(request: string): boolean {
    return this.undos.isUndo(request);
  }

  undo(history: TaskHistory): Promise<AgentOutcome> {
    return this.undos.undo(history);
  }

  checkUndo(sessionId: string, taskId: string | null): Promise<{ target: string; paths: string[] }> {
    return this.undos.checkUndo(sessionId, taskId);
  }

  diff(sessionId: string, taskId: string): Promise<{ text: string; changes: FileChange[] }> {
    return this.diffs.diff(sessionId, taskId);
  }

  diffOwned(user: string, sessionId: string, taskId: string): Promise<string> {
    return this.diffs.diffOwned(user, sessionId, taskId);
  }

  timeline(sessionId: string): Promise<TaskCheckpoints[]> {
    return this.diffs.timeline(sessionId);
  }

  materializeFork(sourceSessionId: string, taskId: string, targetSessionId: string): Promise<{ notRestorable: string[] }> {
    return this.forks.materialize(sourceSessionId, taskId, targetSessionId);
  }

  /** Undo and fork act on the caller's own sessions only (admins included): another's reads as missing. */
  async assertOwned(user: string, sessionId: string): Promise<void> {
    if (!(await this.sessions.findOwned(sessionId, user))) throw new AgentError('session_not_found', `session ${sessionId} does not exist.`);
  }

  /** Admin reads: any session, but one that exists. */
  async assertExists(sessionId: string): Promise<void> {
    if (!(await this.sessions.find(sessionId))) throw new AgentError('session_not_found', `session ${sessionId} does not exist.`);
  }
}
