import 'reflect-metadata';
import { Logger } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import type { Express } from 'express';
import { buildOpenApiDocument } from './admin/openapi.js';
import { HttpAppModule } from './app.module.js';
import { configOrExit } from './bootstrap.js';
import { HttpEdge } from './http/http-edge.js';
import { onTermination } from './common/termination.js';
import { StderrLogger } from './common/stderr-logger.js';
import { TaskQueueService } from './queue/task-queue.service.js';

async function main(): Promise<void> {
  const config = configOrExit();
  // The MCP endpoint reads and size-limits its own body, so Nest's 100 kB JSON parser stays off.
  const app = await NestFactory.create<NestExpressApplication>(HttpAppModule.forRoot(config), {
    bodyParser: false,
    logger: new StderrLogger(),
  });
  app.disable('x-powered-by');
  const openApi = buildOpenApiDocument(app);
  (app.getHttpAdapter().getInstance() as Express).get('/admin/openapi.json', (_req, res) => void res.json(openApi));
  app.get(HttpEdge).mountOn(app.getHttpServer());
  await app.listen(config.server.port, config.server.host);
  const logger = new Logger('Bootstrap');
  const url = await app.getUrl();
  logger.log(`MCP endpoint: ${url.replace('[::1]', 'localhost')}/mcp (model ${config.ollama.model} at ${config.ollama.host})`);
  onTermination(async (signal) => {
    logger.log(`${signal}: shutting down (grace ${config.queue.shutdownGraceMs} ms for the running task)`);
    await app.get(TaskQueueService).shutdown(config.queue.shutdownGraceMs);
    await app.close();
  });
}

void main();
