import { Injectable } from '@nestjs/common';
import { SteerInboxRepository, SteerRefused } from '../agent/steer-inbox.repository.js';
import { AuditService, type AuditDraft } from '../audit/audit.service.js';
import { AgentError } from '../common/agent-error.js';
import { AppConfig } from '../config/app-config.js';
import { UnitOfWork } from '../database/unit-of-work.js';
import type { Caller } from '../identity/caller.js';
import type { ListedTask, TaskReadModel } from '../queue/task-read-model.js';
import type { TaskRequest } from '../queue/task-request.js';
import { TaskQueueService } from '../queue/task-queue.service.js';
import { SessionsService } from '../sessions/sessions.service.js';

/** Which surface a person's input came through (the audit names it; schedules and triggers call too). */
export type IntakeSurface = 'mcp' | 'chat' | 'a2a' | 'console' | 'schedule' | 'trigger';

export interface IntakeInput {
  request: TaskRequest;
  surface: IntakeSurface;
  /**
   * Join the running Task as a correction (steering): A2A names its Task, the Chat API (`agent_steer`)
   * and MCP (`agent.steering.mcp`) its session. Absent: a new request of the conversation.
   */
  steer?: { taskId: string } | { sessionId: string };
}

/**
 * What became of an input: a queued Task (`as`: a request, or a follow-up of a Task that was no longer
 * running when the correction came), a correction the running Task took (`position`: its number in the
 * Task), or `not_found` for a steered Task the caller cannot see (the surface answers as for a missing one).
 */
export type IntakeOutcome = { kind: 'queued'; task: TaskReadModel; as: 'request' | 'follow_up' } | { kind: 'steered'; task: ListedTask; position: number } | { kind: 'not_found' };

/** The statuses in which a Task takes corrections. */
const RUNNING: ListedTask['status'][] = ['planning', 'running'];

/**
 * The one intake for what a person sends into a conversation (ADR 0020). In order: the accept rules
 * (ownership: another user's Task or session answers as a missing one; fork; the queue limit, in
 * TaskQueueService.enqueue), then a correction for the running Task when the surface asks for one, else
 * a new Task (an approval answer, a choice and undo are read from it when it runs). Every outcome is
 * audited in the transaction that stores it.
 */
@Injectable()
export class ConversationIntake {
  constructor(
    private readonly queue: TaskQueueService,
    private readonly sessions: SessionsService,
    private readonly inbox: SteerInboxRepository,
    private readonly unitOfWork: UnitOfWork,
    private readonly audit: AuditService,
    private readonly config: AppConfig,
  ) {}

  async submit(caller: Caller, input: IntakeInput, accepted: AuditDraft): Promise<IntakeOutcome> {
    if (!input.steer) return { kind: 'queued', as: 'request', task: await this.queue.enqueue(caller, input.request, accepted) };
    const target = await this.runningTarget(caller, input.steer);
    if (target === 'not_found') return { kind: 'not_found' };
    if (target.task) {
      const steered = await this.steer(caller, target.task, input.request.request, accepted);
      if (steered) return steered;
    }
    // Nothing running to correct (not started, ended, or past its last model call): the input is the session's next Task.
    const followUp = { ...input.request, sessionId: target.sessionId };
    return { kind: 'queued', as: 'follow_up', task: await this.queue.enqueue(caller, followUp, { ...accepted, detail: { ...accepted.detail, as: 'follow_up' } }) };
  }

  /**
   * The console's correction for a running Task: an admin's for any (recorded as the actor), a user's
   * for their own (another's answers as missing). A Task that is not running takes none: refused.
   */
  async steerFromConsole(caller: Caller, taskId: string, text: string): Promise<IntakeOutcome> {
    const task = caller.admin ? await this.queue.find(taskId) : await this.queue.findOwned(caller, taskId);
    if (!task) return { kind: 'not_found' };
    const steered = RUNNING.includes(task.status) ? await this.steer(caller, task, text, { action: 'console.steer', detail: {} }) : null;
    if (!steered) throw new AgentError('invalid_input', `task ${taskId} is not running (${task.status}); only a running task takes corrections.`);
    return steered;
  }

  /** The Task a correction is for, and its session; `task` null when the session runs nothing now. */
  private async runningTarget(caller: Caller, steer: NonNullable<IntakeInput['steer']>): Promise<{ task: ListedTask | null; sessionId: string } | 'not_found'> {
    if ('taskId' in steer) {
      const task = await this.queue.findOwned(caller, steer.taskId);
      if (!task) return 'not_found';
      return { task: RUNNING.includes(task.status) ? task : null, sessionId: task.sessionId };
    }
    if (!(await this.sessions.findOwned(steer.sessionId, caller.user))) throw new AgentError('session_not_found', `session_id: session ${steer.sessionId} does not exist.`);
    const [task] = await this.queue.list({ sessionId: steer.sessionId, owner: caller.user, status: RUNNING }, 1, null);
    return { task: task ?? null, sessionId: steer.sessionId };
  }

  /**
   * The running Task takes the correction, with its audit event, in one unit of work; null when it had
   * stopped taking corrections (it ended, or its last model call began). Refused when it took its most.
   */
  private async steer(caller: Caller, task: ListedTask, text: string, accepted: AuditDraft): Promise<IntakeOutcome | null> {
    const max = this.config.agent.steering.maxPerTask;
    const { id, writes } = this.inbox.acceptance({ taskId: task.id, sessionId: task.sessionId, owner: task.owner }, text, max);
    const event = this.audit.entry({
      caller,
      action: 'conversation.steer',
      outcome: 'ok',
      taskId: task.id,
      sessionId: task.sessionId,
      detail: { ...accepted.detail, via: accepted.action, steer_id: id },
    });
    try {
      await this.unitOfWork.commit({ writes, shared: [event] });
    } catch (error) {
      if (!(error instanceof SteerRefused)) throw error;
      if (error.reason === 'not_running') return null;
      await this.audit.record({
        caller,
        action: 'conversation.steer',
        outcome: 'rejected',
        taskId: task.id,
        sessionId: task.sessionId,
        detail: { via: accepted.action, reason: 'limit' },
      });
      throw new AgentError('invalid_input', `task ${task.id} already took ${max} corrections, the most one task takes (agent.steering.max_per_task); send this after it ends.`);
    }
    const now = (await this.queue.find(task.id)) ?? task;
    return { kind: 'steered', task: now, position: now.steerCount };
  }
}
