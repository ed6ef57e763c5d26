import { Get, HttpStatus, Res } from '@nestjs/common';
import { ApiOperation } from '@nestjs/swagger';
import type { Response } from 'express';
import { readinessBody, ReadinessService } from '../health/readiness.service.js';
import { AdminAction } from './admin-auth.guard.js';
import { AdminRoutes } from './admin-routes.decorator.js';

/** Readiness with its reasons, for admins: what `/readyz` keeps from anonymous callers. */
@AdminRoutes('admin/readyz', 'health', { audited: false })
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
