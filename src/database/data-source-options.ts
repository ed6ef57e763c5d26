import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import type { DataSourceOptions } from 'typeorm';
import type { AgentConfig } from '../config/agent-config.js';
import { TaskStepEntity } from '../agent/task-step.entity.js';
import { ApprovalEntity } from '../approvals/approval.entity.js';
import { AuditEventEntity } from '../audit/audit-event.entity.js';
import { TaskImageEntity } from '../queue/task-image.entity.js';
import { TaskEntity } from '../queue/task.entity.js';
import { SessionEntity } from '../sessions/session.entity.js';
import { InitialSchema1764633600000 } from './migrations/1764633600000-initial-schema.js';
import { TaskSteps1764720000000 } from './migrations/1764720000000-task-steps.js';
import { TaskLeases1764806400000 } from './migrations/1764806400000-task-leases.js';
import { AuditChain1764892800000 } from './migrations/1764892800000-audit-chain.js';
import { TaskImageBytes1764979200000 } from './migrations/1764979200000-task-image-bytes.js';
import { SessionPrelude1765068000000 } from './migrations/1765068000000-session-prelude.js';
import { Approvals1765152000000 } from './migrations/1765152000000-approvals.js';

const ENTITIES = [SessionEntity, TaskEntity, TaskImageEntity, TaskStepEntity, AuditEventEntity, ApprovalEntity];
export const MIGRATIONS = [
  InitialSchema1764633600000,
  TaskSteps1764720000000,
  TaskLeases1764806400000,
  AuditChain1764892800000,
  TaskImageBytes1764979200000,
  SessionPrelude1765068000000,
  Approvals1765152000000,
];

/** Committed migrations run at boot; `synchronize` stays off so the schema is exactly what they say. */
export function dataSourceOptions(database: AgentConfig['database']): DataSourceOptions {
  const common = { entities: ENTITIES, migrations: MIGRATIONS, migrationsRun: true, synchronize: false } as const;
  if (database.type === 'postgres') {
    return { ...common, type: 'postgres', url: database.url };
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
