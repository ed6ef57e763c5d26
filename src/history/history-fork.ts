import { Injectable } from '@nestjs/common';
import { AgentError } from '../common/agent-error.js';
import { WorkspaceService } from '../workspace/workspace.service.js';
import { HistoryStores } from './history-stores.js';
import { timelineOf } from './history-timeline.js';
import { restoreCheckpoint } from './workspace-restore.js';

/** A fork's workspace: the source session's workspace as it was at the end of one of its Tasks. */
@Injectable()
export class HistoryFork {
  constructor(
    private readonly stores: HistoryStores,
    private readonly workspace: WorkspaceService,
  ) {}

  async materialize(sourceSessionId: string, taskId: string, targetSessionId: string): Promise<{ notRestorable: string[] }> {
    if (this.stores.shared) throw new AgentError('invalid_input', 'fork_from: forking needs workspace.isolation: session (every session shares one workspace here).');
    const repo = this.stores.store(sourceSessionId).repo;
    const task = (await timelineOf(repo)).find((entry) => entry.taskId === taskId && entry.sessionId === sourceSessionId);
    if (!task?.after) throw new AgentError('invalid_input', `fork_from: task ${taskId} has no recorded end checkpoint to fork from.`);
    const root = (await this.workspace.forTask(targetSessionId)).root;
    const outcome = await restoreCheckpoint(repo, task.after.commit, root, 'all');
    return { notRestorable: outcome.notRestorable };
  }
}
