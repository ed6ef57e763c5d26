import { afterEach, describe, expect, it } from '@jest/globals';
import { DataSource } from 'typeorm';
import { validateConfig } from '../../src/config/agent-config.js';
import { dataSourceOptions, MIGRATIONS } from '../../src/database/data-source-options.js';
import { LOST_RUN_REASON, SettleStartingRuns1765900000038 } from '../../src/database/migrations/1765900000038-settle-starting-runs.js';
import { freshDatabase, type DatabaseKind } from '../support/databases.js';

/** Issue 38: the `starting` runs the two-commit claim of an earlier build left (ADR 0039) are settled at upgrade. */
describe.each<DatabaseKind>(['sqlite', 'postgres'])('settling starting runs on %s', (kind) => {
  const sources: DataSource[] = [];
  afterEach(async () => {
    for (const source of sources.splice(0)) if (source.isInitialized) await source.destroy();
  });

  const sql = (text: string) => {
    let n = 0;
    return kind === 'postgres' ? text.replace(/\?/g, () => `$${++n}`) : text;
  };

  it('a starting run whose Task was stored becomes started, any other refused as lost; other runs are untouched', async () => {
    const { database } = validateConfig({ database: await freshDatabase(kind) });
    const upTo = MIGRATIONS.indexOf(SettleStartingRuns1765900000038);
    const open = async (migrations: typeof MIGRATIONS) => {
      const source = new DataSource({ ...dataSourceOptions(database), migrations, migrationsRun: false });
      await source.initialize();
      sources.push(source);
      await source.runMigrations();
      return source;
    };
    // The schema the earlier build wrote these rows on.
    const before = await open(MIGRATIONS.slice(0, upTo));
    const at = '2026-12-05T00:00:00.000Z';
    await before.query(sql('INSERT INTO sessions (id, owner, created_at) VALUES (?, ?, ?)'), ['s1', 'alice', at]);
    await before.query(sql("INSERT INTO tasks (id, session_id, owner, request, status, created_at, updated_at) VALUES (?, ?, 'alice', 'r', 'completed', ?, ?)"), [
      't1',
      's1',
      at,
      at,
    ]);
    const scheduleRun = (id: string, state: string, taskId: string | null, reason: string | null) =>
      before.query(sql("INSERT INTO schedule_runs (id, schedule_id, fire_at, kind, state, task_id, reason, created_at) VALUES (?, 'sch', ?, 'cron', ?, ?, ?, ?)"), [
        id,
        `2026-12-05T0${id.length}:00:0${id.at(-1)}.000Z`,
        state,
        taskId,
        reason,
        at,
      ]);
    const triggerRun = (id: string, state: string, taskId: string | null, reason: string | null) =>
      before.query(sql("INSERT INTO trigger_runs (id, trigger_id, delivery_id, event, state, task_id, reason, created_at) VALUES (?, 'trg', ?, 'push', ?, ?, ?, ?)"), [
        id,
        `delivery-${id}`,
        state,
        taskId,
        reason,
        at,
      ]);
    await scheduleRun('s-lost', 'starting', null, null);
    await scheduleRun('s-ghost', 'starting', 'no-such-task', null);
    await scheduleRun('s-made', 'starting', 't1', null);
    await scheduleRun('s-skip', 'skipped', null, 'the previous Task is still running');
    await triggerRun('t-lost', 'starting', null, null);
    await triggerRun('t-made', 'starting', 't1', null);
    await triggerRun('t-full', 'refused', null, 'queue full');
    await before.destroy();

    const after = await open(MIGRATIONS.slice(0, upTo + 1));
    const rows = async (table: string) =>
      Object.fromEntries(
        (await after.query<{ id: string; state: string; task_id: string | null; reason: string | null }[]>(`SELECT id, state, task_id, reason FROM ${table}`)).map((row) => [
          row.id,
          [row.state, row.task_id, row.reason],
        ]),
      );
    expect(await rows('schedule_runs')).toEqual({
      's-lost': ['refused', null, LOST_RUN_REASON],
      's-ghost': ['refused', null, LOST_RUN_REASON],
      's-made': ['started', 't1', null],
      's-skip': ['skipped', null, 'the previous Task is still running'],
    });
    expect(await rows('trigger_runs')).toEqual({
      't-lost': ['refused', null, LOST_RUN_REASON],
      't-made': ['started', 't1', null],
      't-full': ['refused', null, 'queue full'],
    });
  });
});
