import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import { CoreModule } from './app.module.js';
import { configOrExit } from './bootstrap.js';
import { StderrLogger } from './common/stderr-logger.js';
import { IdentityService } from './identity/identity.service.js';
import { McpServerFactory } from './mcp/mcp-server.factory.js';

/** MCP over stdio from a Nest standalone application context; stdout carries protocol frames only. */
async function main(): Promise<void> {
  const config = configOrExit();
  const logger = new StderrLogger();
  const app = await NestFactory.createApplicationContext(CoreModule.forRoot(config), { logger });
  app.enableShutdownHooks();
  const factory = app.get(McpServerFactory);
  const caller = app.get(IdentityService).forStdio();
  const handle = serveStdio((context) => factory.create(context, caller), {
    onerror: (error) => logger.warn(`stdio: ${error.message}`, 'McpStdio'),
  });
  process.stdin.once('end', () => {
    void handle
      .close()
      .then(() => app.close())
      .finally(() => process.exit(0));
  });
}

void main();
