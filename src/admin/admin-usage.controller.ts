import { Get, Query, Req, Res } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiProduces } from '@nestjs/swagger';
import type { Response } from 'express';
import { AdminAction, OwnView, type AdminRequest } from './admin-auth.guard.js';
import { UsageQueryDto, UsageReportDto } from './admin-usage.dto.js';
import { AdminUsageService } from './admin-usage.service.js';
import { AdminRoutes, ApiAdminErrors, INVALID } from './admin-routes.decorator.js';

@AdminRoutes('admin/usage', 'usage')
export class AdminUsageController {
  constructor(private readonly usage: AdminUsageService) {}

  @Get()
  @OwnView()
  @AdminAction('admin.usage_read')
  @ApiOperation({
    summary: 'Usage per user and UTC day: Tasks, model and tool calls, tokens, wall time (admins: everyone or `user`; a user: their own)',
    description: 'Each Task counts on the day it ended. `Accept: text/csv` answers CSV with a header line.',
  })
  @ApiProduces('application/json', 'text/csv')
  @ApiOkResponse({ type: UsageReportDto })
  @ApiAdminErrors(INVALID)
  async report(@Query() query: UsageQueryDto, @Req() req: AdminRequest, @Res({ passthrough: true }) res: Response) {
    const report = await this.usage.report(req.caller!, query);
    if (req.accepts(['application/json', 'text/csv']) !== 'text/csv') return report;
    res.setHeader('Content-Type', 'text/csv; charset=utf-8');
    res.setHeader('Content-Disposition', 'attachment; filename="usage.csv"');
    res.send(this.usage.csv(report));
    return undefined;
  }
}
