import { Injectable } from '@nestjs/common';
import { setImmediate as endOfTurn } from 'node:timers/promises';
import { PlainSql, type SqlStep, type TransactionSteps } from './plain-sql.js';

/**
 * A write that the units of one transaction share, run once per transaction for all their items and
 * around the units' own writes (`inside`): the audit chain locks its head first, runs the writes, then
 * numbers every event of the batch after the head. Supplied by the module that owns the table (Audit).
 */
export interface SharedStep<T> {
  steps(items: T[], inside: TransactionSteps<void>): TransactionSteps<void>;
  /** After the commit, with the items it committed. */
  committed(items: T[]): void;
  /** An item's unit failed for good (after its retry alone). */
  failed(item: T, error: unknown): void;
}

/** One item for a shared step, e.g. an audit event to chain. */
export interface SharedItem<T = unknown> {
  step: SharedStep<T>;
  item: T;
}

/** What must commit together, or not at all: a unit's own writes and its items for shared steps. */
export interface Unit {
  writes?: SqlStep[];
  shared?: SharedItem[];
}

/** Errors a unit's own guard (`check`) threw: the unit is refused, nothing failed. */
const refusals = new WeakSet<object>();

interface Pending {
  unit: Unit;
  resolve: () => void;
  reject: (error: unknown) => void;
}

/**
 * Commits units of work with group commit (ADR 0007, 0008). The first unit waits for the end of the
 * current event-loop turn (setImmediate), so every request that commits in the same turn shares one
 * transaction (on SQLite one BEGIN IMMEDIATE … COMMIT, the largest single cost of an agent_status call
 * before), and units that arrive while a transaction is in progress go into the next one. Every caller
 * still waits for its own unit. A failed batch is retried unit by unit, so one caller's bad write never
 * fails another's.
 */
@Injectable()
export class UnitOfWork {
  private queue: Pending[] = [];
  private writing: Promise<void> | null = null;

  constructor(private readonly sql: PlainSql) {}

  commit(unit: Unit): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.queue.push({ unit, resolve, reject });
      this.schedule();
    });
  }

  /**
   * Starts a drain unless one runs. A unit that arrives while the last batch settles (a caller that
   * reacts to its unit's failure with another commit, as a refused request auditing its refusal does)
   * finds `writing` still set after drain's last look at the queue: the drain that ends starts the next.
   */
  private schedule(): void {
    this.writing ??= endOfTurn()
      .then(() => this.drain())
      .finally(() => {
        this.writing = null;
        if (this.queue.length > 0) this.schedule();
      });
  }

  private async drain(): Promise<void> {
    while (this.queue.length > 0) {
      const batch = this.queue;
      this.queue = [];
      try {
        await this.transaction(batch);
        batch.forEach((pending) => pending.resolve());
      } catch (error) {
        if (batch.length === 1) this.fail(batch[0], error);
        else for (const pending of batch) await this.transaction([pending]).then(pending.resolve, (unitError: unknown) => this.fail(pending, unitError));
      }
    }
  }

  private fail(pending: Pending, error: unknown): void {
    // A guard's refusal is the unit's answer, not a failure of its shared writes (an audit event).
    const refused = typeof error === 'object' && error !== null && refusals.has(error);
    if (!refused) for (const { step, item } of pending.unit.shared ?? []) step.failed(item, error);
    pending.reject(error);
  }

  private async transaction(batch: Pending[]): Promise<void> {
    const writes = batch.flatMap((pending) => pending.unit.writes ?? []);
    const shared = new Map<SharedStep<unknown>, unknown[]>();
    for (const { step, item } of batch.flatMap((pending) => pending.unit.shared ?? [])) {
      const items = shared.get(step);
      if (items) items.push(item);
      else shared.set(step, [item]);
    }
    const body = [...shared].reduce<() => TransactionSteps<void>>(
      (inside, [step, items]) =>
        () =>
          step.steps(items, inside()),
      function* () {
        for (const write of writes) {
          const rows = yield write;
          if (write.op !== 'all' || !write.check) continue;
          try {
            write.check(rows);
          } catch (refusal) {
            if (typeof refusal === 'object' && refusal !== null) refusals.add(refusal);
            throw refusal;
          }
        }
      },
    );
    await this.sql.transaction(body);
    for (const [step, items] of shared) step.committed(items);
  }
}
