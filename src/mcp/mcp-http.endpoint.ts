import { Injectable, Logger } from '@nestjs/common';
import { createMcpHandler, type McpHttpHandler } from '@modelcontextprotocol/server';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { AppConfig } from '../config/app-config.js';
import { AuditService } from '../audit/audit.service.js';
import { anonymous, type Caller } from '../identity/caller.js';
import { IdentityService } from '../identity/identity.service.js';
import { jsonRpcError, refuse } from '../http/refusal.js';
import { McpServerFactory } from './mcp-server.factory.js';
import { maxRequestBodyBytes, readJsonBody, serveParsed, writeJsonRpcError } from './node-fetch-bridge.js';

/**
 * Stateless Streamable HTTP at /mcp, served straight from node:http rather than through Express and
 * Nest's router, which cost more per call than this endpoint's own work (ADR 0007); HttpEdge has
 * checked the method, Host and Origin. The SDK handler answers GET/DELETE with 405, never mints a
 * session id, and runs the header/_meta ladder (-32020/-32022/-32602). The caller is identified from
 * the headers before a byte of the body is read; then the body is read here, with a limit sized for
 * the configured image limits (413 above it), and handed to the SDK already parsed.
 */
@Injectable()
export class McpHttpEndpoint {
  private readonly logger = new Logger('McpHttp');
  private readonly handler: McpHttpHandler;
  private readonly maxBodyBytes: number;

  constructor(
    factory: McpServerFactory,
    private readonly identity: IdentityService,
    private readonly audit: AuditService,
    config: AppConfig,
  ) {
    this.maxBodyBytes = maxRequestBodyBytes(config.mcp.images);
    const onerror = (error: Error) => this.logger.debug?.(`MCP request rejected: ${error.message}`);
    this.handler = createMcpHandler(
      ({ era, authInfo }) => factory.create({ era }, (authInfo?.extra as { caller: Caller }).caller),
      { legacy: 'stateless', onerror, maxRequestBodySize: this.maxBodyBytes },
    );
  }

  handle(req: IncomingMessage, res: ServerResponse): void {
    this.serve(req, res).catch((error: Error) => {
      // What Express did for a failing handler: log it, answer 500 if nothing was sent yet.
      this.logger.error(`MCP request failed: ${error.stack ?? String(error)}`);
      if (!res.headersSent) writeJsonRpcError(res, 500, -32603, 'Internal error');
      else res.destroy();
    });
  }

  private async serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const identified = await this.identity.forHttp(req);
    if ('refusal' in identified) {
      await this.audit.record({ caller: anonymous(identified.refusal.address), action: identified.refusal.action, outcome: 'rejected', detail: { reason: identified.refusal.reason, path: '/mcp' } });
      return refuse(req, res, 401, jsonRpcError(-32600, `Unauthorized: ${identified.refusal.reason}`));
    }
    const caller = identified.caller;
    const body = await readJsonBody(req, this.maxBodyBytes);
    if (body.kind === 'aborted') return;
    if (body.kind === 'too_large') return refuse(req, res, 413, jsonRpcError(-32600, `Request body exceeds ${this.maxBodyBytes} bytes`));
    if (body.kind === 'invalid') return writeJsonRpcError(res, 400, -32700, 'Parse error: the body is not valid JSON');
    const authInfo = { token: '', clientId: caller.user, scopes: [], extra: { caller } };
    await serveParsed(this.handler, req, res, { authInfo, parsedBody: body.kind === 'json' ? body.value : undefined });
  }
}
