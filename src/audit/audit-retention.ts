import { Injectable, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { SchedulerRegistry } from '@nestjs/schedule';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { DataSource } from 'typeorm';
import { AppConfig } from '../config/app-config.js';
import { HotPathSql, sqlStep } from '../database/hot-path-sql.js';
import { SYSTEM_CALLER } from '../identity/caller.js';
import { AuditService } from './audit.service.js';

const HOUR = 3_600_000;
/** Events deleted per purge transaction. */
const PURGE_CHUNK = 10_000;

type PurgedChunk = { count: number; toSeq: number; hash: string };

/**
 * Retention: events older than `audit.retention_days` are deleted, and the chain anchor moves to the
 * last deleted event, so verification starts there and still passes. The delete is the only one the
 * triggers allow (while the head's `purging` flag is set, inside the purge transaction), and it is
 * itself audited.
 */
@Injectable()
export class AuditRetention implements OnApplicationBootstrap {
  private readonly logger = new Logger(AuditRetention.name);
  private readonly sql: HotPathSql;

  constructor(
    @InjectDataSource() dataSource: DataSource,
    private readonly audit: AuditService,
    private readonly config: AppConfig,
    private readonly scheduler: SchedulerRegistry,
  ) {
    this.sql = new HotPathSql(dataSource);
  }

  onApplicationBootstrap(): void {
    if (this.config.audit.retentionDays === 0) return;
    const run = () => void this.purge(new Date(Date.now() - this.config.audit.retentionDays * 24 * HOUR)).catch((error) => this.logger.error(`audit purge failed: ${(error as Error).message}`));
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
    const [last] = (await this.sql.all('SELECT seq FROM audit_events WHERE at < ? ORDER BY seq DESC LIMIT 1', [before.toISOString()])) as { seq: number | string }[];
    if (!last) return 0;
    const through = Number(last.seq);
    let lastChunk: PurgedChunk | null = null;
    let count = 0;
    for (;;) {
      const chunk: PurgedChunk | null = await this.sql.transaction(function* () {
        yield sqlStep.run('UPDATE audit_head SET purging = 1 WHERE id = 1');
        const [head] = (yield sqlStep.all('SELECT anchor_seq FROM audit_head WHERE id = 1')) as { anchor_seq: number | string }[];
        const toSeq = Math.min(through, Number(head.anchor_seq) + chunkSize);
        const [end] = (yield sqlStep.all('SELECT hash FROM audit_events WHERE seq = ?', [toSeq])) as { hash: string }[];
        let purged: PurgedChunk | null = null;
        if (end) {
          const [{ n }] = (yield sqlStep.all('SELECT COUNT(*) AS n FROM audit_events WHERE seq <= ?', [toSeq])) as { n: number | string }[];
          yield sqlStep.run('DELETE FROM audit_events WHERE seq <= ?', [toSeq]);
          yield sqlStep.run('UPDATE audit_head SET anchor_seq = ?, anchor_hash = ? WHERE id = 1', [toSeq, end.hash]);
          purged = { count: Number(n), toSeq, hash: end.hash };
        }
        yield sqlStep.run('UPDATE audit_head SET purging = 0 WHERE id = 1');
        return purged;
      });
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
