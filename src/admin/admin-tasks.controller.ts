import { Get, HttpCode, NotFoundException, Param, Post, Query, Req } from '@nestjs/common';
import { ApiOperation } from '@nestjs/swagger';
import { mapApproval } from '../approvals/approval-view.js';
import { ApprovalsService } from '../approvals/approvals.service.js';
import { TraceRepository } from '../agent/trace.repository.js';
import { decodeCursor, encodeCursor } from '../common/cursor.js';
import { TaskQueueService } from '../queue/task-queue.service.js';
import { SessionsService } from '../sessions/sessions.service.js';
import { AdminAction, type AdminRequest } from './admin-auth.guard.js';
import { TaskListQueryDto, UuidParamDto } from './admin.dto.js';
import { mapListedTask, mapSession, mapStep, mapTask } from './admin-views.js';
import { AdminRoutes } from './admin-routes.decorator.js';

@AdminRoutes('admin', 'tasks')
export class AdminTasksController {
  constructor(
    private readonly queue: TaskQueueService,
    private readonly trace: TraceRepository,
    private readonly sessions: SessionsService,
    private readonly approvals: ApprovalsService,
  ) {}

  @Get('tasks')
  @AdminAction('admin.task_list')
  @ApiOperation({ summary: 'List Tasks (filters AND-ed), newest first, with an opaque cursor' })
  async list(@Query() query: TaskListQueryDto) {
    const limit = query.limit ?? 100;
    const tasks = await this.queue.list({ status: query.status, owner: query.owner, sessionId: query.session_id }, limit + 1, query.cursor ? decodeCursor(query.cursor) : null);
    const page = tasks.slice(0, limit);
    const positions = await this.queue.queuePositions(page);
    return { items: page.map((task) => mapListedTask(task, positions.get(task.id) ?? null)), next_cursor: tasks.length > limit ? encodeCursor(page[page.length - 1].seq) : null };
  }

  @Get('tasks/:id')
  @AdminAction('admin.task_read')
  @ApiOperation({ summary: 'One Task with its execution trace' })
  async get(@Param() { id }: UuidParamDto) {
    const task = await this.queue.find(id);
    if (!task) throw new NotFoundException(`no task ${id}`);
    const positions = await this.queue.queuePositions([task]);
    const [trace, pending] = await Promise.all([this.trace.forTask(id), this.approvals.pendingOfTask(id)]);
    return { ...mapTask(task, positions.get(task.id) ?? null), pending_approvals: pending.map(mapApproval), trace: trace.map(mapStep) };
  }

  @Post('tasks/:id/cancel')
  @HttpCode(200)
  @AdminAction('admin.task_cancel')
  @ApiOperation({ summary: 'Cancel a Task: a queued one at once, a running one through its cancellation token' })
  async cancel(@Param() { id }: UuidParamDto, @Req() req: AdminRequest) {
    const task = await this.queue.cancelAny(req.caller!, id);
    if (!task) throw new NotFoundException(`no task ${id}`);
    return mapTask(task);
  }

  @Get('sessions/:id')
  @AdminAction('admin.session_read')
  @ApiOperation({ summary: 'One session with its Tasks' })
  async session(@Param() { id }: UuidParamDto) {
    const session = await this.sessions.find(id);
    if (!session) throw new NotFoundException(`no session ${id}`);
    const tasks = await this.queue.list({ sessionId: id }, 1000, null);
    const positions = await this.queue.queuePositions(tasks);
    return { ...mapSession(session), tasks: tasks.reverse().map((task) => mapListedTask(task, positions.get(task.id) ?? null)) };
  }
}
