import { Get, Res } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiProduces } from '@nestjs/swagger';
import type { Response } from 'express';
import { AdminAction } from './admin-auth.guard.js';
import { AdminMetricsService } from './admin-metrics.service.js';
import { AdminRoutes } from './admin-routes.decorator.js';

/**
 * Prometheus metrics for admins (a scraper uses the admin token, or comes through the proxy as an
 * admin). Refusals are audited by the guard; successful scrapes are not, or every scrape interval
 * would add an event to the log.
 */
@AdminRoutes('admin/metrics', 'metrics', { audited: false })
export class AdminMetricsController {
  constructor(private readonly metrics: AdminMetricsService) {}

  @Get()
  @AdminAction('admin.metrics_read')
  @ApiOperation({ summary: 'Prometheus text format: process metrics, audit write failures, Tasks by status' })
  @ApiProduces('text/plain')
  @ApiOkResponse({ schema: { type: 'string' }, description: 'Prometheus exposition format 0.0.4' })
  async scrape(@Res() res: Response): Promise<void> {
    const { contentType, text } = await this.metrics.scrape();
    res.type(contentType).send(text);
  }
}
