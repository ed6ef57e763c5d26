import { Injectable } from '@nestjs/common';
import { AgentFailure, type AgentOutcome } from '../agent/agent-runner.js';
import { TraceRepository } from '../agent/trace.repository.js';
import { AgentError } from '../common/agent-error.js';
import { Clock, nowIso, SYSTEM_CLOCK } from '../common/clock.js';
import { WorkspaceService } from '../workspace/workspace.service.js';
import type { TaskHistory } from './checkpoint-recorder.js';
import { HistoryStores } from './history-stores.js';
import { timelineOf } from './history-timeline.js';
import { planUndo } from './undo-plan.js';
import { undoRequestOf } from './undo-request.js';
import { restoreCheckpoint } from './workspace-restore.js';

/** Undo as a Task of its own: what an undo request takes back, whether the admin may queue one, and the run itself. */
@Injectable()
export class HistoryUndo {
  constructor(
    private readonly stores: HistoryStores,
    private readonly workspace: WorkspaceService,
    private readonly trace: TraceRepository,
    private readonly clock: Clock = SYSTEM_CLOCK,
  ) {}

  /** Whether `request` asks to undo (then the queue runs `undo` instead of the agent). */
  isUndo(request: string): boolean {
    return this.stores.enabled && undoRequestOf(request) !== null;
  }

  /**
   * Runs an undo request as the Task's work: restores what the target Task changed to its start
   * checkpoint, traces each path, and answers in words for the person who asked (the conversation keeps
   * them, so the model reads them with the next request too). A refusal is an AgentFailure naming the
   * reason and the files.
   */
  async undo(history: TaskHistory): Promise<AgentOutcome> {
    const target = undoRequestOf(history.task.request);
    if (!target || !history.before) throw new AgentFailure('Undo is not possible: the workspace history could not record this Task (see the service log).');
    const store = this.stores.store(history.task.sessionId);
    const timeline = await timelineOf(store.repo);
    const plan = await planUndo(store.repo, timeline, history.task, target, history.before.commit);
    const root = (await this.workspace.forTask(history.task.sessionId)).root;
    const started = this.clock.now();
    const outcome = await this.stores.serial(history.task.sessionId, () => restoreCheckpoint(store.repo, plan.target.before!.commit, root, plan.paths));
    history.undoOf = plan.target.taskId;
    for (const path of outcome.restored) {
      await this.trace.append(
        {
          taskId: history.task.id,
          subtask: 'undo',
          kind: 'file_op',
          name: 'undo',
          outcome: 'ok',
          durationMs: this.clock.now() - started,
          startedAt: nowIso(this.clock),
          detail: { path, undoOf: plan.target.taskId },
        },
        history.task,
      );
    }
    const names = (paths: string[]) => paths.map((path) => JSON.stringify(path)).join(', ');
    const count = outcome.restored.length;
    const lines = [
      count === 0
        ? `Undid task ${plan.target.taskId}: it had changed no file, so nothing needed restoring.`
        : `Undid task ${plan.target.taskId}: ${count === 1 ? 'the file it changed is' : `the ${count} files it changed are`} back as they were before it (${names(outcome.restored)}).`,
    ];
    if (outcome.notRestorable.length > 0) {
      lines.push(`Not restored, because only their hash was recorded (large files): ${names(outcome.notRestorable)}.`);
    }
    return { result: lines.join('\n'), progress: { completedSubtasks: 1, totalSubtasks: 1, currentTask: 'undo' } };
  }

  /** Whether an undo of `taskId` (or of the last Task) would be refused now: the admin asks before queuing one. */
  async checkUndo(sessionId: string, taskId: string | null): Promise<{ target: string; paths: string[] }> {
    const store = this.stores.store(sessionId);
    const timeline = await timelineOf(store.repo);
    const current = timeline.at(-1)?.after ?? timeline.at(-1)?.before;
    if (!current) throw new AgentError('invalid_input', 'Nothing to undo: this session has no recorded Task.');
    const probe = { id: '00000000-0000-4000-8000-000000000000', sessionId, request: '' };
    try {
      const plan = await planUndo(store.repo, timeline, probe, taskId ? { kind: 'task', taskId } : { kind: 'last' }, current.commit);
      return { target: plan.target.taskId, paths: plan.paths };
    } catch (error) {
      if (error instanceof AgentFailure) throw new AgentError('invalid_input', error.message);
      throw error;
    }
  }
}
