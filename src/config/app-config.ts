import type { AgentConfig } from './agent-config.js';

/**
 * Injection token for the validated configuration. The class/interface merge lets services take
 * `config: AppConfig` by constructor injection and read it as a plain AgentConfig.
 */
export abstract class AppConfig {}
export interface AppConfig extends AgentConfig {}
