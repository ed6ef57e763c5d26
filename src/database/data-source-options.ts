import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import pg from 'pg';
import { DataSource, type DataSourceOptions } from 'typeorm';
import type { AgentConfig } from '../config/agent-config.js';
import { PlainSql } from './plain-sql.js';
import { InitialSchema1764633600000 } from './migrations/1764633600000-initial-schema.js';
import { TaskSteps1764720000000 } from './migrations/1764720000000-task-steps.js';
import { TaskLeases1764806400000 } from './migrations/1764806400000-task-leases.js';
import { AuditChain1764892800000 } from './migrations/1764892800000-audit-chain.js';
import { TaskImageBytes1764979200000 } from './migrations/1764979200000-task-image-bytes.js';
import { SessionPrelude1765068000000 } from './migrations/1765068000000-session-prelude.js';
import { Approvals1765152000000 } from './migrations/1765152000000-approvals.js';
import { QuestionsModesTiers1765238400000 } from './migrations/1765238400000-questions-modes-tiers.js';
import { FairQueueIndex1765240000000 } from './migrations/1765240000000-fair-queue-index.js';
import { TaskOwnerGroups1765324800000 } from './migrations/1765324800000-task-owner-groups.js';
import { TaskSurface1765411200000 } from './migrations/1765411200000-task-surface.js';
import { Push1765497600000 } from './migrations/1765497600000-push.js';
import { McpFormsOwnerEmail1765612800000 } from './migrations/1765612800000-mcp-forms-owner-email.js';
import { TaskFileChanges1765612800021 } from './migrations/1765612800021-task-file-changes.js';
import { RunWaits1765612800035 } from './migrations/1765612800035-run-waits.js';
import { UsageAndTraces1765612800039 } from './migrations/1765612800039-usage-and-traces.js';
import { A2aContexts1765700000043 } from './migrations/1765700000043-a2a-contexts.js';
import { TaskLocale1765800000036 } from './migrations/1765800000036-task-locale.js';
import { SchedulesTriggers1765800000038 } from './migrations/1765800000038-schedules-triggers.js';
import { EvalResults1765800000041 } from './migrations/1765800000041-eval-results.js';
import { WaitKinds1765900000035 } from './migrations/1765900000035-wait-kinds.js';
import { SettleStartingRuns1765900000038 } from './migrations/1765900000038-settle-starting-runs.js';

export const MIGRATIONS = [
  InitialSchema1764633600000,
  TaskSteps1764720000000,
  TaskLeases1764806400000,
  AuditChain1764892800000,
  TaskImageBytes1764979200000,
  SessionPrelude1765068000000,
  Approvals1765152000000,
  QuestionsModesTiers1765238400000,
  FairQueueIndex1765240000000,
  TaskOwnerGroups1765324800000,
  TaskSurface1765411200000,
  Push1765497600000,
  McpFormsOwnerEmail1765612800000,
  TaskFileChanges1765612800021,
  RunWaits1765612800035,
  UsageAndTraces1765612800039,
  A2aContexts1765700000043,
  TaskLocale1765800000036,
  SchedulesTriggers1765800000038,
  EvalResults1765800000041,
  WaitKinds1765900000035,
  SettleStartingRuns1765900000038,
];

/**
 * Committed migrations run at boot; `synchronize` stays off so the schema is exactly what they say.
 * Entities are not listed here: each feature module registers its own (`TypeOrmModule.forFeature`,
 * collected by `autoLoadEntities`), so the database depends on no feature. A DataSource built by hand
 * (the doctor, tests) names the entities its repositories hydrate.
 */
export function dataSourceOptions(database: AgentConfig['database'], entities: NonNullable<DataSourceOptions['entities']> = []): DataSourceOptions {
  const common = { entities, migrations: MIGRATIONS, migrationsRun: true, synchronize: false } as const;
  if (database.type === 'postgres') {
    // The driver named, not left to TypeORM's require('pg') by name, which esbuild cannot follow: in the bundle that
    // loaded a second pg, module by module from node_modules, at every start (scripts/bundle.mjs).
    return { ...common, type: 'postgres', url: database.url, driver: pg };
  }
  const path = database.path === ':memory:' ? ':memory:' : resolve(database.path);
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
  return {
    ...common,
    type: 'better-sqlite3',
    database: path,
    // WAL keeps readers (agent_status) off the writer's lock. synchronous=NORMAL in WAL mode keeps every
    // committed transaction across a process crash or kill -9 (not across a power cut) without an
    // fsync per commit, which would cost more than everything else on the request path (ADR 0005).
    enableWAL: true,
    prepareDatabase: (db: { pragma(sql: string): unknown }) => {
      db.pragma('busy_timeout = 5000');
      db.pragma('foreign_keys = ON');
      db.pragma('synchronous = NORMAL');
      // 64 MiB of page cache (the default is 2 MiB), so lookups stay in memory as the task table grows.
      db.pragma('cache_size = -65536');
    },
  };
}

/**
 * Runs `use` on a connection that changes nothing (no migrations), for a one-off command (the doctor),
 * and closes it whatever happens.
 */
export async function withUnmigratedDatabase<T>(database: AgentConfig['database'], use: (sql: PlainSql) => Promise<T>): Promise<T> {
  const source = new DataSource({ ...dataSourceOptions(database), migrationsRun: false });
  try {
    return await use(new PlainSql(await source.initialize()));
  } finally {
    if (source.isInitialized) await source.destroy();
  }
}

/**
 * Runs `use` on a connection to the database migrated as the service's start would migrate it, for a one-off
 * command that writes (`npm run eval` keeps its results), and closes it whatever happens.
 */
export async function withMigratedDatabase<T>(database: AgentConfig['database'], use: (sql: PlainSql) => Promise<T>): Promise<T> {
  const source = new DataSource(dataSourceOptions(database));
  try {
    return await use(new PlainSql(await source.initialize()));
  } finally {
    if (source.isInitialized) await source.destroy();
  }
}
