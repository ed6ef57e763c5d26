import { accessSync, constants, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import type { AgentConfig } from '../config/agent-config.js';
import { errnoReason, StartupError } from './startup-error.js';

/** Creates `dir` (and its parents) and checks it is writable, or names `key` and the path in the error. */
function writableDirectory(key: string, dir: string): void {
  try {
    mkdirSync(dir, { recursive: true });
    accessSync(dir, constants.W_OK);
  } catch (error) {
    const reason = errnoReason((error as NodeJS.ErrnoException).code);
    throw new StartupError(`${key}: cannot use ${dir} (${reason}); choose a directory this user can write, or fix its permissions`);
  }
}

/**
 * The directories the service writes, made before anything opens them: SQLite's folder and the
 * workspace root (a configured root that does not exist was already refused by the loader, so
 * only the default one is created here). Each failure names the key to change.
 */
export function prepareStorage(config: AgentConfig): void {
  if (config.database.type === 'sqlite' && config.database.path !== ':memory:') writableDirectory('database.path', dirname(config.database.path));
  writableDirectory('workspace.root', config.workspace.root);
}

/** The resolved places the service reads and writes, for the start-up log (credentials masked). */
export function describeStorage(config: AgentConfig, configSource: string): string[] {
  const { database } = config;
  const where = database.type === 'postgres' ? `postgres ${maskedUrl(database.url)}` : `sqlite ${database.path}`;
  return [
    `config: ${configSource}`,
    `database: ${where}`,
    `workspace: ${config.workspace.root} (sandbox ${config.workspace.sandbox})`,
    `ollama: ${config.ollama.host}, model ${config.ollama.model}`,
  ];
}

function maskedUrl(url: string): string {
  if (!URL.canParse(url)) return '(unparsable url)';
  const parsed = new URL(url);
  if (parsed.password) parsed.password = '***';
  return parsed.toString();
}
