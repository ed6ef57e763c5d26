import { Injectable, Logger } from '@nestjs/common';
import { AppConfig } from '../config/app-config.js';
import { Metrics } from '../metrics/metrics.js';
import type { TransactionSteps } from '../database/plain-sql.js';
import { UnitOfWork, type SharedItem, type SharedStep } from '../database/unit-of-work.js';
import { chainHash } from './audit-chain.js';
import type { AuditEventEntity } from './audit-event.entity.js';
import { AuditRepository, type ChainLink } from './audit.repository.js';

/**
 * The single writer of the audit log, as the shared step of units of work: each transaction first
 * takes the chain head (updating its one row locks it, in SQLite and across PostgreSQL replicas
 * alike), runs the units' own writes, numbers and hash-chains every event of the batch, and moves the
 * head. Every caller still
 * waits for its own event (an action that must be audited fails when its audit write fails); each event
 * that fails for good counts in `audit_write_failures_total`. Every `audit.checkpoint_every` events the
 * head is written to the log, outside the database, so that a cut tail of the chain can be detected.
 */
@Injectable()
export class AuditWriter implements SharedStep<AuditEventEntity> {
  private readonly logger = new Logger('AuditWriter');

  constructor(
    private readonly unitOfWork: UnitOfWork,
    private readonly repository: AuditRepository,
    private readonly config: AppConfig,
    private readonly metrics: Metrics,
  ) {}

  /** Commits `event` in a unit of its own. */
  append(event: AuditEventEntity): Promise<void> {
    return this.unitOfWork.commit({ shared: [this.entry(event)] });
  }

  /** `event` as a step of another unit of work: the change it audits exists only if the event does. */
  entry(event: AuditEventEntity): SharedItem {
    return { step: this, item: event };
  }

  steps(events: AuditEventEntity[], inside: TransactionSteps<void>): TransactionSteps<void> {
    return this.repository.append(events, chainAfter, inside);
  }

  committed(events: AuditEventEntity[]): void {
    this.metrics.auditEventsWritten.inc(events.length);
    // Logged once committed: a checkpoint names a head that exists.
    for (const event of events) {
      if (event.seq % this.config.audit.checkpointEvery === 0) this.logger.log(`audit checkpoint seq=${event.seq} hash=${event.hash}`);
    }
  }

  failed(event: AuditEventEntity, error: unknown): void {
    this.metrics.auditWriteFailures.inc();
    this.logger.error(`audit write failed (${event.action}): ${(error as Error).message}`);
  }
}

/** Numbers and links `events` after `head`; returns the new head. */
function chainAfter(head: ChainLink, events: AuditEventEntity[]): ChainLink {
  let seq = head.seq;
  let hash = head.hash;
  for (const event of events) {
    event.seq = ++seq;
    event.prevHash = hash;
    event.hash = hash = chainHash(event.prevHash, event);
  }
  return { seq, hash };
}
