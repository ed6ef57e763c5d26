import { describe, expect, it } from '@jest/globals';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';

/**
 * Each table is read and written only by its owner's repositories (issue 42, ADR 0042): another module
 * asks the owner (a TaskQueueService method, a value the owner handed over) instead of naming its table
 * in SQL. The owners are listed here, in one place; a table no module owns fails as well.
 */
const SRC = join(import.meta.dirname, '../../src');

/** Every table the migrations create (but a migration's own scratch tables), by the module that owns it. */
const OWNERS: Record<string, string> = {
  a2a_contexts: 'a2a',
  a2a_push_configs: 'a2a',
  approvals: 'approvals',
  audit_events: 'audit',
  audit_head: 'audit',
  eval_results: 'eval',
  push_deliveries: 'push',
  push_signing_keys: 'push',
  webhook_targets: 'push',
  run_waits: 'agent',
  task_steps: 'agent',
  task_file_changes: 'agent',
  schedules: 'schedules',
  schedule_runs: 'schedules',
  sessions: 'sessions',
  task_answer_drafts: 'events',
  tasks: 'queue',
  task_images: 'queue',
  triggers: 'triggers',
  trigger_runs: 'triggers',
  usage_daily: 'usage',
};

function repositories(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? repositories(join(dir, entry.name)) : entry.name.endsWith('.repository.ts') ? [join(dir, entry.name)] : [],
  );
}

/** `@Entity('tasks') export class TaskEntity`: entity class names by table, for the repositories that name an entity, not a table. */
function entityTables(): Map<string, string> {
  const tables = new Map<string, string>();
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (entry.isDirectory()) walk(join(dir, entry.name));
      else if (entry.name.endsWith('.entity.ts'))
        for (const [, table, name] of readFileSync(join(dir, entry.name), 'utf8').matchAll(/@Entity\('(\w+)'\)[\s\S]*?export class (\w+)/g)) tables.set(name, table);
    }
  };
  walk(SRC);
  return tables;
}

/** The tables a repository names: after FROM, JOIN, INTO, UPDATE or TABLE in its SQL, and through the entities it queries with. */
function tablesNamed(source: string, entities: Map<string, string>): string[] {
  // Comments say "from its row" and the like: only code counts.
  const code = source.replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '');
  const inSql = [...code.matchAll(/\b(?:FROM|JOIN|INTO|UPDATE|TABLE)\s+"?([a-z_][a-z0-9_]*)/g)].map((match) => match[1]);
  const throughEntities = [...code.matchAll(/\b(\w+Entity)\b/g)].flatMap((match) => (entities.has(match[1]) ? [entities.get(match[1])!] : []));
  return [...new Set([...inSql, ...throughEntities])].sort();
}

describe('table ownership', () => {
  const entities = entityTables();
  const named = repositories(SRC).flatMap((file) => {
    const path = relative(SRC, file);
    return tablesNamed(readFileSync(file, 'utf8'), entities).map((table) => ({ path, module: path.split('/')[0], table }));
  });

  it('reads the SQL of every repository', () => {
    expect(new Set(named.map((use) => use.path)).size).toBeGreaterThanOrEqual(14);
    expect(entities.get('TaskEntity')).toBe('tasks');
  });

  it('finds a table named in SQL, in a subquery, and through an entity; not in a comment or a column', () => {
    const source = [
      '// the Task from its row (read FROM tasks once)',
      "sql.run('INSERT INTO webhook_targets (task_id) SELECT id FROM (SELECT id FROM tasks) t ON CONFLICT DO UPDATE SET x = 1')",
      "sql.all('SELECT r.id FROM schedule_runs r LEFT JOIN triggers t ON t.id = r.task_id')",
      'sql.entities(TaskEntity, query)',
    ].join('\n');
    expect(tablesNamed(source, entities)).toEqual(['schedule_runs', 'tasks', 'triggers', 'webhook_targets']);
  });

  it('knows the owner of every table a repository names', () => {
    expect(named.filter((use) => !(use.table in OWNERS)).map((use) => `${use.path} names ${use.table}, which no module owns in OWNERS`)).toEqual([]);
  });

  it("has no repository name another module's table", () => {
    const foreign = named.filter((use) => use.table in OWNERS && OWNERS[use.table] !== use.module);
    expect(foreign.map((use) => `${use.path} ${use.table} (owned by ${OWNERS[use.table]})`)).toEqual([]);
  });
});
