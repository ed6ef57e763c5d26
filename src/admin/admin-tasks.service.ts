import { Injectable } from '@nestjs/common';
import { TraceRepository } from '../agent/trace.repository.js';
import { mapApproval } from '../approvals/approval-view.js';
import { ApprovalsService } from '../approvals/approvals.service.js';
import { decodeCursor, encodeCursor } from '../common/cursor.js';
import { AppConfig } from '../config/app-config.js';
import { ConversationIntake } from '../conversation/conversation-intake.js';
import { agentRunLimits, validateAgentRun } from '../tools/argument-validation.js';
import type { Caller } from '../identity/caller.js';
import { TaskQueueService } from '../queue/task-queue.service.js';
import { TaskReadModels, type ListedTask } from '../queue/task-read-model.js';
import type { TaskFilters } from '../queue/tasks.repository.js';
import { SessionsService } from '../sessions/sessions.service.js';
import type { TaskListQueryDto } from './admin.dto.js';
import type { AdminTaskDetailDto, AdminTaskDto, ListedTaskDto, SessionDetailDto, TaskPageDto } from './admin-responses.dto.js';
import { mapListedTask, mapSession, mapStep, mapTask } from './admin-views.js';
import { deliverablesOf } from './task-deliverables.js';

/**
 * The console's views of Tasks and sessions: pages with cursors, queue positions, traces, approvals
 * and deliverables. An admin sees everyone's; any other user only their own (another's answers as missing).
 */
@Injectable()
export class AdminTasksService {
  constructor(
    private readonly queue: TaskQueueService,
    private readonly trace: TraceRepository,
    private readonly sessions: SessionsService,
    private readonly approvals: ApprovalsService,
    private readonly readModels: TaskReadModels,
    private readonly intake: ConversationIntake,
    private readonly config: AppConfig,
  ) {}

  /** One page, newest first; one Task more than the page is read to know whether another page follows. */
  async list(caller: Caller, query: TaskListQueryDto): Promise<TaskPageDto> {
    const limit = query.limit ?? 100;
    const tasks = await this.queue.list(filtersOf(caller, query), limit + 1, query.cursor ? decodeCursor(query.cursor) : null);
    const page = tasks.slice(0, limit);
    return { items: await this.listed(page), next_cursor: tasks.length > limit ? encodeCursor(page[page.length - 1].seq) : null };
  }

  /** One Task whole: everything the console's Task page shows but the session's files and the diff. */
  async get(caller: Caller, id: string): Promise<AdminTaskDetailDto | null> {
    const task = await this.visible(caller, id);
    if (!task) return null;
    const [positions, trace, asked, { files }] = await Promise.all([
      this.queue.queuePositions([task]),
      this.trace.forTask(id),
      this.approvals.ofTask(id),
      this.readModels.withFiles(task),
    ]);
    const approvals = asked.map(mapApproval);
    const pending = approvals.filter((approval) => approval.state === 'pending');
    return {
      ...mapTask(task, positions.get(task.id) ?? null),
      awaiting_approval: pending.length > 0,
      pending_approvals: pending,
      approvals,
      deliverables: deliverablesOf(task.sessionId, files),
      trace: trace.map(mapStep),
    };
  }

  /** An admin cancels any Task (recorded as the actor); a user only their own. */
  async cancel(caller: Caller, id: string): Promise<AdminTaskDto | null> {
    const task = caller.admin ? await this.queue.cancelAny(caller, id) : await this.queue.cancel(caller, id);
    return task && mapTask(task);
  }

  /**
   * Issue 35: a correction for a running Task, or kept for a Task paused for a person (an admin: any; a
   * user: their own); null when the caller cannot see it.
   */
  async steer(caller: Caller, id: string, text: string | undefined): Promise<AdminTaskDto | null> {
    if (!(await this.visible(caller, id))) return null;
    const { request } = validateAgentRun({ request: text ?? '' }, agentRunLimits(this.config));
    const outcome = await this.intake.steerFromConsole(caller, id, request);
    return outcome.kind === 'steered' || outcome.kind === 'kept' ? mapTask(outcome.task) : null;
  }

  /** A session with its Tasks, oldest first. */
  async session(caller: Caller, id: string): Promise<SessionDetailDto | null> {
    const session = await this.sessions.find(id);
    if (!session || (!caller.admin && session.owner !== caller.user)) return null;
    const tasks = await this.queue.list({ sessionId: id }, 1000, null);
    return { ...mapSession(session), tasks: await this.listed(tasks.reverse()) };
  }

  private async visible(caller: Caller, id: string): Promise<ListedTask | null> {
    const task = await this.queue.find(id);
    return task && (caller.admin || task.owner === caller.user) ? task : null;
  }

  private async listed(tasks: ListedTask[]): Promise<ListedTaskDto[]> {
    const [positions, awaiting] = await Promise.all([this.queue.queuePositions(tasks), this.queue.awaitingApproval(tasks)]);
    return tasks.map((task) => ({ ...mapListedTask(task, positions.get(task.id) ?? null), awaiting_approval: awaiting.has(task.id) }));
  }
}

/** The query as queue filters; a user's own view is always narrowed to their Tasks. */
function filtersOf(caller: Caller, query: TaskListQueryDto): TaskFilters {
  const { status } = query;
  const awaitingApproval = status === 'awaiting_approval';
  return {
    status: status === 'awaiting_approval' ? undefined : status,
    awaitingApproval,
    owner: caller.admin ? query.owner : caller.user,
    sessionId: query.session_id,
    text: query.q?.trim() || undefined,
    createdFrom: query.from ? new Date(query.from).toISOString() : undefined,
    createdBefore: query.to ? new Date(query.to).toISOString() : undefined,
    surface: query.surface,
  };
}
