import { Controller, Get, HttpStatus, Res, UseGuards } from '@nestjs/common';
import { ApiOperation, ApiSecurity, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import { readinessBody, ReadinessService } from '../health/readiness.service.js';
import { AdminAction, AdminAuthGuard } from './admin-auth.guard.js';

/** Readiness with its reasons, for admins: what `/readyz` keeps from anonymous callers. */
@ApiTags('health')
@ApiSecurity('admin')
@UseGuards(AdminAuthGuard)
@Controller('admin/readyz')
export class AdminHealthController {
  constructor(private readonly readiness: ReadinessService) {}

  @Get()
  @AdminAction('admin.readiness_read')
  @ApiOperation({ summary: 'Readiness with the reason of each failing check (credentials never shown)' })
  async ready(@Res({ passthrough: true }) res: Response) {
    const readiness = await this.readiness.check();
    res.status(readiness.ready ? HttpStatus.OK : HttpStatus.SERVICE_UNAVAILABLE);
    return readinessBody(readiness, true);
  }
}
