import type { SqlStep } from '../../../src/database/plain-sql.js';
import type { SharedStep, Unit } from '../../../src/database/unit-of-work.js';
import type { UnitOfWork } from '../../../src/database/unit-of-work.js';

const MEMORY_SQL = '-- in memory';

/** A store of an in-memory repository: a copy of its rows, and the way back to it when a unit of work fails. */
export interface MemoryStore {
  snapshot(): () => void;
}

/**
 * A write of an in-memory repository as a step of a unit of work: MemoryUnitOfWork runs `apply` where a database
 * would run the SQL. A guard that refuses the unit throws from `apply`, as a real step's `check` does.
 */
export function memoryStep(apply: () => void): SqlStep {
  return { op: 'all', sql: MEMORY_SQL, params: [], check: () => apply() };
}

/**
 * UnitOfWork over in-memory repositories: a unit's writes apply in order, all or none (a failure puts every store
 * back as it was), then its shared items (audit events) are committed. A step with real SQL fails the unit: a fake
 * repository is missing, and the spec says so instead of passing without the write.
 */
export class MemoryUnitOfWork implements Pick<UnitOfWork, 'commit'> {
  constructor(private readonly stores: MemoryStore[]) {}

  async commit(unit: Unit): Promise<void> {
    const restores = this.stores.map((store) => store.snapshot());
    try {
      for (const step of unit.writes ?? []) {
        if (step.op !== 'all' || step.sql !== MEMORY_SQL) throw new Error(`MemoryUnitOfWork: a step no in-memory repository made: ${JSON.stringify(step).slice(0, 200)}`);
        step.check!([]);
      }
    } catch (error) {
      for (const restore of restores) restore();
      throw error;
    }
    const byStep = new Map<SharedStep<unknown>, unknown[]>();
    for (const { step, item } of unit.shared ?? []) byStep.set(step, [...(byStep.get(step) ?? []), item]);
    for (const [step, items] of byStep) step.committed(items);
  }
}
