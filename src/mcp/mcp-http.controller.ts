import { All, Controller, Logger, Req, Res } from '@nestjs/common';
import { createMcpHandler } from '@modelcontextprotocol/server';
import { toNodeHandler, type NodeMcpRequestHandler } from '@modelcontextprotocol/node';
import type { Request, Response } from 'express';
import { AppConfig } from '../config/app-config.js';
import type { Caller } from '../identity/caller.js';
import { IdentityService } from '../identity/identity.service.js';
import { HttpRequestGuard, maxRequestBodyBytes } from './http-guards.js';
import { McpServerFactory } from './mcp-server.factory.js';

/**
 * Stateless Streamable HTTP at /mcp. The SDK handler answers GET/DELETE with 405, never mints a
 * session id, and runs the header/_meta ladder (-32020/-32022/-32602); it reads the body itself, so
 * its size limit (413) applies, sized for the configured image limits.
 */
@Controller()
export class McpHttpController {
  private readonly logger = new Logger('McpHttp');
  private readonly guard: HttpRequestGuard;
  private readonly handle: NodeMcpRequestHandler;

  constructor(
    factory: McpServerFactory,
    private readonly identity: IdentityService,
    config: AppConfig,
  ) {
    this.guard = new HttpRequestGuard(config.server);
    const maxRequestBodySize = maxRequestBodyBytes(config.mcp.images);
    const onerror = (error: Error) => this.logger.debug?.(`MCP request rejected: ${error.message}`);
    const handler = createMcpHandler(
      ({ era, authInfo }) => factory.create({ era }, (authInfo?.extra as { caller: Caller }).caller),
      { legacy: 'stateless', onerror, maxRequestBodySize },
    );
    this.handle = toNodeHandler(handler, { onerror, maxRequestBodySize });
  }

  @All('mcp')
  async serve(@Req() req: Request, @Res() res: Response): Promise<void> {
    const refusal = this.guard.refusal(req.headers.origin, req.headers.host);
    if (refusal) {
      res.status(403).json({ jsonrpc: '2.0', id: null, error: { code: -32600, message: `Forbidden: ${refusal}` } });
      return;
    }
    const caller = this.identity.forHttp(req.socket.remoteAddress);
    Object.assign(req, { auth: { token: '', clientId: caller.user, scopes: [], extra: { caller } } });
    await this.handle(req, res);
  }
}
