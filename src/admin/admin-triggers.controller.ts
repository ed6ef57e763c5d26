import { Body, Delete, Get, Param, Patch, Post, Query, Req } from '@nestjs/common';
import { ApiBody, ApiCreatedResponse, ApiOkResponse, ApiOperation } from '@nestjs/swagger';
import { TriggersService } from '../triggers/triggers.service.js';
import { AdminAction, OwnView, type AdminRequest } from './admin-auth.guard.js';
import { DeletedDto, RunPageQueryDto, TriggerCreateDto, TriggerCreatedDto, TriggerDto, TriggerListDto, TriggerPatchDto, TriggerRunListDto } from './admin-automation.dto.js';
import { UuidParamDto } from './admin.dto.js';
import { AdminRoutes, ApiAdminErrors, INVALID } from './admin-routes.decorator.js';
import { runPage, triggerRunView, triggerView } from './automation-views.js';
import { found } from './found.js';

const MISSING: [number, string] = [404, 'No trigger of the caller’s with this id (another user’s answers the same)'];
const BAD_BODY: [number, string] = [400, 'A field is invalid (which one, in `message`); nothing is changed'];

/** Issue 38: triggers, for every signed-in user (their own) and admins (all). */
@AdminRoutes('admin/triggers', 'triggers')
export class AdminTriggersController {
  constructor(private readonly triggers: TriggersService) {}

  @Post()
  @OwnView()
  @AdminAction('trigger.create')
  @ApiOperation({ summary: 'Make a trigger of the caller’s; deliveries to its path start Tasks as the caller. The answer holds the secret, this once' })
  @ApiBody({ type: TriggerCreateDto })
  @ApiCreatedResponse({ type: TriggerCreatedDto })
  @ApiAdminErrors(BAD_BODY, [413, 'The body is larger than 64 KiB'])
  async create(@Body() body: TriggerCreateDto, @Req() req: AdminRequest): Promise<TriggerCreatedDto> {
    const trigger = await this.triggers.create(req.caller!, { ...body, notifyUrl: body.notify_url });
    return { ...triggerView(trigger), secret: trigger.secret, notify_secret: trigger.notifySecret };
  }

  @Get()
  @OwnView()
  @AdminAction('trigger.list')
  @ApiOperation({ summary: 'The caller’s triggers (an admin: everyone’s), oldest first' })
  @ApiOkResponse({ type: TriggerListDto })
  async list(@Req() req: AdminRequest): Promise<TriggerListDto> {
    return { triggers: (await this.triggers.list(req.caller!)).map(triggerView) };
  }

  @Get(':id')
  @OwnView()
  @AdminAction('trigger.read')
  @ApiOperation({ summary: 'One trigger (never its secret)' })
  @ApiOkResponse({ type: TriggerDto })
  @ApiAdminErrors(INVALID, MISSING)
  async read(@Param() { id }: UuidParamDto, @Req() req: AdminRequest): Promise<TriggerDto> {
    return triggerView(found(await this.triggers.find(req.caller!, id), `no trigger ${id}`));
  }

  @Patch(':id')
  @OwnView()
  @AdminAction('trigger.update')
  @ApiOperation({ summary: 'Change a trigger (`enabled: false`: deliveries answer 404)' })
  @ApiBody({ type: TriggerPatchDto })
  @ApiOkResponse({ type: TriggerDto })
  @ApiAdminErrors(BAD_BODY, MISSING)
  async update(@Param() { id }: UuidParamDto, @Body() body: TriggerPatchDto, @Req() req: AdminRequest): Promise<TriggerDto> {
    return triggerView(found(await this.triggers.update(req.caller!, id, body), `no trigger ${id}`));
  }

  @Delete(':id')
  @OwnView()
  @AdminAction('trigger.delete')
  @ApiOperation({ summary: 'Delete a trigger and its delivery history (its Tasks stay)' })
  @ApiOkResponse({ type: DeletedDto })
  @ApiAdminErrors(INVALID, MISSING)
  async remove(@Param() { id }: UuidParamDto, @Req() req: AdminRequest): Promise<DeletedDto> {
    if (!(await this.triggers.remove(req.caller!, id))) found(null, `no trigger ${id}`);
    return { deleted: true };
  }

  @Get(':id/runs')
  @OwnView()
  @AdminAction('trigger.runs')
  @ApiOperation({ summary: 'A trigger’s deliveries, newest first: delivery id, event, Task, its status and first line' })
  @ApiOkResponse({ type: TriggerRunListDto })
  @ApiAdminErrors(INVALID, MISSING)
  async runs(@Param() { id }: UuidParamDto, @Query() query: RunPageQueryDto, @Req() req: AdminRequest): Promise<TriggerRunListDto> {
    const limit = query.limit ?? 50;
    const runs = found(await this.triggers.runs(req.caller!, id, limit, query.before ?? null), `no trigger ${id}`);
    return runPage(runs, limit, triggerRunView, (run) => run.createdAt);
  }
}
