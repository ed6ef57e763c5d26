import { Get, Res } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiProduces } from '@nestjs/swagger';
import type { Response } from 'express';
import { Metrics } from '../metrics/metrics.js';
import { TaskQueueService } from '../queue/task-queue.service.js';
import { AdminAction } from './admin-auth.guard.js';
import { AdminRoutes } from './admin-routes.decorator.js';

/**
 * Prometheus metrics for admins (a scraper uses the admin token, or comes through the proxy as an
 * admin). Refusals are audited by the guard; successful scrapes are not, or every scrape interval
 * would add an event to the log.
 */
@AdminRoutes('admin/metrics', 'metrics', { audited: false })
export class AdminMetricsController {
  constructor(
    private readonly metrics: Metrics,
    private readonly queue: TaskQueueService,
  ) {}

  @Get()
  @AdminAction('admin.metrics_read')
  @ApiOperation({ summary: 'Prometheus text format: process metrics, audit write failures, Tasks by status' })
  @ApiProduces('text/plain')
  @ApiOkResponse({ description: 'Prometheus exposition format 0.0.4' })
  async scrape(@Res() res: Response): Promise<void> {
    for (const [status, count] of Object.entries(await this.queue.countByStatus())) this.metrics.tasks.set({ status }, count);
    res.type(this.metrics.registry.contentType).send(await this.metrics.registry.metrics());
  }
}
