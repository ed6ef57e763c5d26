import { Get, HttpCode, Param, Post, Query, Req } from '@nestjs/common';
import { ApiOperation } from '@nestjs/swagger';
import { AdminAction, OwnView, type AdminRequest } from './admin-auth.guard.js';
import { TaskListQueryDto, UsageQueryDto, UuidParamDto } from './admin.dto.js';
import { AdminRoutes } from './admin-routes.decorator.js';
import { AdminTasksService } from './admin-tasks.service.js';
import { found } from './found.js';

@AdminRoutes('admin', 'tasks')
export class AdminTasksController {
  constructor(private readonly tasks: AdminTasksService) {}

  @Get('tasks')
  @OwnView()
  @AdminAction('admin.task_list')
  @ApiOperation({ summary: 'List Tasks (filters AND-ed), newest first, with an opaque cursor; a user who is not an admin sees their own' })
  async list(@Query() query: TaskListQueryDto, @Req() req: AdminRequest) {
    return this.tasks.list(req.caller!, query);
  }

  @Get('tasks/:id')
  @OwnView()
  @AdminAction('admin.task_read')
  @ApiOperation({ summary: 'One Task with its execution trace (a user: their own)' })
  async get(@Param() { id }: UuidParamDto, @Req() req: AdminRequest) {
    return found(await this.tasks.get(req.caller!, id), `no task ${id}`);
  }

  @Post('tasks/:id/cancel')
  @HttpCode(200)
  @OwnView()
  @AdminAction('admin.task_cancel')
  @ApiOperation({ summary: 'Cancel a Task: a queued one at once, a running one through its cancellation token (a user: their own)' })
  async cancel(@Param() { id }: UuidParamDto, @Req() req: AdminRequest) {
    return found(await this.tasks.cancel(req.caller!, id), `no task ${id}`);
  }

  @Get('sessions/:id')
  @OwnView()
  @AdminAction('admin.session_read')
  @ApiOperation({ summary: 'One session with its Tasks (a user: their own)' })
  async session(@Param() { id }: UuidParamDto, @Req() req: AdminRequest) {
    return found(await this.tasks.session(req.caller!, id), `no session ${id}`);
  }

  @Get('usage')
  @AdminAction('admin.usage_read')
  @ApiOperation({ summary: 'Tokens per user over all their Tasks, most first' })
  async usage(@Query() query: UsageQueryDto) {
    return this.tasks.usage(query.limit ?? 100);
  }
}
