import type { AgentConfig } from './agent-config.js';

/**
 * Injection token for the validated configuration. The class/interface merge lets services take
 * `config: AppConfig` by constructor injection and read it as a plain AgentConfig.
 */
// The merge is the point (a DI token that reads as the config): the two rules below forbid exactly that.
// eslint-disable-next-line @typescript-eslint/no-unsafe-declaration-merging
export abstract class AppConfig {}
// eslint-disable-next-line @typescript-eslint/no-unsafe-declaration-merging, @typescript-eslint/no-empty-object-type
export interface AppConfig extends AgentConfig {}
