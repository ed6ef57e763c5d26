import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type EntityManager } from 'typeorm';
import { HotPathSql } from '../database/hot-path-sql.js';
import { AuditEventEntity } from './audit-event.entity.js';

interface Pending {
  event: AuditEventEntity;
  /** Writes that must commit together with the event (e.g. the Task it accepts). */
  work?: (manager: EntityManager) => Promise<void>;
  resolve: () => void;
  reject: (error: unknown) => void;
}

/**
 * The single writer of the audit log, with group commit: events that arrive while a write is in
 * progress go into the next transaction together. Every caller still waits for its own event to be
 * committed (an action that must be audited fails when its audit write fails), but under load one
 * transaction carries many events. A failed batch is retried item by item, so one caller's bad write
 * never fails another caller.
 */
@Injectable()
export class AuditWriter {
  private queue: Pending[] = [];
  private writing: Promise<void> | null = null;
  private readonly hotPath: HotPathSql;

  constructor(@InjectDataSource() private readonly dataSource: DataSource) {
    this.hotPath = new HotPathSql(dataSource);
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
    const events = batch.map((item) => item.event);
    // A multi-row INSERT is atomic on its own; a transaction is needed only to join other writes.
    if (batch.every((item) => !item.work)) return this.hotPath.insert(AuditEventEntity, events);
    await this.dataSource.transaction(async (manager) => {
      for (const item of batch) await item.work?.(manager);
      await manager.insert(AuditEventEntity, events);
    });
  }
}
