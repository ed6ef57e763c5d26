import { Injectable } from '@nestjs/common';
import { Metrics } from '../metrics/metrics.js';
import { TaskQueueService } from '../queue/task-queue.service.js';

/** A scrape: the Tasks-by-status gauge is read from the database at scrape time, then the registry is rendered. */
@Injectable()
export class AdminMetricsService {
  constructor(
    private readonly metrics: Metrics,
    private readonly queue: TaskQueueService,
  ) {}

  async scrape(): Promise<{ contentType: string; text: string }> {
    for (const [status, count] of Object.entries(await this.queue.countByStatus())) this.metrics.tasks.set({ status }, count);
    return { contentType: this.metrics.registry.contentType, text: await this.metrics.registry.metrics() };
  }
}
