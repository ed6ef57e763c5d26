import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parse } from 'yaml';
import { AgentConfig, ConfigError, deepMerge, overridesFromEnv, validateConfig } from './agent-config.js';

/**
 * The only place that reads process.env: AGENT_CONFIG picks the file (default ./agent.yaml), and
 * AGENT__SECTION__KEY variables override single keys (e.g. AGENT__OLLAMA__MODEL=llama3.2).
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): AgentConfig {
  const file = resolve(env.AGENT_CONFIG ?? 'agent.yaml');
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
