import { Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { SteerInboxRepository, SteerRefused } from '../agent/steer-inbox.repository.js';
import type { ApprovalEntity } from '../approvals/approval.entity.js';
import { alreadyDecided, ApprovalsService } from '../approvals/approvals.service.js';
import { AuditService, type AuditDraft } from '../audit/audit.service.js';
import { AgentError } from '../common/agent-error.js';
import { AppConfig } from '../config/app-config.js';
import { UnitOfWork } from '../database/unit-of-work.js';
import type { SqlStep } from '../database/plain-sql.js';
import { HistoryService } from '../history/history.service.js';
import type { Caller } from '../identity/caller.js';
import type { ListedTask, TaskReadModel } from '../queue/task-read-model.js';
import type { TaskRequest } from '../queue/task-request.js';
import { TaskQueueService } from '../queue/task-queue.service.js';
import { SessionsService } from '../sessions/sessions.service.js';
import { conversationWaitOf, inputKind, type InputKind } from './input-order.js';

/** Which surface a person's input came through (the audit names it; schedules and triggers call too). */
export type IntakeSurface = 'mcp' | 'chat' | 'a2a' | 'console' | 'schedule' | 'trigger';

export interface IntakeInput {
  request: TaskRequest;
  surface: IntakeSurface;
  /**
   * Join the running Task as a correction (steering): A2A names its Task, the Chat API (`agent_steer`)
   * and MCP (`agent.steering.mcp`) its session. Absent: a new request of the conversation. `keep`: the
   * correction was asked for explicitly (Chat `agent_steer`), so while the session waits for a person it
   * is kept for the run instead of answering the wait (A2A's message to an input-required Task and MCP's
   * `agent_run` answer it, as their protocols say).
   */
  steer?: ({ taskId: string } | { sessionId: string }) & { keep?: boolean };
}

/** How a queued input was read (the audit's `detail.as`): INPUT_ORDER's kinds that queue a Task. */
export type QueuedAs = 'request' | 'answer' | 'choice' | 'undo' | 'follow_up';

/**
 * What became of an input: a queued Task (`as`: what the input was read as), a correction the running
 * Task took (`position`: its number in the Task), a correction kept for a Task that waits for a person
 * (`kept`: the model reads it when the wait ends), or `not_found` for a steered Task the caller cannot
 * see (the surface answers as for a missing one).
 */
export type IntakeOutcome =
  | { kind: 'queued'; task: TaskReadModel; as: QueuedAs }
  | { kind: 'steered'; task: ListedTask; position: number }
  | { kind: 'kept'; task: ListedTask; position: number }
  | { kind: 'not_found' };

/** The statuses in which a Task takes corrections. */
const RUNNING: ListedTask['status'][] = ['planning', 'running'];

/** What the intake found before it decided: the session's running Task and its wait for the conversation. */
interface Found {
  sessionId: string | null;
  running: ListedTask | null;
  pending: ApprovalEntity | null;
  /** With nothing pending: the request the session's newest turn decided. */
  decided?: ApprovalEntity | null;
}

/**
 * The one intake for what a person sends into a conversation (ADR 0020 §4). The accept rules first
 * (ownership: another user's Task or session answers as a missing one; fork; the queue limit and quota
 * in TaskQueueService.enqueue), then `inputKind` decides in its one documented order (input-order.ts,
 * docs/agent.md) whether the input is a correction, an approval answer, a choice, a kept correction,
 * undo, a follow-up or a new request. Every outcome is audited once, in the transaction that stores it.
 */
@Injectable()
export class ConversationIntake {
  constructor(
    private readonly queue: TaskQueueService,
    private readonly sessions: SessionsService,
    private readonly inbox: SteerInboxRepository,
    private readonly approvals: ApprovalsService,
    private readonly history: HistoryService,
    private readonly unitOfWork: UnitOfWork,
    private readonly audit: AuditService,
    private readonly config: AppConfig,
  ) {}

  async submit(caller: Caller, input: IntakeInput, accepted: AuditDraft): Promise<IntakeOutcome> {
    const found = await this.find(caller, input);
    if (found === 'not_found') return { kind: 'not_found' };
    const { request } = input;
    const wait = found.pending && conversationWaitOf(found.pending);
    // A new session, a fork or a direct Task has nothing to decide: `decidedLast` is read only when it matters.
    const decidable = found.sessionId !== null && !request.forkFrom && request.mode !== 'direct';
    found.decided = decidable && !wait ? await this.approvals.decidedLast(found.sessionId!, await this.queue.newestOfSession(found.sessionId!)) : null;
    const kind = inputKind({
      text: request.request,
      steer: !input.steer ? 'none' : found.running ? 'running' : 'idle',
      keepDuringWait: input.steer?.keep === true,
      wait: decidable ? wait : null,
      decidedLast: found.decided && conversationWaitOf(found.decided),
      undo: this.history.enabled,
    });
    return this.apply(caller, input, found, kind, accepted);
  }

  /**
   * The console's correction for a Task: an admin's for any (recorded as the actor), a user's for their
   * own (another's answers as missing). A running Task takes it; a Task paused for the conversation's
   * answer keeps it (as Chat `agent_steer` does: it answers nothing, and the model reads it when the wait
   * ends). Any other Task takes none: refused.
   */
  async steerFromConsole(caller: Caller, taskId: string, text: string): Promise<IntakeOutcome> {
    const task = caller.admin ? await this.queue.find(taskId) : await this.queue.findOwned(caller, taskId);
    if (!task) return { kind: 'not_found' };
    const accepted: AuditDraft = { action: 'console.steer', detail: {} };
    const pending = RUNNING.includes(task.status) ? null : await this.approvals.pendingOfSession(task.sessionId);
    const outcome = RUNNING.includes(task.status)
      ? await this.steer(caller, task, text, accepted)
      : pending?.taskId === task.id && conversationWaitOf(pending)
        ? await this.keep(caller, pending, text, accepted)
        : null;
    if (!outcome) {
      throw new AgentError(
        'invalid_input',
        `task ${taskId} is not running (${task.status}) and waits for no answer; only a running task, or one paused for a person, takes corrections.`,
      );
    }
    return outcome;
  }

  /** What the input decides, done: each kind stores its own writes with its one audit event. */
  private async apply(caller: Caller, input: IntakeInput, found: Found, kind: InputKind, accepted: AuditDraft): Promise<IntakeOutcome> {
    const request = { ...input.request, sessionId: found.sessionId };
    switch (kind.kind) {
      case 'steer': {
        const steered = await this.steer(caller, found.running!, request.request, accepted);
        // It stopped taking corrections in the meantime (it ended, or its last model call began).
        return steered ?? this.enqueue(caller, request, 'follow_up', accepted);
      }
      case 'kept': {
        const kept = await this.keep(caller, found.pending!, request.request, accepted);
        // The wait was answered in the meantime: the correction is the session's next Task.
        return kept ?? this.enqueue(caller, request, 'follow_up', accepted);
      }
      case 'answer':
      case 'choice': {
        // The decision commits with the Task that carries it, or neither (`already_decided` when one came first).
        const taskId = request.taskId ?? randomUUID();
        const decision = this.approvals.decision(caller, found.pending!, taskId, {
          state: kind.kind === 'choice' || kind.answer === 'approve' ? 'granted' : 'denied',
          reason: kind.kind === 'choice' ? kind.option : null,
        });
        const outcome = await this.enqueue(caller, { ...request, taskId, decision: decision.steps }, kind.kind, accepted);
        await decision.record();
        return outcome;
      }
      case 'already_decided':
        throw alreadyDecided(found.decided!.id);
      case 'undo':
      case 'follow_up':
      case 'request':
        return this.enqueue(caller, request, kind.kind, accepted);
    }
  }

  /** Queues the input as a Task, audited as what it was read as (`detail.as`). */
  private async enqueue(caller: Caller, request: TaskRequest, as: QueuedAs, accepted: AuditDraft): Promise<IntakeOutcome> {
    const task = await this.queue.enqueue(caller, request, { ...accepted, detail: { ...accepted.detail, as } });
    return { kind: 'queued', as, task };
  }

  /**
   * The accept rules on what the input names: a steered Task or session, or the request's session, the
   * caller's own (another's answers as missing); then its running Task and the request it waits for.
   */
  private async find(caller: Caller, input: IntakeInput): Promise<Found | 'not_found'> {
    const steer = input.steer;
    let sessionId = input.request.forkFrom ? null : input.request.sessionId;
    let running: ListedTask | null = null;
    if (steer && 'taskId' in steer) {
      const task = await this.queue.findOwned(caller, steer.taskId);
      if (!task) return 'not_found';
      sessionId = task.sessionId;
      running = RUNNING.includes(task.status) ? task : null;
    } else if (steer) {
      sessionId = steer.sessionId;
    }
    if (sessionId === null) return { sessionId, running, pending: null };
    if (!(await this.sessions.findOwned(sessionId, caller.user))) throw new AgentError('session_not_found', `session_id: session ${sessionId} does not exist.`);
    if (steer && 'sessionId' in steer) [running = null] = await this.queue.list({ sessionId, owner: caller.user, status: RUNNING }, 1, null);
    const pending = await this.approvals.pendingOfSession(sessionId);
    return { sessionId, running, pending };
  }

  /**
   * The running Task takes the correction, with its audit event, in one unit of work; null when it had
   * stopped taking corrections (it ended, or its last model call began). Refused when it took its most.
   */
  private async steer(caller: Caller, task: ListedTask, text: string, accepted: AuditDraft): Promise<IntakeOutcome | null> {
    const max = this.config.agent.steering.maxPerTask;
    const { id, writes } = this.inbox.acceptance({ taskId: task.id, sessionId: task.sessionId, owner: task.owner }, this.queue.correctionCount(task, true), text, max);
    if (!(await this.commitCorrection(caller, task, { id, writes }, accepted, {}))) return null;
    const now = (await this.queue.find(task.id)) ?? task;
    return { kind: 'steered', task: now, position: now.steerCount };
  }

  /**
   * A correction for a run that waits for the conversation's answer: kept with the paused Task, which
   * answers nothing; the Task that takes the answer gives it to the model after the answer's result.
   * Null when the wait was answered first.
   */
  private async keep(caller: Caller, pending: ApprovalEntity, text: string, accepted: AuditDraft): Promise<IntakeOutcome | null> {
    const max = this.config.agent.steering.maxPerTask;
    const task = await this.queue.find(pending.taskId);
    if (!task) return null;
    const { id, writes } = this.inbox.keptDuringWait(
      { taskId: task.id, sessionId: task.sessionId, owner: task.owner },
      this.approvals.stillPending(pending.id, task.id),
      this.queue.correctionCount(task, false),
      text,
      max,
    );
    if (!(await this.commitCorrection(caller, task, { id, writes }, accepted, { kept_for: pending.id }))) return null;
    const now = (await this.queue.find(task.id)) ?? task;
    return { kind: 'kept', task: now, position: now.steerCount };
  }

  /** Stores a correction with its one audit event (`conversation.steer`); false when its Task no longer takes it. */
  private async commitCorrection(caller: Caller, task: ListedTask, correction: { id: string; writes: SqlStep[] }, accepted: AuditDraft, extra: Record<string, unknown>) {
    const max = this.config.agent.steering.maxPerTask;
    const event = this.audit.entry({
      caller,
      action: 'conversation.steer',
      outcome: 'ok',
      taskId: task.id,
      sessionId: task.sessionId,
      detail: { ...accepted.detail, via: accepted.action, steer_id: correction.id, ...extra },
    });
    try {
      await this.unitOfWork.commit({ writes: correction.writes, shared: [event] });
      return true;
    } catch (error) {
      if (!(error instanceof SteerRefused)) throw error;
      if (error.reason === 'not_running') return false;
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
  }
}
