import type { AuditEventEntity } from '../../../src/audit/audit-event.entity.js';
import type { AuditWriter } from '../../../src/audit/audit-writer.js';
import type { SharedItem, SharedStep } from '../../../src/database/unit-of-work.js';

/**
 * The audit trail in memory, for a real AuditService: `record` appends at once, `entry` when its unit of work
 * commits (MemoryUnitOfWork calls `committed`), so an event exists only if what it audits does.
 */
export class MemoryAuditWriter implements Pick<AuditWriter, 'append' | 'entry'> {
  readonly events: AuditEventEntity[] = [];
  private readonly step: SharedStep<AuditEventEntity> = {
    steps: () => {
      throw new Error('MemoryAuditWriter: its events commit through MemoryUnitOfWork');
    },
    committed: (events) => this.events.push(...events),
    failed: () => undefined,
  };

  async append(event: AuditEventEntity): Promise<void> {
    this.events.push(event);
  }

  entry(event: AuditEventEntity): SharedItem {
    return { step: this.step, item: event };
  }

  /** The events of one action, as `{ outcome, detail }` with the detail parsed: what a spec compares. */
  of(action: string): { outcome: string; taskId: string | null; detail: Record<string, unknown> }[] {
    return this.events
      .filter((event) => event.action === action)
      .map((event) => ({ outcome: event.outcome, taskId: event.taskId, detail: JSON.parse(event.detail) as Record<string, unknown> }));
  }
}
