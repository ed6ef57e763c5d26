import { Injectable, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { Clock, SYSTEM_CLOCK } from '../common/clock.js';
import { AppConfig } from '../config/app-config.js';
import { SYSTEM_CALLER } from '../identity/caller.js';
import { AuditRepository, type PurgedChunk } from './audit.repository.js';
import { AuditService } from './audit.service.js';

const HOUR = 3_600_000;
/** Events deleted per purge transaction. */
const PURGE_CHUNK = 10_000;

/**
 * Retention: events older than `audit.retention_days` are deleted, and the chain anchor moves to the
 * last deleted event, so verification starts there and still passes. The purge is itself audited.
 */
@Injectable()
export class AuditRetention implements OnApplicationBootstrap {
  private readonly logger = new Logger(AuditRetention.name);

  constructor(
    private readonly repository: AuditRepository,
    private readonly audit: AuditService,
    private readonly config: AppConfig,
    private readonly scheduler: SchedulerRegistry,
    private readonly clock: Clock = SYSTEM_CLOCK,
  ) {}

  onApplicationBootstrap(): void {
    if (this.config.audit.retentionDays === 0) return;
    const run = () =>
      void this.purge(new Date(this.clock.now() - this.config.audit.retentionDays * 24 * HOUR)).catch((error) =>
        this.logger.error(`audit purge failed: ${(error as Error).message}`),
      );
    this.scheduler.addInterval('audit-retention', setInterval(run, HOUR));
    run();
  }

  /**
   * Deletes events older than `before`, oldest first, in transactions of at most `chunkSize` events
   * with a turn of the event loop between them: the first purge after retention is enabled may remove
   * millions of events, and one transaction would hold the write lock (and, on SQLite, the event loop)
   * for all of it. The anchor moves with each chunk, so the chain verifies at every step. Returns how
   * many went.
   */
  async purge(before: Date, chunkSize = PURGE_CHUNK): Promise<number> {
    const through = await this.repository.lastSeqBefore(before.toISOString());
    if (through === null) return 0;
    let lastChunk: PurgedChunk | null = null;
    let count = 0;
    for (;;) {
      const chunk = await this.repository.purgeChunk(through, chunkSize);
      // No chunk: another replica purged up to here already.
      if (!chunk) break;
      lastChunk = chunk;
      count += chunk.count;
      if (chunk.toSeq >= through) break;
      await nextTurn();
    }
    if (!lastChunk) return 0;
    await this.audit.record({
      caller: SYSTEM_CALLER,
      action: 'audit.purged',
      outcome: 'ok',
      detail: { before: before.toISOString(), events: count, toSeq: lastChunk.toSeq, anchorHash: lastChunk.hash },
    });
    return count;
  }
}
