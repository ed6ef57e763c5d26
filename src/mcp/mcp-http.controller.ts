import { All, Controller, Logger, Req, Res } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { createMcpHandler, type McpHttpHandler } from '@modelcontextprotocol/server';
import type { Request, Response } from 'express';
import { AppConfig } from '../config/app-config.js';
import { AuditService } from '../audit/audit.service.js';
import { anonymous, type Caller } from '../identity/caller.js';
import { IdentityService } from '../identity/identity.service.js';
import { HttpRequestGuard, maxRequestBodyBytes } from './http-guards.js';
import { McpServerFactory } from './mcp-server.factory.js';
import { readJsonBody, serveParsed, writeJsonRpcError } from './node-fetch-bridge.js';

/**
 * Stateless Streamable HTTP at /mcp. The SDK handler answers GET/DELETE with 405, never mints a
 * session id, and runs the header/_meta ladder (-32020/-32022/-32602). The body is read here, with a
 * limit sized for the configured image limits (413 above it), and handed to the SDK already parsed.
 */
@ApiExcludeController()
@Controller()
export class McpHttpController {
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

  @All('mcp')
  async serve(@Req() req: Request, @Res() res: Response): Promise<void> {
    const refusal = this.guard.refusal(req.headers.origin, req.headers.host);
    if (refusal) {
      await this.audit.record({ caller: anonymous(req.socket.remoteAddress ?? null), action: 'mcp.origin_rejected', outcome: 'rejected', detail: { reason: refusal } });
      return writeJsonRpcError(res, 403, -32600, `Forbidden: ${refusal}`);
    }
    const body = await readJsonBody(req, this.maxBodyBytes);
    if (body.kind === 'too_large') return writeJsonRpcError(res, 413, -32600, `Request body exceeds ${this.maxBodyBytes} bytes`);
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
