import { Get, HttpCode, Param, Post, Query, Req } from '@nestjs/common';
import { ApiOperation } from '@nestjs/swagger';
import { AdminAction, type AdminRequest } from './admin-auth.guard.js';
import { TaskListQueryDto, UuidParamDto } from './admin.dto.js';
import { AdminRoutes } from './admin-routes.decorator.js';
import { AdminTasksService } from './admin-tasks.service.js';
import { found } from './found.js';

@AdminRoutes('admin', 'tasks')
export class AdminTasksController {
  constructor(private readonly tasks: AdminTasksService) {}

  @Get('tasks')
  @AdminAction('admin.task_list')
  @ApiOperation({ summary: 'List Tasks (filters AND-ed), newest first, with an opaque cursor' })
  async list(@Query() query: TaskListQueryDto) {
    return this.tasks.list(query);
  }

  @Get('tasks/:id')
  @AdminAction('admin.task_read')
  @ApiOperation({ summary: 'One Task with its execution trace' })
  async get(@Param() { id }: UuidParamDto) {
    return found(await this.tasks.get(id), `no task ${id}`);
  }

  @Post('tasks/:id/cancel')
  @HttpCode(200)
  @AdminAction('admin.task_cancel')
  @ApiOperation({ summary: 'Cancel a Task: a queued one at once, a running one through its cancellation token' })
  async cancel(@Param() { id }: UuidParamDto, @Req() req: AdminRequest) {
    return found(await this.tasks.cancel(req.caller!, id), `no task ${id}`);
  }

  @Get('sessions/:id')
  @AdminAction('admin.session_read')
  @ApiOperation({ summary: 'One session with its Tasks' })
  async session(@Param() { id }: UuidParamDto) {
    return found(await this.tasks.session(id), `no session ${id}`);
  }
}
