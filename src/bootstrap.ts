import { ConfigError, type AgentConfig } from './config/agent-config.js';
import { loadConfig } from './config/config.loader.js';

/** Loads the configuration, or explains on stderr what is wrong with it and exits with status 1. */
export function configOrExit(): AgentConfig {
  try {
    return loadConfig();
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    process.stderr.write(`ollama-agent-mcp: ${error.message}\n`);
    process.exit(1);
  }
}
