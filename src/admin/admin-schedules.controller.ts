import { Body, Delete, Get, HttpCode, Param, Patch, Post, Query, Req } from '@nestjs/common';
import { ApiBody, ApiCreatedResponse, ApiOkResponse, ApiOperation } from '@nestjs/swagger';
import { SchedulesService } from '../schedules/schedules.service.js';
import { AdminAction, OwnView, type AdminRequest } from './admin-auth.guard.js';
import {
  DeletedDto,
  RunPageQueryDto,
  ScheduleCreateDto,
  ScheduleCreatedDto,
  ScheduleDto,
  ScheduleListDto,
  SchedulePatchDto,
  ScheduleRunDto,
  ScheduleRunListDto,
} from './admin-automation.dto.js';
import { UuidParamDto } from './admin.dto.js';
import { AdminRoutes, ApiAdminErrors, INVALID } from './admin-routes.decorator.js';
import { runPage, scheduleRunView, scheduleView } from './automation-views.js';
import { found } from './found.js';

const MISSING: [number, string] = [404, 'No schedule of the caller’s with this id (another user’s answers the same)'];
const BAD_BODY: [number, string] = [400, 'A field is invalid (which one, in `message`: a bad cron expression or time zone names `cron` or `timezone`); nothing is changed'];

/** Issue 38: schedules, for every signed-in user (their own) and admins (all). */
@AdminRoutes('admin/schedules', 'schedules')
export class AdminSchedulesController {
  constructor(private readonly schedules: SchedulesService) {}

  @Post()
  @OwnView()
  @AdminAction('schedule.create')
  @ApiOperation({ summary: 'Make a schedule of the caller’s; its Tasks run as the caller. The answer holds the notify secret, this once' })
  @ApiBody({ type: ScheduleCreateDto })
  @ApiCreatedResponse({ type: ScheduleCreatedDto })
  @ApiAdminErrors(BAD_BODY, [413, 'The body is larger than 64 KiB'])
  async create(@Body() body: ScheduleCreateDto, @Req() req: AdminRequest): Promise<ScheduleCreatedDto> {
    const { schedule, notifySecret } = await this.schedules.create(req.caller!, { ...body, catchUp: body.catch_up, notifyUrl: body.notify_url });
    return { ...scheduleView(schedule), notify_secret: notifySecret };
  }

  @Get()
  @OwnView()
  @AdminAction('schedule.list')
  @ApiOperation({ summary: 'The caller’s schedules (an admin: everyone’s), oldest first' })
  @ApiOkResponse({ type: ScheduleListDto })
  async list(@Req() req: AdminRequest): Promise<ScheduleListDto> {
    return { schedules: (await this.schedules.list(req.caller!)).map(scheduleView) };
  }

  @Get(':id')
  @OwnView()
  @AdminAction('schedule.read')
  @ApiOperation({ summary: 'One schedule' })
  @ApiOkResponse({ type: ScheduleDto })
  @ApiAdminErrors(INVALID, MISSING)
  async read(@Param() { id }: UuidParamDto, @Req() req: AdminRequest): Promise<ScheduleDto> {
    return scheduleView(found(await this.schedules.find(req.caller!, id), `no schedule ${id}`));
  }

  @Patch(':id')
  @OwnView()
  @AdminAction('schedule.update')
  @ApiOperation({ summary: 'Change a schedule: `enabled: false` pauses it, `true` resumes it (from now on; fires missed while paused are not run)' })
  @ApiBody({ type: SchedulePatchDto })
  @ApiOkResponse({ type: ScheduleDto })
  @ApiAdminErrors(BAD_BODY, MISSING)
  async update(@Param() { id }: UuidParamDto, @Body() body: SchedulePatchDto, @Req() req: AdminRequest): Promise<ScheduleDto> {
    return scheduleView(found(await this.schedules.update(req.caller!, id, { ...body, catchUp: body.catch_up }), `no schedule ${id}`));
  }

  @Delete(':id')
  @OwnView()
  @AdminAction('schedule.delete')
  @ApiOperation({ summary: 'Delete a schedule and its run history (its Tasks stay)' })
  @ApiOkResponse({ type: DeletedDto })
  @ApiAdminErrors(INVALID, MISSING)
  async remove(@Param() { id }: UuidParamDto, @Req() req: AdminRequest): Promise<DeletedDto> {
    if (!(await this.schedules.remove(req.caller!, id))) found(null, `no schedule ${id}`);
    return { deleted: true };
  }

  @Post(':id/run')
  @HttpCode(200)
  @OwnView()
  @AdminAction('schedule.run_now')
  @ApiOperation({ summary: 'Run now: one fire at this moment (skipped, like any fire, while the schedule’s last Task is queued or running)' })
  @ApiOkResponse({ type: ScheduleRunDto })
  @ApiAdminErrors(INVALID, MISSING)
  async runNow(@Param() { id }: UuidParamDto, @Req() req: AdminRequest): Promise<ScheduleRunDto> {
    return scheduleRunView(found(await this.schedules.runNow(req.caller!, id), `no schedule ${id}`));
  }

  @Get(':id/runs')
  @OwnView()
  @AdminAction('schedule.runs')
  @ApiOperation({ summary: 'A schedule’s runs, newest first: fire time, Task, its status and first line, skipped or not' })
  @ApiOkResponse({ type: ScheduleRunListDto })
  @ApiAdminErrors(INVALID, MISSING)
  async runs(@Param() { id }: UuidParamDto, @Query() query: RunPageQueryDto, @Req() req: AdminRequest): Promise<ScheduleRunListDto> {
    const limit = query.limit ?? 50;
    const runs = found(await this.schedules.runs(req.caller!, id, limit, query.before ?? null), `no schedule ${id}`);
    return runPage(runs, limit, scheduleRunView, (run) => run.fireAt);
  }
}
