import { Injectable } from '@nestjs/common';
import { AgentError } from '../common/agent-error.js';
import { UnitOfWork } from '../database/unit-of-work.js';
import { HistoryService } from '../history/history.service.js';
import type { Caller } from '../identity/caller.js';
import { SessionsService } from '../sessions/sessions.service.js';
import { TasksRepository } from './tasks.repository.js';

/**
 * Workspace history (issue 24): a fork is a new session of the caller that starts from another of the
 * caller's sessions as it stood at the end of one Task: the conversation up to and including that Task
 * (as the new session's prelude) and a copy of the workspace from that Task's end checkpoint.
 */
@Injectable()
export class SessionFork {
  constructor(
    private readonly tasks: TasksRepository,
    private readonly sessions: SessionsService,
    private readonly unitOfWork: UnitOfWork,
    private readonly history: HistoryService,
  ) {}

  /** The new session's id; a Task of another user reads as a missing one. */
  async fork(caller: Caller, taskId: string, fromSession?: string): Promise<{ sessionId: string; sourceSessionId: string; notRestorable: string[] }> {
    const task = await this.tasks.findById(taskId);
    if (!task || task.owner !== caller.user || (fromSession && task.sessionId !== fromSession) || !(await this.sessions.findOwned(task.sessionId, caller.user))) {
      throw new AgentError('invalid_input', `fork_from: task ${taskId} does not exist.`);
    }
    const [prelude, turns] = await Promise.all([this.sessions.prelude(task.sessionId), this.tasks.history(task.sessionId, task.seq + 1)]);
    const images = await this.tasks.imagesOf(turns.map((turn) => turn.id));
    const conversation = [
      ...prelude,
      ...turns.map((turn) => ({ request: turn.request, imageCount: images.filter((image) => image.taskId === turn.id).length, answer: turn.result ?? '' })),
    ];
    const created = this.sessions.create(caller.user, conversation);
    // The workspace first: a session whose copy failed is never committed.
    const { notRestorable } = await this.history.materializeFork(task.sessionId, task.id, created.session.id);
    await this.unitOfWork.commit({ writes: [created.insertion], shared: [] });
    return { sessionId: created.session.id, sourceSessionId: task.sessionId, notRestorable };
  }
}
