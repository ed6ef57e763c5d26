import { Get, HttpCode, Param, Post, Query, Req } from '@nestjs/common';
import { ApiOkResponse, ApiOperation } from '@nestjs/swagger';
import { AdminAction, OwnView, type AdminRequest } from './admin-auth.guard.js';
import { SteerQueryDto, TaskListQueryDto, UuidParamDto } from './admin.dto.js';
import { AdminTaskDetailDto, AdminTaskDto, SessionDetailDto, TaskPageDto } from './admin-responses.dto.js';
import { AdminRoutes, ApiAdminErrors, INVALID } from './admin-routes.decorator.js';
import { AdminTasksService } from './admin-tasks.service.js';
import { found } from './found.js';

@AdminRoutes('admin', 'tasks')
export class AdminTasksController {
  constructor(private readonly tasks: AdminTasksService) {}

  @Get('tasks')
  @OwnView()
  @AdminAction('admin.task_list')
  @ApiOperation({ summary: 'List Tasks (filters AND-ed), newest first, with an opaque cursor; a user who is not an admin sees their own' })
  @ApiOkResponse({ type: TaskPageDto })
  @ApiAdminErrors(INVALID)
  async list(@Query() query: TaskListQueryDto, @Req() req: AdminRequest) {
    return this.tasks.list(req.caller!, query);
  }

  @Get('tasks/:id')
  @OwnView()
  @AdminAction('admin.task_read')
  @ApiOperation({ summary: 'One Task with its execution trace, its approvals and questions (answered or not) and the files it created or changed (a user: their own)' })
  @ApiOkResponse({ type: AdminTaskDetailDto })
  @ApiAdminErrors(INVALID, [404, 'No such Task (or another user’s)'])
  async get(@Param() { id }: UuidParamDto, @Req() req: AdminRequest) {
    return found(await this.tasks.get(req.caller!, id), `no task ${id}`);
  }

  @Post('tasks/:id/cancel')
  @HttpCode(200)
  @OwnView()
  @AdminAction('admin.task_cancel')
  @ApiOperation({ summary: 'Cancel a Task: a queued one at once, a running one through its cancellation token (a user: their own)' })
  @ApiOkResponse({ type: AdminTaskDto, description: 'The Task as it is after the request' })
  @ApiAdminErrors(INVALID, [404, 'No such Task (or another user’s)'])
  async cancel(@Param() { id }: UuidParamDto, @Req() req: AdminRequest) {
    return found(await this.tasks.cancel(req.caller!, id), `no task ${id}`);
  }

  @Post('tasks/:id/steer')
  @HttpCode(200)
  @OwnView()
  @AdminAction('admin.task_steer')
  @ApiOperation({
    summary:
      "Steer a running Task: the text reaches the model as the person's words at its next step boundary; a Task paused for a person keeps it, and the model reads it when the wait ends (an admin: any Task; a user: their own)",
  })
  @ApiOkResponse({ type: AdminTaskDto, description: 'The Task after it took (or kept) the correction' })
  @ApiAdminErrors(INVALID, [404, 'No such Task (or another user’s)'])
  async steer(@Param() { id }: UuidParamDto, @Query() { text }: SteerQueryDto, @Req() req: AdminRequest) {
    return found(await this.tasks.steer(req.caller!, id, text), `no task ${id}`);
  }

  @Get('sessions/:id')
  @OwnView()
  @AdminAction('admin.session_read')
  @ApiOperation({ summary: 'One session with its Tasks (a user: their own)' })
  @ApiOkResponse({ type: SessionDetailDto })
  @ApiAdminErrors(INVALID, [404, 'No such session (or another user’s)'])
  async session(@Param() { id }: UuidParamDto, @Req() req: AdminRequest) {
    return found(await this.tasks.session(req.caller!, id), `no session ${id}`);
  }
}
