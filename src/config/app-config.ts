import type { AgentConfig } from './agent-config.js';

/**
 * Injection token for the validated configuration. The class/interface merge lets services take
 * `config: AppConfig` by constructor injection and read it as a plain AgentConfig.
 */
// eslint-disable-next-line @typescript-eslint/no-unsafe-declaration-merging
export abstract class AppConfig {}
// eslint-disable-next-line @typescript-eslint/no-unsafe-declaration-merging
export interface AppConfig extends AgentConfig {}
