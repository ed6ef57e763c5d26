import { Controller, Get, HttpStatus, Res } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import { readinessBody, ReadinessService } from './readiness.service.js';

/**
 * Probes for load balancers and orchestrators, open to anyone who reaches the port: they say whether
 * the service is ready and which dependency is not, never why (URLs, hosts, model names); the reasons
 * go to the log and to admins (`GET /admin/readyz`).
 */
@ApiTags('health')
@Controller()
export class HealthController {
  constructor(private readonly readiness: ReadinessService) {}

  @Get('healthz')
  @ApiOperation({ summary: 'Liveness: the process answers' })
  alive() {
    return { status: 'ok' };
  }

  @Get('readyz')
  @ApiOperation({ summary: 'Readiness: database reachable, Ollama reachable with the configured model (each ok or unavailable)' })
  async ready(@Res({ passthrough: true }) res: Response) {
    const readiness = await this.readiness.check();
    res.status(readiness.ready ? HttpStatus.OK : HttpStatus.SERVICE_UNAVAILABLE);
    return readinessBody(readiness, false);
  }
}
