import type { AgentConfig } from './config/agent-config.js';
import { describeConfigSource, loadConfig } from './config/config.loader.js';
import { routeConsoleTo } from './common/console-to-logger.js';
import { StderrLogger } from './common/stderr-logger.js';
import { exitOnStartupFailure } from './startup/startup-error.js';
import { describeStorage, prepareStorage } from './startup/storage-paths.js';

/**
 * The start-up both entry points share: the configuration, the directories it names (created and
 * checked writable), and a log of what was resolved. Any failure exits with one line per problem.
 */
export function startUp(): { config: AgentConfig; logger: StderrLogger } {
  try {
    const config = loadConfig();
    prepareStorage(config);
    const logger = new StderrLogger(config.log.format);
    routeConsoleTo(logger);
    for (const line of describeStorage(config, describeConfigSource())) logger.log(line, 'Startup');
    return { config, logger };
  } catch (error) {
    exitOnStartupFailure(error);
  }
}
