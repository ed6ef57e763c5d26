import './startup/node-version.js';
import 'reflect-metadata';
import { Logger } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { A2aEndpoint } from './a2a/a2a-endpoint.js';
import { buildOpenApiDocument } from './admin/openapi.js';
import { HttpAppModule } from './app.module.js';
import { startUp } from './bootstrap.js';
import { mountExpressRoutes } from './http/express-routes.js';
import { HttpEdge } from './http/http-edge.js';
import { LimitedExpressAdapter } from './http/http-server.js';
import { onTermination } from './common/termination.js';
import { deepFreeze } from './config/agent-config.js';
import { PushSigning } from './push/push-signing.js';
import { TaskQueueService } from './queue/task-queue.service.js';
import { firstRunAdminToken } from './startup/admin-token.js';
import { assertPortFree } from './startup/port-check.js';
import { exitOnStartupFailure } from './startup/startup-error.js';

async function main(): Promise<void> {
  const { config: loaded, logger: stderrLogger } = startUp();
  const firstRun = firstRunAdminToken(loaded);
  // The loaded configuration is frozen: the first run's token makes a new one.
  const config = firstRun ? deepFreeze({ ...loaded, auth: { ...loaded.auth, adminToken: firstRun.token } }) : loaded;
  await assertPortFree(config.server.host, config.server.port);
  // The MCP endpoint reads and size-limits its own body, so Nest's 100 kB JSON parser stays off.
  // abortOnError off: a failed start rejects here and is reported in one line (no core dump).
  const app = await NestFactory.create<NestExpressApplication>(HttpAppModule.forRoot(config), new LimitedExpressAdapter(config.server), {
    bodyParser: false,
    logger: stderrLogger,
    abortOnError: false,
  });
  app.disable('x-powered-by');
  const openApi = buildOpenApiDocument(app);
  const signing = app.get(PushSigning);
  // The route table's Express rows (src/http/route-table.ts), ahead of the controllers (app.listen mounts Nest's router); HttpEdge takes /mcp.
  mountExpressRoutes(app.getHttpAdapter().getInstance(), {
    ...app.get(A2aEndpoint).handlers(),
    // The public key push JWTs are signed with (a2a.push.auth: jwt), public as the card is.
    'GET /.well-known/jwks.json': [(_req, res, next) => void signing.jwks().then((jwks) => res.json(jwks), next)],
    'GET /admin/openapi.json': [(_req, res) => void res.json(openApi)],
  });
  app.get(HttpEdge).mountOn(app.getHttpServer());
  await app.listen(config.server.port, config.server.host);
  const logger = new Logger('Bootstrap');
  const url = (await app.getUrl()).replace('[::1]', 'localhost');
  logger.log(`listening: MCP endpoint ${url}/mcp, admin console ${url}/admin`);
  if (firstRun) {
    const kept = firstRun.file ? `kept in ${firstRun.file}` : 'for this run only (in-memory database)';
    logger.log(`admin sign-in: open ${url}/admin#token=${firstRun.token} (first-run admin token, ${kept}; set auth.admin_token to choose your own)`);
  }
  onTermination(
    async (signal) => {
      logger.log(`${signal}: shutting down (grace ${config.queue.shutdownGraceMs} ms for the running task; a second signal forces)`);
      await app.get(TaskQueueService).shutdown(config.queue.shutdownGraceMs);
      await app.close();
    },
    { log: (line) => logger.warn(line) },
  );
}

main().catch(exitOnStartupFailure);
