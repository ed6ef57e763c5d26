import { Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type EntityManager } from 'typeorm';
import { AppConfig } from '../config/app-config.js';
import { HotPathSql } from '../database/hot-path-sql.js';
import { chainHash } from './audit-chain.js';
import { AuditEventEntity } from './audit-event.entity.js';

interface Pending {
  event: AuditEventEntity;
  /** Writes that must commit together with the event (e.g. the Task it accepts). */
  work?: (manager: EntityManager) => Promise<void>;
  resolve: () => void;
  reject: (error: unknown) => void;
}

/**
 * The single writer of the audit log. Each transaction first takes the chain head (updating its one
 * row locks it, in SQLite and across PostgreSQL replicas alike), numbers and hash-chains its events,
 * and moves the head. Group commit: events that arrive while a write is in progress go into the next
 * transaction together; every caller still waits for its own event (an action that must be audited
 * fails when its audit write fails). A failed batch is retried item by item, so one caller's bad
 * write never fails another's. Every `audit.checkpoint_every` events the head is written to the log,
 * outside the database, so that truncating the tail of the chain can be detected.
 */
@Injectable()
export class AuditWriter {
  private readonly logger = new Logger('AuditCheckpoint');
  private readonly sql: HotPathSql;
  private queue: Pending[] = [];
  private writing: Promise<void> | null = null;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly config: AppConfig,
  ) {
    this.sql = new HotPathSql(dataSource);
  }

  append(event: AuditEventEntity, work?: Pending['work']): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.queue.push({ event, work, resolve, reject });
      this.writing ??= this.drain().finally(() => (this.writing = null));
    });
  }

  private async drain(): Promise<void> {
    while (this.queue.length > 0) {
      const batch = this.queue;
      this.queue = [];
      try {
        await this.commit(batch);
        batch.forEach((item) => item.resolve());
      } catch (error) {
        if (batch.length === 1) batch[0].reject(error);
        else for (const item of batch) await this.commit([item]).then(item.resolve, item.reject);
      }
    }
  }

  private async commit(batch: Pending[]): Promise<void> {
    let checkpoint: { seq: number; hash: string } | null = null;
    await this.dataSource.transaction(async (manager) => {
      const sql = this.sql.within(manager);
      await sql.run('UPDATE audit_head SET purging = purging WHERE id = 1');
      const [head] = (await sql.all('SELECT seq, hash FROM audit_head WHERE id = 1')) as { seq: number | string; hash: string }[];
      for (const item of batch) await item.work?.(manager);
      let seq = Number(head.seq);
      let hash = head.hash;
      for (const { event } of batch) {
        event.seq = ++seq;
        event.prevHash = hash;
        event.hash = hash = chainHash(event.prevHash, event);
        if (seq % this.config.audit.checkpointEvery === 0) checkpoint = { seq, hash };
      }
      await sql.insert(AuditEventEntity, batch.map((item) => item.event));
      await sql.run('UPDATE audit_head SET seq = ?, hash = ? WHERE id = 1', [seq, hash]);
    });
    const written = checkpoint as { seq: number; hash: string } | null;
    if (written) this.logger.log(`audit checkpoint seq=${written.seq} hash=${written.hash}`);
  }
}
