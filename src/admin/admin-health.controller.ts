import { Get, HttpStatus, Res } from '@nestjs/common';
import { ApiExtraModels, ApiOkResponse, ApiOperation, ApiResponse } from '@nestjs/swagger';
import type { Response } from 'express';
import { readinessBody, ReadinessService } from '../health/readiness.service.js';
import { AdminAction } from './admin-auth.guard.js';
import { ReadinessCheckDto, ReadinessDto } from './admin-responses.dto.js';
import { AdminRoutes } from './admin-routes.decorator.js';

/** Readiness with its reasons, for admins: what `/readyz` keeps from anonymous callers. */
@AdminRoutes('admin/readyz', 'health', { audited: false })
@ApiExtraModels(ReadinessCheckDto)
export class AdminHealthController {
  constructor(private readonly readiness: ReadinessService) {}

  @Get()
  @AdminAction('admin.readiness_read')
  @ApiOperation({ summary: 'Readiness with the reason of each failing check (credentials never shown)' })
  @ApiOkResponse({ type: ReadinessDto, description: 'Ready' })
  @ApiResponse({ status: 503, type: ReadinessDto, description: 'Not ready: the failing checks say why' })
  async ready(@Res({ passthrough: true }) res: Response) {
    const readiness = await this.readiness.check();
    res.status(readiness.ready ? HttpStatus.OK : HttpStatus.SERVICE_UNAVAILABLE);
    return readinessBody(readiness, true);
  }
}
