import { Get, Header, HttpCode, Param, Post, Query, Req } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiProduces, ApiResponse } from '@nestjs/swagger';
import { AgentError } from '../common/agent-error.js';
import { HistoryService } from '../history/history.service.js';
import { taskDiffUri } from '../history/history-uri.js';
import { SessionFork } from '../queue/session-fork.js';
import { TaskQueueService } from '../queue/task-queue.service.js';
import { AdminAction, OwnView, type AdminRequest } from './admin-auth.guard.js';
import { UuidParamDto } from './admin.dto.js';
import { ForkBodyDto, UndoBodyDto } from './admin-history.dto.js';
import { ForkDto, SessionHistoryDto, UndoQueuedDto } from './admin-responses.dto.js';
import { AdminRoutes, ApiAdminErrors, INVALID } from './admin-routes.decorator.js';

/**
 * Workspace history (issue 24): a Task's diff (an admin: any Task's; a user: their own, for the console's
 * Task page) and a session's checkpoints (admins), and undo and fork, which act for the caller on the
 * caller's own sessions only.
 */
@AdminRoutes('admin', 'sessions')
export class AdminHistoryController {
  constructor(
    private readonly history: HistoryService,
    private readonly queue: TaskQueueService,
    private readonly forks: SessionFork,
  ) {}

  @Get('tasks/:id/diff')
  @OwnView()
  @AdminAction('admin.task_diff')
  @Header('Content-Type', 'text/x-diff; charset=utf-8')
  @ApiProduces('text/x-diff')
  @ApiOkResponse({ schema: { type: 'string' }, description: 'The unified diff (`#` lines first say what it covers)' })
  @ApiAdminErrors(INVALID, [404, 'No such Task (or another user’s)'])
  @ApiOperation({ summary: "A Task's workspace changes as a unified diff (the same text as its agent-session://…/diff resource; a user: their own)" })
  async diff(@Param() { id }: UuidParamDto, @Req() req: AdminRequest) {
    const task = await this.queue.find(id.toLowerCase());
    // Another user's Task answers as a missing one, as on every own view.
    if (!task || (!req.caller!.admin && task.owner !== req.caller!.user)) throw new AgentError('resource_not_found', `no task ${id}`);
    return (await this.history.diff(task.sessionId, task.id)).text;
  }

  @Get('sessions/:id/history')
  @AdminAction('admin.session_history')
  @ApiOperation({ summary: "A session's checkpoints: each Task's start and end, undo links and diff URIs, oldest first" })
  @ApiOkResponse({ type: SessionHistoryDto })
  @ApiAdminErrors(INVALID, [404, 'No such session'])
  async timeline(@Param() { id }: UuidParamDto): Promise<SessionHistoryDto> {
    await this.history.assertExists(id.toLowerCase());
    const tasks = await this.history.timeline(id.toLowerCase());
    return {
      shared_root: this.history.shared,
      tasks: tasks.map((task) => ({
        task_id: task.taskId,
        before: task.before ? { seq: task.before.seq, commit: task.before.commit } : null,
        after: task.after ? { seq: task.after.seq, commit: task.after.commit } : null,
        undo_of: task.undoOf,
        diff: taskDiffUri(task.sessionId, task.taskId),
      })),
    };
  }

  @Post('sessions/:id/undo')
  @HttpCode(202)
  @OwnView()
  @AdminAction('admin.session_undo')
  @ApiOperation({ summary: 'Queue an undo Task for one of your sessions (the last Task, or ?task_id=); 400 with the files when it would be refused' })
  @ApiResponse({ status: 202, type: UndoQueuedDto, description: 'The undo Task, queued' })
  @ApiAdminErrors([400, 'An invalid parameter, or an undo that would be refused (the reason, with the files, in `message`)'], [404, 'No such session of the caller’s'])
  async undo(@Param() { id }: UuidParamDto, @Query() body: UndoBodyDto, @Req() req: AdminRequest): Promise<UndoQueuedDto> {
    const caller = req.caller!;
    const sessionId = id.toLowerCase();
    await this.history.assertOwned(caller.user, sessionId);
    const plan = await this.history.checkUndo(sessionId, body.task_id?.toLowerCase() ?? null);
    const request = body.task_id ? `undo ${body.task_id.toLowerCase()}` : 'undo';
    const task = await this.queue.enqueue(
      caller,
      { request, sessionId, temperature: null, images: [] },
      { action: 'agent_run', detail: { surface: 'admin', undo_of: plan.target } },
    );
    return { task_id: task.id, session_id: sessionId, status: task.status, undo_of: plan.target, paths: plan.paths };
  }

  @Post('sessions/:id/fork')
  @HttpCode(201)
  @OwnView()
  @AdminAction('admin.session_fork')
  @ApiOperation({ summary: 'Fork one of your sessions at a Task (?task_id=): a new session of yours with its conversation and workspace as that Task left them' })
  @ApiResponse({ status: 201, type: ForkDto, description: 'The new session' })
  @ApiAdminErrors([400, 'task_id is missing or invalid, not a Task of this session, or forking is off (workspace.isolation: shared)'], [404, 'No such session of the caller’s'])
  async fork(@Param() { id }: UuidParamDto, @Query() body: ForkBodyDto, @Req() req: AdminRequest): Promise<ForkDto> {
    const caller = req.caller!;
    await this.history.assertOwned(caller.user, id.toLowerCase());
    if (!body.task_id) throw new AgentError('invalid_input', 'task_id: required (the Task to fork from).');
    const forked = await this.forks.fork(caller, body.task_id.toLowerCase(), id.toLowerCase());
    return { session_id: forked.sessionId, forked_from: { session_id: forked.sourceSessionId, task_id: body.task_id.toLowerCase() }, not_restorable: forked.notRestorable };
  }
}
