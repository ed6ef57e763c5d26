import { resolve } from 'node:path';
import type { AgentConfig } from '../config/agent-config.js';
import { withUnmigratedDatabase } from '../database/data-source-options.js';
import { DatabaseHealthRepository } from '../health/database-health.repository.js';
import type { CheckLine } from '../ollama/ollama-diagnosis.js';
import { prepareStorage } from '../startup/storage-paths.js';
import { probeBubblewrap } from '../workspace/sandbox.js';

/** The workspace root and SQLite's folder are writable, exactly as the service's start-up checks them. */
export function checkStorage(config: AgentConfig): CheckLine {
  try {
    prepareStorage(config);
    return { name: 'workspace', level: 'ok', message: `${config.workspace.root} is writable` };
  } catch (error) {
    return { name: 'workspace', level: 'fail', message: (error as Error).message };
  }
}

/** Commands run under bubblewrap here, or why not and what `workspace.sandbox` then does. */
export function checkSandbox(workspace: AgentConfig['workspace']): CheckLine {
  if (workspace.sandbox === 'none') return { name: 'sandbox', level: 'warn', message: 'workspace.sandbox is none: commands run unsandboxed' };
  const probe = probeBubblewrap(resolve(workspace.root));
  if (probe.ok) return { name: 'sandbox', level: 'ok', message: probe.detail };
  const fix =
    'install bubblewrap (`apt-get install bubblewrap`) and allow unprivileged user namespaces (`sysctl kernel.unprivileged_userns_clone=1`; on Ubuntu 24.04 also an AppArmor profile for bwrap)';
  return workspace.sandbox === 'bubblewrap'
    ? { name: 'sandbox', level: 'fail', message: `${probe.detail}: the service will not start (workspace.sandbox: bubblewrap); ${fix}` }
    : { name: 'sandbox', level: 'warn', message: `${probe.detail}: run_command will be disabled; ${fix}` };
}

/** The database answers; migrations are left to the service, so the doctor changes nothing in it. */
export async function checkDatabase(database: AgentConfig['database']): Promise<CheckLine> {
  const where = database.type === 'postgres' ? 'PostgreSQL (database.url)' : `SQLite ${resolve(database.path)}`;
  try {
    await withUnmigratedDatabase(database, (sql) => new DatabaseHealthRepository(sql).ping());
    return { name: 'database', level: 'ok', message: `${where} answers` };
  } catch (error) {
    return { name: 'database', level: 'fail', message: `${where} does not answer (${(error as Error).message}): check database.${database.type === 'postgres' ? 'url' : 'path'}` };
  }
}
