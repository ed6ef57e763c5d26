import { Injectable, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { SchedulerRegistry } from '@nestjs/schedule';
import { DataSource } from 'typeorm';
import { AppConfig } from '../config/app-config.js';
import { HotPathSql, sqlStep } from '../database/hot-path-sql.js';
import { SYSTEM_CALLER } from '../identity/caller.js';
import { AuditService } from './audit.service.js';

const HOUR = 3_600_000;

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

  /** Deletes events older than `before`; returns how many went. */
  async purge(before: Date): Promise<number> {
    const done = await this.sql.transaction(function* () {
      yield sqlStep.run('UPDATE audit_head SET purging = 1 WHERE id = 1');
      const [last] = (yield sqlStep.all('SELECT seq, hash FROM audit_events WHERE at < ? ORDER BY seq DESC LIMIT 1', [before.toISOString()])) as { seq: number; hash: string }[];
      let purged: { count: number; toSeq: number; hash: string } | null = null;
      if (last) {
        const [{ n }] = (yield sqlStep.all('SELECT COUNT(*) AS n FROM audit_events WHERE seq <= ?', [last.seq])) as { n: number | string }[];
        yield sqlStep.run('DELETE FROM audit_events WHERE seq <= ?', [last.seq]);
        yield sqlStep.run('UPDATE audit_head SET anchor_seq = ?, anchor_hash = ? WHERE id = 1', [last.seq, last.hash]);
        purged = { count: Number(n), toSeq: Number(last.seq), hash: last.hash };
      }
      yield sqlStep.run('UPDATE audit_head SET purging = 0 WHERE id = 1');
      return purged;
    });
    if (!done) return 0;
    await this.audit.record({
      caller: SYSTEM_CALLER,
      action: 'audit.purged',
      outcome: 'ok',
      detail: { before: before.toISOString(), events: done.count, toSeq: done.toSeq, anchorHash: done.hash },
    });
    return done.count;
  }
}
