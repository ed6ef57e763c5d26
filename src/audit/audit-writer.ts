import { Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { setImmediate as endOfTurn } from 'node:timers/promises';
import { DataSource } from 'typeorm';
import { AppConfig } from '../config/app-config.js';
import { Metrics } from '../metrics/metrics.js';
import { HotPathSql, sqlStep, type SqlStep } from '../database/hot-path-sql.js';
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
  writes: SqlStep[];
  resolve: () => void;
  reject: (error: unknown) => void;
}

/**
 * The single writer of the audit log. Each transaction first takes the chain head (updating its one
 * row locks it, in SQLite and across PostgreSQL replicas alike), numbers and hash-chains its events,
 * and moves the head. Group commit: the first event waits for the end of the current event-loop turn
 * (setImmediate), so every request that reaches its audit point in the same turn commits in the same
 * transaction, and events that arrive while a write is in progress go into the next one. Every caller
 * still waits for its own event (an action that must be audited fails when its audit write fails). A
 * failed batch is retried item by item, so one caller's bad write never fails another's; each event
 * that still fails counts in `audit_write_failures_total`. Every `audit.checkpoint_every` events the
 * head is written to the log, outside the database, so that a cut tail of the chain can be detected.
 */
@Injectable()
export class AuditWriter {
  private readonly logger = new Logger('AuditWriter');
  private readonly sql: HotPathSql;
  private queue: Pending[] = [];
  private writing: Promise<void> | null = null;

  constructor(
    @InjectDataSource() dataSource: DataSource,
    private readonly config: AppConfig,
    private readonly metrics: Metrics,
  ) {
    this.sql = new HotPathSql(dataSource);
  }

  append(event: AuditEventEntity, writes: SqlStep[] = []): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.queue.push({ event, writes, resolve, reject });
      this.writing ??= endOfTurn()
        .then(() => this.drain())
        .finally(() => (this.writing = null));
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
        if (batch.length === 1) this.fail(batch[0], error);
        else for (const item of batch) await this.commit([item]).then(item.resolve, (itemError: unknown) => this.fail(item, itemError));
      }
    }
  }

  private fail(item: Pending, error: unknown): void {
    this.metrics.auditWriteFailures.inc();
    this.logger.error(`audit write failed (${item.event.action}): ${(error as Error).message}`);
    item.reject(error);
  }

  private async commit(batch: Pending[]): Promise<void> {
    const events = batch.map((item) => item.event);
    const writes = batch.flatMap((item) => item.writes);
    await this.sql.transaction(function* () {
      yield sqlStep.run(LOCK_HEAD);
      const [current] = (yield sqlStep.all(READ_HEAD)) as Head[];
      yield* writes;
      const head = chainAfter(current, events);
      yield sqlStep.insert(AuditEventEntity, events);
      yield sqlStep.run(MOVE_HEAD, [head.seq, head.hash]);
    });
    this.metrics.auditEventsWritten.inc(events.length);
    // Logged once committed: a checkpoint names a head that exists.
    for (const event of events) {
      if (event.seq % this.config.audit.checkpointEvery === 0) this.logger.log(`audit checkpoint seq=${event.seq} hash=${event.hash}`);
    }
  }
}

/** Numbers and links `events` after `head`; returns the new head. */
function chainAfter(head: Head, events: AuditEventEntity[]): { seq: number; hash: string } {
  let seq = Number(head.seq);
  let hash = head.hash;
  for (const event of events) {
    event.seq = ++seq;
    event.prevHash = hash;
    event.hash = hash = chainHash(event.prevHash, event);
  }
  return { seq, hash };
}
