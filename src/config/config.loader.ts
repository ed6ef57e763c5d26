import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parse } from 'yaml';
import { AgentConfig, ConfigError, deepMerge, overridesFromEnv, validateConfig } from './agent-config.js';

const configPath = (env: NodeJS.ProcessEnv) => resolve(env.AGENT_CONFIG ?? 'agent.yaml');

/** The configuration file that was read, or null when there is none (defaults and overrides only). */
export function configFile(env: NodeJS.ProcessEnv = process.env): string | null {
  const file = configPath(env);
  return existsSync(file) ? file : null;
}

/**
 * The only place that reads process.env: AGENT_CONFIG picks the file (default ./agent.yaml), and
 * AGENT__SECTION__KEY variables override single keys (e.g. AGENT__OLLAMA__MODEL=llama3.2).
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): AgentConfig {
  const file = configPath(env);
  let document: unknown = {};
  if (existsSync(file)) {
    try {
      document = parse(readFileSync(file, 'utf8')) ?? {};
    } catch (error) {
      throw new ConfigError([{ path: [], subject: file, message: `not valid YAML (${(error as Error).message.split('\n')[0]})` }]);
    }
  } else if (env.AGENT_CONFIG) {
    throw new ConfigError([{ path: [], subject: 'AGENT_CONFIG', message: `file not found: ${file}` }]);
  }
  return validateConfig(deepMerge(document, overridesFromEnv(env, (text) => parse(text))));
}
