import { Injectable } from '@nestjs/common';
import { AgentError } from '../common/agent-error.js';
import { AppConfig } from '../config/app-config.js';
import { SessionsService } from '../sessions/sessions.service.js';
import { changeSet, type FileChange } from './change-set.js';
import type { CheckpointStore } from './checkpoint-store.js';
import { renderDiff } from './diff-text.js';
import { historyJournal } from './history-journal.js';
import { HistoryStores } from './history-stores.js';
import { timelineOf, type TaskCheckpoints } from './history-timeline.js';

/** What the history shows of a session: its Tasks in order, and each Task's change set and unified diff. */
@Injectable()
export class HistoryDiffs {
  constructor(
    private readonly stores: HistoryStores,
    private readonly sessions: SessionsService,
    private readonly config: AppConfig,
  ) {}

  /** The session's Tasks as the history recorded them, oldest first. */
  async timeline(sessionId: string): Promise<TaskCheckpoints[]> {
    return (await timelineOf(this.stores.store(sessionId).repo)).filter((task) => task.sessionId === sessionId);
  }

  /** A Task's change set and unified diff; a Task the history could not record says why instead. */
  async diff(sessionId: string, taskId: string): Promise<{ text: string; changes: FileChange[] }> {
    const store = this.stores.store(sessionId);
    // The session too: a shared root's repository holds every session's Tasks.
    const task = (await timelineOf(store.repo)).find((entry) => entry.taskId === taskId && entry.sessionId === sessionId);
    if (!task?.before || !task.after) return { text: await missingText(store, taskId, task), changes: [] };
    const changes = await changeSet(store.repo, task.before.commit, task.after.commit);
    const blobs = await store.repo.objects(changes.flatMap((change) => [change.before?.oid, change.after?.oid]).filter((oid): oid is string => !!oid));
    const scope = this.stores.shared ? `# workspace: the shared root (workspace.isolation: shared), as changed while task ${taskId} ran\n` : '';
    const notes = (await historyJournal.of(store, taskId)).map((entry) => `# ${entry.event}: ${entry.note}\n`).join('');
    const text = renderDiff(changes, blobs, {
      maxLines: this.config.history.diffMaxLinesPerFile,
      maxChars: this.config.mcp.resources.maxReadBytes,
      maxTotalChars: this.config.mcp.resources.maxReadBytes,
    });
    return { text: scope + notes + text, changes };
  }

  /**
   * The diff of a Task of one of `user`'s sessions. Another user's session, and a Task the session's
   * history never heard of (no checkpoint, no journal line), read as the same missing resource: an
   * answer must not tell which ids exist.
   */
  async diffOwned(user: string, sessionId: string, taskId: string): Promise<string> {
    const missing = () => new AgentError('resource_not_found', `no diff for task ${taskId}`);
    if (!(await this.sessions.findOwned(sessionId, user))) throw missing();
    if (!this.stores.enabled) throw new AgentError('resource_not_found', 'the workspace history is off (history.enabled: false)');
    if (!(await this.knows(sessionId, taskId))) throw missing();
    return (await this.diff(sessionId, taskId)).text;
  }

  /** Whether the session's history recorded anything of the Task: a checkpoint, or a journal line (a failure, a drop). */
  private async knows(sessionId: string, taskId: string): Promise<boolean> {
    const store = this.stores.store(sessionId);
    const recorded = (await timelineOf(store.repo)).some((entry) => entry.taskId === taskId && entry.sessionId === sessionId);
    return recorded || (await historyJournal.of(store, taskId)).length > 0;
  }
}

/** Why a Task has no diff, from the journal. */
async function missingText(store: CheckpointStore, taskId: string, task: TaskCheckpoints | undefined): Promise<string> {
  const reasons = (await historyJournal.of(store, taskId)).map((entry) => `# ${entry.event}: ${entry.note}`);
  const head = task ? `# the end checkpoint of task ${taskId} was not recorded` : `# no checkpoint was recorded for task ${taskId}`;
  return [head, ...reasons].join('\n') + '\n';
}
