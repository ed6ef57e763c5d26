import { Injectable, Logger } from '@nestjs/common';
import { createMcpHandler, type McpHttpHandler } from '@modelcontextprotocol/server';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { AppConfig } from '../config/app-config.js';
import { AuditService } from '../audit/audit.service.js';
import { anonymous, type Caller } from '../identity/caller.js';
import { IdentityService } from '../identity/identity.service.js';
import { HttpRequestGuard, maxRequestBodyBytes } from './http-guards.js';
import { McpServerFactory } from './mcp-server.factory.js';
import { readJsonBody, refuseTooLarge, serveParsed, writeJsonRpcError } from './node-fetch-bridge.js';

/** `/mcp`, `/mcp/`, with or without a query string: the paths Express's default (non-strict) routing matched. */
const MCP_PATH = /^\/mcp\/?(?:\?|$)/i;

/**
 * Stateless Streamable HTTP at /mcp, served straight from node:http rather than through Express and
 * Nest's router, which cost more per call than this endpoint's own work (ADR 0007). The SDK handler
 * answers GET/DELETE with 405, never mints a session id, and runs the header/_meta ladder
 * (-32020/-32022/-32602). The body is read here, with a limit sized for the configured image limits
 * (413 above it), and handed to the SDK already parsed.
 */
@Injectable()
export class McpHttpEndpoint {
  private readonly logger = new Logger('McpHttp');
  private readonly guard: HttpRequestGuard;
  private readonly handler: McpHttpHandler;
  private readonly maxBodyBytes: number;

  constructor(
    factory: McpServerFactory,
    private readonly identity: IdentityService,
    private readonly audit: AuditService,
    config: AppConfig,
  ) {
    this.guard = new HttpRequestGuard(config.server);
    this.maxBodyBytes = maxRequestBodyBytes(config.mcp.images);
    const onerror = (error: Error) => this.logger.debug?.(`MCP request rejected: ${error.message}`);
    this.handler = createMcpHandler(
      ({ era, authInfo }) => factory.create({ era }, (authInfo?.extra as { caller: Caller }).caller),
      { legacy: 'stateless', onerror, maxRequestBodySize: this.maxBodyBytes },
    );
  }

  /** Takes /mcp requests off `server` ahead of the application (Express) listener, which keeps every other path. */
  mountOn(server: Server): void {
    const application = server.listeners('request') as ((req: IncomingMessage, res: ServerResponse) => void)[];
    server.removeAllListeners('request');
    server.on('request', (req: IncomingMessage, res: ServerResponse) => {
      if (MCP_PATH.test(req.url ?? '')) void this.serveSafely(req, res);
      else for (const listener of application) listener.call(server, req, res);
    });
  }

  private async serveSafely(req: IncomingMessage, res: ServerResponse): Promise<void> {
    try {
      await this.serve(req, res);
    } catch (error) {
      // What Express did for a failing handler: log it, answer 500 if nothing was sent yet.
      this.logger.error(`MCP request failed: ${(error as Error).stack ?? String(error)}`);
      if (!res.headersSent) writeJsonRpcError(res, 500, -32603, 'Internal error');
      else res.destroy();
    }
  }

  private async serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const refusal = this.guard.refusal(req.headers.origin, req.headers.host);
    if (refusal) {
      await this.audit.record({ caller: anonymous(req.socket.remoteAddress ?? null), action: 'mcp.origin_rejected', outcome: 'rejected', detail: { reason: refusal } });
      return writeJsonRpcError(res, 403, -32600, `Forbidden: ${refusal}`);
    }
    const body = await readJsonBody(req, this.maxBodyBytes);
    if (body.kind === 'aborted') return;
    if (body.kind === 'too_large') return refuseTooLarge(req, res, this.maxBodyBytes);
    if (body.kind === 'invalid') return writeJsonRpcError(res, 400, -32700, 'Parse error: the body is not valid JSON');
    const identified = await this.identity.forHttp(req);
    if ('refusal' in identified) {
      await this.audit.record({ caller: anonymous(identified.refusal.address), action: identified.refusal.action, outcome: 'rejected', detail: { reason: identified.refusal.reason, path: '/mcp' } });
      return writeJsonRpcError(res, 401, -32600, `Unauthorized: ${identified.refusal.reason}`);
    }
    const caller = identified.caller;
    const authInfo = { token: '', clientId: caller.user, scopes: [], extra: { caller } };
    await serveParsed(this.handler, req, res, { authInfo, parsedBody: body.kind === 'json' ? body.value : undefined });
  }
}
