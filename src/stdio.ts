import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import { CoreModule } from './app.module.js';
import { configOrExit } from './bootstrap.js';
import { StderrLogger } from './common/stderr-logger.js';
import { onTermination } from './common/termination.js';
import { IdentityService } from './identity/identity.service.js';
import { TaskQueueService } from './queue/task-queue.service.js';
import { McpServerFactory } from './mcp/mcp-server.factory.js';

/** MCP over stdio from a Nest standalone application context; stdout carries protocol frames only. */
async function main(): Promise<void> {
  const config = configOrExit();
  const logger = new StderrLogger();
  const app = await NestFactory.createApplicationContext(CoreModule.forRoot(config), { logger });
  const factory = app.get(McpServerFactory);
  const caller = app.get(IdentityService).forStdio();
  const handle = serveStdio((context) => factory.create(context, caller), {
    onerror: (error) => logger.warn(`stdio: ${error.message}`, 'McpStdio'),
  });
  const stop = async () => {
    await handle.close();
    await app.get(TaskQueueService).shutdown(config.queue.shutdownGraceMs);
    await app.close();
  };
  // The client closing stdin ends the session like a SIGTERM does: same grace for the running task.
  onTermination(stop);
  process.stdin.once('end', () => void stop().finally(() => process.exit(0)));
}

void main();
