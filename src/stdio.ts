import './startup/node-version.js';
import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import { CoreModule } from './app.module.js';
import { startUp } from './bootstrap.js';
import { onTermination } from './common/termination.js';
import { IdentityService } from './identity/identity.service.js';
import { TaskQueueService } from './queue/task-queue.service.js';
import { AgentMcpServers } from './mcp/agent-mcp-servers.js';
import { RequestLimits } from './config/request-limits.js';
import { LineLimitedStdioTransport } from './mcp/stdio-line-transport.js';
import { exitOnStartupFailure } from './startup/startup-error.js';

/** MCP over stdio from a Nest standalone application context; stdout carries protocol frames only. */
async function main(): Promise<void> {
  const { config, logger } = startUp();
  const app = await NestFactory.createApplicationContext(CoreModule.forRoot(config), { logger, abortOnError: false });
  const servers = app.get(AgentMcpServers);
  const caller = app.get(IdentityService).forStdio();
  // A line may be as long as the largest request the HTTP endpoint accepts (images as Base64, plus the rest).
  const handle = serveStdio((context) => servers.create(context, caller), {
    transport: new LineLimitedStdioTransport(RequestLimits.of(config.mcp).bodyBytes('stdio')),
    onerror: (error) => logger.warn(`stdio: ${error.message}`, 'McpStdio'),
  });
  logger.log(`serving MCP on stdio as ${caller.user}`, 'Startup');
  const stop = async () => {
    await handle.close();
    await app.get(TaskQueueService).shutdown(config.queue.shutdownGraceMs);
    await app.close();
  };
  // The client closing stdin ends the session like a SIGTERM does: same grace for the running task.
  onTermination(stop, { log: (line) => logger.warn(line, 'McpStdio') });
  let ended = false;
  const endOfInput = () => {
    if (ended) return;
    ended = true;
    void stop().finally(() => process.exit(0));
  };
  process.stdin.once('end', endOfInput).once('close', endOfInput);
}

main().catch(exitOnStartupFailure);
