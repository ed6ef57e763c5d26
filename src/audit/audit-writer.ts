import { Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type EntityManager } from 'typeorm';
import { AppConfig } from '../config/app-config.js';
import { HotPathSql } from '../database/hot-path-sql.js';
import { chainHash } from './audit-chain.js';
import { AuditEventEntity } from './audit-event.entity.js';

type Head = { seq: number | string; hash: string };

// Updating the head's single row first takes the write lock (SQLite) or the row lock (PostgreSQL).
const LOCK_HEAD = 'UPDATE audit_head SET purging = purging WHERE id = 1';
const READ_HEAD = 'SELECT seq, hash FROM audit_head WHERE id = 1';
const MOVE_HEAD = 'UPDATE audit_head SET seq = ?, hash = ? WHERE id = 1';

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
    const events = batch.map((item) => item.event);
    // Plain events on SQLite: one synchronous IMMEDIATE transaction (the common case: every tool call).
    if (this.sql.isSqlite && batch.every((item) => !item.work)) {
      this.sql.immediate((sql) => {
        sql.run(LOCK_HEAD);
        const head = this.chain(events, sql.all(READ_HEAD)[0] as Head);
        sql.insert(AuditEventEntity, events);
        sql.run(MOVE_HEAD, [head.seq, head.hash]);
      });
    } else {
      await this.dataSource.transaction(async (manager) => {
        const sql = this.sql.within(manager);
        await sql.run(LOCK_HEAD);
        const [current] = (await sql.all(READ_HEAD)) as Head[];
        for (const item of batch) await item.work?.(manager);
        const head = this.chain(events, current);
        await sql.insert(AuditEventEntity, events);
        await sql.run(MOVE_HEAD, [head.seq, head.hash]);
      });
    }
    // Logged once committed: a checkpoint names a head that exists.
    for (const event of events) {
      if (event.seq % this.config.audit.checkpointEvery === 0) this.logger.log(`audit checkpoint seq=${event.seq} hash=${event.hash}`);
    }
  }

  /** Numbers and links `events` after `head`; returns the new head. */
  private chain(events: AuditEventEntity[], head: Head): { seq: number; hash: string } {
    let seq = Number(head.seq);
    let hash = head.hash;
    for (const event of events) {
      event.seq = ++seq;
      event.prevHash = hash;
      event.hash = hash = chainHash(event.prevHash, event);
    }
    return { seq, hash };
  }
}
