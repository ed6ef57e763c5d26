import { alreadyDecided, ApprovalsService } from '../approvals/approvals.service.js';
import { inputRequestOf, type InputRequest } from './input-request.js';
import { conversationWaitOf, inputKind } from './input-order.js';
import { Injectable } from '@nestjs/common';
import { TraceRepository } from '../agent/trace.repository.js';
import type { TaskStepEntity } from '../agent/task-step.entity.js';
import type { Caller } from '../identity/caller.js';
import type { PersonLocale } from '../common/person-locale.js';
import { SessionFork } from '../queue/session-fork.js';
import { TaskQueueService } from '../queue/task-queue.service.js';
import type { TaskStatus } from '../queue/task-status.js';
import { TaskReadModels, type ListedTask, type TaskReadModel, type WithFiles } from '../queue/task-read-model.js';
import { SessionsService } from '../sessions/sessions.service.js';
import type { TaskFilters } from '../queue/tasks.repository.js';

/** What a surface may filter its caller's Tasks by. */
export type OwnedTaskFilters = Pick<TaskFilters, 'sessionId' | 'updatedFrom'> & { status?: TaskStatus[] };

const TERMINAL_STATUSES: readonly TaskStatus[] = ['completed', 'failed', 'cancelled'];
export const isTerminal = (status: TaskStatus) => TERMINAL_STATUSES.includes(status);

/** Most Tasks one session's cancel looks at (a session holds its turns, rarely more than a few). */
const SESSION_SCAN_LIMIT = 1000;

/**
 * What the Chat API and A2A share with MCP: the same TaskQueue, sessions and ownership rules, seen
 * as conversations (a session's Tasks are its turns). Ownership is the queue's: another user's Task
 * or session answers exactly as a missing one.
 */
@Injectable()
export class ConversationService {
  constructor(
    private readonly queue: TaskQueueService,
    private readonly sessions: SessionsService,
    private readonly trace: TraceRepository,
    private readonly forks: SessionFork,
    private readonly approvals: ApprovalsService,
    private readonly readModels: TaskReadModels,
  ) {}

  /** Issue 24: a new session of the caller forked from one of the caller's Tasks; its id. */
  async fork(caller: Caller, taskId: string): Promise<string> {
    return (await this.forks.fork(caller, taskId)).sessionId;
  }

  /**
   * A decision word to a session whose newest turn already carries a decision, with nothing else pending:
   * refused (`already_decided`), as ConversationIntake refuses it (the same rule of `inputKind`). A2A checks
   * it before its SDK starts a task, to answer with an error.
   */
  async refuseRepeatedDecision(sessionId: string, request: string): Promise<void> {
    const [pending, newest] = await Promise.all([this.approvals.pendingOfSession(sessionId), this.queue.newestOfSession(sessionId)]);
    const wait = pending && conversationWaitOf(pending);
    // A request that waits takes the word (an answer or a new instruction): the last decision is read only without one, as the intake reads it.
    if (wait) return;
    const decided = await this.approvals.decidedLast(sessionId, newest);
    const kind = inputKind({ text: request, steer: 'none', keepDuringWait: false, wait, decidedLast: decided && conversationWaitOf(decided), undo: false });
    if (kind.kind === 'already_decided') throw alreadyDecided(decided!.id);
  }

  /** Refuses a caller past today's token quota (the queue checks again when it stores the Task). */
  assertWithinQuota(caller: Caller): Promise<void> {
    return this.queue.assertWithinQuota(caller);
  }

  async ownsSession(caller: Caller, sessionId: string): Promise<boolean> {
    return (await this.sessions.findOwned(sessionId, caller.user)) !== null;
  }

  find(caller: Caller, taskId: string): Promise<ListedTask | null> {
    return this.queue.findOwned(caller, taskId);
  }

  /** Any Task, for following one the caller was already shown (ownership checked when it was accepted). */
  read(taskId: string): Promise<ListedTask | null> {
    return this.queue.find(taskId);
  }

  /** The caller's Tasks, newest first, optionally of one session, some statuses, changed since an instant, keyset-paged by `seq`. */
  listOwned(caller: Caller, filters: OwnedTaskFilters, limit: number, beforeSeq: number | null): Promise<ListedTask[]> {
    return this.queue.list({ ...filters, owner: caller.user }, limit, beforeSeq);
  }

  countOwned(caller: Caller, filters: OwnedTaskFilters): Promise<number> {
    return this.queue.count({ ...filters, owner: caller.user });
  }

  cancel(caller: Caller, taskId: string): Promise<ListedTask | null> {
    return this.queue.cancel(caller, taskId);
  }

  /**
   * Cancels the session's queued and running Tasks; null when the session is not the caller's.
   * Terminal Tasks are left as they are (an empty list when nothing was left to cancel).
   */
  async cancelSession(caller: Caller, sessionId: string): Promise<ListedTask[] | null> {
    if (!(await this.sessions.findOwned(sessionId, caller.user))) return null;
    const open = (await this.queue.list({ sessionId, owner: caller.user }, SESSION_SCAN_LIMIT, null)).filter((task) => !isTerminal(task.status));
    const cancelled: ListedTask[] = [];
    for (const task of open) {
      const after = await this.queue.cancel(caller, task.id);
      if (after) cancelled.push(after);
    }
    return cancelled;
  }

  /** Trace steps written after `afterSeq`. */
  stepsAfter(taskId: string, afterSeq: number): Promise<TaskStepEntity[]> {
    return this.trace.after(taskId, afterSeq);
  }

  /** What the Task asked a person and nobody has answered yet (a question or an approval), or null: the Task then waits for input. */
  async asking(taskId: string, locale: PersonLocale): Promise<InputRequest | null> {
    const [pending] = await this.approvals.pendingOfTask(taskId);
    return pending ? inputRequestOf(pending, locale) : null;
  }

  /** The Tasks with the workspace files each created or changed (their deliverables), in the order it first changed them. */
  allWithFiles<T extends TaskReadModel>(tasks: readonly T[]): Promise<WithFiles<T>[]> {
    return this.readModels.allWithFiles(tasks);
  }

  withFiles<T extends TaskReadModel>(task: T): Promise<WithFiles<T>> {
    return this.readModels.withFiles(task);
  }
}
