import { RunEventHub } from '../agent/run-event-hub.js';
import { Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { AgentError } from '../common/agent-error.js';
import { nowIso } from '../common/clock.js';
import { ApprovalsService } from '../approvals/approvals.service.js';
import { AuditService, type AuditDraft } from '../audit/audit.service.js';
import { AppConfig } from '../config/app-config.js';
import { UnitOfWork } from '../database/unit-of-work.js';
import type { Caller } from '../identity/caller.js';
import { SessionsService } from '../sessions/sessions.service.js';
import { DEFAULT_TIER } from '../ollama/model-tiers.js';
import { TaskImageEntity } from './task-image.entity.js';
import { listedTask, taskReadModel, type ListedTask, type TaskReadModel } from './task-read-model.js';
import type { TaskRequest, TaskRequestImage } from './task-request.js';
import type { TaskStatus } from './task-status.js';
import { TaskEntity } from './task.entity.js';
import { TaskExecution } from './task-execution.js';
import { SessionFork } from './session-fork.js';
import { TaskWorker } from './task-worker.js';
import type { SqlStep } from '../database/plain-sql.js';
import { TasksRepository, type TaskFilters, type TaskOutcome } from './tasks.repository.js';
import { TaskTelemetry } from '../telemetry/task-telemetry.js';
import { Telemetry } from '../telemetry/telemetry.js';
import { taskTraceIds } from '../telemetry/trace-context.js';
import { UsageService } from '../usage/usage.service.js';
import { tracedTask } from './traced-task.mapper.js';

/** Queue rules: who may see or cancel which Task, and how a request becomes a durable Task. Tasks leave it as read models. */
@Injectable()
export class TaskQueueService {
  private acceptingWork = true;

  constructor(
    private readonly tasks: TasksRepository,
    private readonly sessions: SessionsService,
    private readonly audit: AuditService,
    private readonly unitOfWork: UnitOfWork,
    private readonly worker: TaskWorker,
    private readonly execution: TaskExecution,
    private readonly config: AppConfig,
    private readonly forks: SessionFork,
    private readonly events: RunEventHub,
    private readonly approvals: ApprovalsService,
    private readonly usage: UsageService,
    private readonly telemetry: Telemetry,
    private readonly taskTelemetry: TaskTelemetry,
  ) {}

  /**
   * Stores the Task, its images and a new session when none is given, in one unit of work with the
   * call's accepting audit event (`accepted`, completed here with the ids and the image metadata, never
   * the data): the Task exists only if its event does. Refused (queue_full, nothing stored) when the
   * caller already has `queue.max_queued_per_user` Tasks waiting, or quota_exceeded when their Tasks
   * that ended today already spent `quotas.tokens_per_user_day`. A surface's `claim` (a schedule's fire,
   * a trigger's delivery) commits in the same unit, its guard's refusal refusing the Task. Then wakes the worker.
   */
  async enqueue(caller: Caller, input: TaskRequest, accepted: AuditDraft): Promise<TaskReadModel> {
    // When the request reached the queue: the Task's creation, and the start of its accept span (and so of its trace's span).
    const acceptedAt = nowIso();
    const startMs = Date.parse(acceptedAt);
    if (!this.acceptingWork) throw new AgentError('shutting_down', 'The service is shutting down and accepts no new tasks.');
    await this.usage.assertWithinQuota(caller.user, caller.groups, startMs);
    let newSession = null;
    // Issue 24: `fork_from` makes the Task the first of a new session forked from the caller's Task.
    let sessionId = input.forkFrom ? (await this.forks.fork(caller, input.forkFrom)).sessionId : input.sessionId;
    if (sessionId === null) {
      newSession = this.sessions.create(caller.user, input.prelude, input.newSessionId);
      sessionId = newSession.session.id;
    } else if (!(await this.sessions.findOwned(sessionId, caller.user))) {
      throw new AgentError('session_not_found', `session_id: session ${sessionId} does not exist.`);
    }
    const task = newTask(caller, sessionId, input, this.telemetry.enabled, acceptedAt);
    const images = input.images.map((image, position) => newImage(task.id, position, image));
    const event = this.audit.entry({
      ...accepted,
      caller,
      outcome: 'ok',
      taskId: task.id,
      sessionId,
      detail: { ...accepted.detail, images: images.map(({ mimeType, bytes, sha256 }) => ({ mimeType, bytes, sha256 })), ...(input.inputs?.length ? { files: input.inputs } : {}) },
    });
    const limit = this.config.queue.maxQueuedPerUser;
    const full = (queued: number) =>
      new AgentError(
        'queue_full',
        `you already have ${queued} tasks waiting, the most one user may queue (queue.max_queued_per_user: ${limit}); wait until some have started, or cancel some`,
      );
    const { before, after } = this.tasks.queuedLimit(caller.user, limit, full);
    await this.unitOfWork.commit({
      writes: [...before, ...(newSession ? [newSession.insertion] : []), ...this.tasks.insertion(task, images), ...(input.decision ?? []), ...(input.claim ?? []), ...after],
      shared: [event],
    });
    this.taskTelemetry.accepted(tracedTask(task), startMs);
    await this.events.publish({ type: 'accepted', taskId: task.id, sessionId, owner: caller.user, groups: caller.groups });
    this.worker.wake();
    return taskReadModel(task);
  }

  /** Refuses (quota_exceeded) a caller past today's token quota: what enqueue checks first, for a surface that answers before it queues. */
  assertWithinQuota(caller: Caller): Promise<void> {
    return this.usage.assertWithinQuota(caller.user, caller.groups);
  }

  /** The groups and email `user` presented with their latest Task sent in person since `since` (TasksRepository.presentedSince). */
  presentedSince(user: string, since: string): Promise<{ groups: string[]; email: string | null } | null> {
    return this.tasks.presentedSince(user, since);
  }

  /** Admin view: any Task. */
  async find(taskId: string): Promise<ListedTask | null> {
    const task = await this.tasks.findById(taskId);
    return task && listedTask(task);
  }

  /** The id of the session's newest Task, or null: what the approvals' `decidedLast` needs (the queue owns `tasks`). */
  newestOfSession(sessionId: string): Promise<string | null> {
    return this.tasks.newestOfSession(sessionId);
  }

  /** The step counting a correction to `task`, for the intake's unit that stores it (TasksRepository.correctionCount). */
  correctionCount(task: { id: string; owner: string }, running: boolean): Extract<SqlStep, { op: 'all' }> {
    return this.tasks.correctionCount(task.id, task.owner, running);
  }

  /** The ids of `owner`'s Tasks still queued or running (a schedule skips its fire while one of them is its last run's). */
  activeOf(owner: string): Promise<string[]> {
    return this.tasks.activeOf(owner);
  }

  /** The status and the start of the result of each of `taskIds` that exists (a page of schedule or trigger runs), in one query. */
  outcomes(taskIds: readonly string[], resultChars: number): Promise<Map<string, TaskOutcome>> {
    return this.tasks.outcomes([...new Set(taskIds)], resultChars);
  }

  /** Metrics: how many Tasks are in each status. */
  countByStatus(): Promise<Record<TaskStatus, number>> {
    return this.tasks.countByStatus();
  }

  /** Admin view: Tasks matching the filters, newest first, keyset-paged by `seq`. */
  async list(filters: TaskFilters, limit: number, beforeSeq: number | null): Promise<ListedTask[]> {
    return (await this.tasks.list(await this.resolved(filters), limit, beforeSeq)).map(listedTask);
  }

  /** Which of the Tasks wait for an approval nobody has answered yet (the approvals' own table says). */
  awaitingApproval(tasks: readonly { id: string }[]): Promise<Set<string>> {
    return this.approvals.pendingAmong(tasks.map((task) => task.id));
  }

  async count(filters: TaskFilters): Promise<number> {
    return this.tasks.count(await this.resolved(filters));
  }

  /** `awaitingApproval` as the Tasks the approvals name (each table is read by its owner's repository). */
  private async resolved(filters: TaskFilters): Promise<TaskFilters> {
    if (!filters.awaitingApproval) return filters;
    return { ...filters, awaitingApproval: undefined, ids: await this.approvals.pendingTaskIds(filters.owner) };
  }

  /** Where each queued Task of `tasks` stands in the queue (1 runs next); others have no entry. */
  queuePositions(tasks: readonly { id: string; status: TaskStatus }[]): Promise<Map<string, number>> {
    return this.tasks.queuePositions(tasks);
  }

  /** A Task of another user answers exactly as a missing one. */
  async findOwned(caller: Caller, taskId: string): Promise<ListedTask | null> {
    const task = await this.ownedRow(caller, taskId);
    return task && listedTask(task);
  }

  private async ownedRow(caller: Caller, taskId: string): Promise<TaskEntity | null> {
    const task = await this.tasks.findById(taskId);
    return task && task.owner === caller.user ? task : null;
  }

  /**
   * Cancels a queued Task at once, or fires the running Task's cancellation token (here, or through
   * the database flag in whichever process runs it). Terminal Tasks are left as they are. Only the
   * owner's own Tasks: another user's Task answers as a missing one.
   */
  async cancel(caller: Caller, taskId: string): Promise<ListedTask | null> {
    const task = await this.ownedRow(caller, taskId);
    return task && this.cancelTask(caller, task);
  }

  /** The admin surface's cancel: any Task (the admin is recorded as the actor). */
  async cancelAny(admin: Caller, taskId: string): Promise<ListedTask | null> {
    const task = await this.tasks.findById(taskId);
    return task && this.cancelTask(admin, task);
  }

  private async cancelTask(caller: Caller, task: TaskEntity): Promise<ListedTask | null> {
    const taskId = task.id;
    if (await this.tasks.cancelQueued(taskId, 'Cancelled on request before it started.')) {
      await this.audit.record({
        caller,
        action: 'task.status',
        outcome: 'ok',
        taskId,
        sessionId: task.sessionId,
        detail: { status: 'cancelled' },
      });
      const cancelled = await this.tasks.findById(taskId);
      await this.events.publish({ type: 'ended', taskId, status: 'cancelled', result: cancelled?.result ?? '' });
      return cancelled && listedTask(cancelled);
    } else if (await this.tasks.requestCancel(taskId)) {
      this.execution.cancelLocal(taskId);
    }
    const after = await this.tasks.findById(taskId);
    return after && listedTask(after);
  }

  /**
   * Graceful shutdown (SIGTERM): from now on agent_run gets a clear error while the transports keep
   * answering; the running Task may finish within `graceMs`, else it ends interrupted; queued Tasks
   * stay queued for the next start or another replica.
   */
  async shutdown(graceMs: number): Promise<void> {
    this.acceptingWork = false;
    await this.worker.stop(graceMs);
  }
}

function newTask(caller: Caller, sessionId: string, input: TaskRequest, tracing: boolean, at: string): TaskEntity {
  const trace = taskTraceIds(input.trace, tracing);
  const task = new TaskEntity();
  Object.assign(task, {
    id: input.taskId ?? randomUUID(),
    sessionId,
    owner: caller.user,
    ownerGroups: JSON.stringify(caller.groups),
    ownerEmail: caller.email ?? null,
    request: input.request,
    temperature: input.temperature,
    client: caller.client,
    surface: caller.transport,
    locale: input.locale ?? null,
    answersInPlace: input.answersInPlace ?? false,
    unattended: input.unattended ?? null,
    mode: input.mode ?? 'agent',
    tier: input.tier ?? DEFAULT_TIER,
    budget: input.budget ? JSON.stringify(input.budget) : null,
    stoppedBy: null,
    steerCount: 0,
    steeringClosed: false,
    status: 'queued',
    completedSubtasks: 0,
    totalSubtasks: 1,
    currentTask: '',
    inputTokens: 0,
    outputTokens: 0,
    criticalPathTokens: 0,
    result: null,
    cancelRequested: false,
    attempt: 0,
    leaseOwner: null,
    leaseExpiresAt: null,
    traceId: trace?.traceId ?? null,
    spanId: trace?.spanId ?? null,
    traceParent: trace?.traceParent ?? null,
    traceState: trace?.traceState ?? null,
    createdAt: at,
    updatedAt: at,
    startedAt: null,
    finishedAt: null,
  } satisfies Omit<TaskEntity, 'seq'>);
  return task;
}

function newImage(taskId: string, position: number, image: TaskRequestImage): TaskImageEntity {
  const row = new TaskImageEntity();
  row.taskId = taskId;
  row.position = position;
  row.mimeType = image.mimeType;
  row.bytes = image.bytes;
  row.sha256 = image.sha256;
  row.data = image.data;
  return row;
}
