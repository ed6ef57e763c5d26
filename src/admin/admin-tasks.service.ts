import { Injectable } from '@nestjs/common';
import { TraceRepository } from '../agent/trace.repository.js';
import { mapApproval } from '../approvals/approval-view.js';
import { ApprovalsService } from '../approvals/approvals.service.js';
import { decodeCursor, encodeCursor } from '../common/cursor.js';
import type { Caller } from '../identity/caller.js';
import { TaskQueueService } from '../queue/task-queue.service.js';
import type { TaskEntity } from '../queue/task.entity.js';
import { SessionsService } from '../sessions/sessions.service.js';
import type { TaskListQueryDto } from './admin.dto.js';
import { mapListedTask, mapSession, mapStep, mapTask } from './admin-views.js';

/** The admin API's views of Tasks and sessions: pages with cursors, queue positions, traces and pending approvals. */
@Injectable()
export class AdminTasksService {
  constructor(
    private readonly queue: TaskQueueService,
    private readonly trace: TraceRepository,
    private readonly sessions: SessionsService,
    private readonly approvals: ApprovalsService,
  ) {}

  /** One page, newest first; one Task more than the page is read to know whether another page follows. */
  async list(query: TaskListQueryDto) {
    const limit = query.limit ?? 100;
    const tasks = await this.queue.list({ status: query.status, owner: query.owner, sessionId: query.session_id }, limit + 1, query.cursor ? decodeCursor(query.cursor) : null);
    const page = tasks.slice(0, limit);
    return { items: await this.listed(page), next_cursor: tasks.length > limit ? encodeCursor(page[page.length - 1].seq) : null };
  }

  async get(id: string) {
    const task = await this.queue.find(id);
    if (!task) return null;
    const positions = await this.queue.queuePositions([task]);
    const [trace, pending] = await Promise.all([this.trace.forTask(id), this.approvals.pendingOfTask(id)]);
    return { ...mapTask(task, positions.get(task.id) ?? null), pending_approvals: pending.map(mapApproval), trace: trace.map(mapStep) };
  }

  async cancel(admin: Caller, id: string) {
    const task = await this.queue.cancelAny(admin, id);
    return task && mapTask(task);
  }

  /** A session with its Tasks, oldest first. */
  async session(id: string) {
    const session = await this.sessions.find(id);
    if (!session) return null;
    const tasks = await this.queue.list({ sessionId: id }, 1000, null);
    return { ...mapSession(session), tasks: await this.listed(tasks.reverse()) };
  }

  private async listed(tasks: TaskEntity[]) {
    const positions = await this.queue.queuePositions(tasks);
    return tasks.map((task) => mapListedTask(task, positions.get(task.id) ?? null));
  }
}
