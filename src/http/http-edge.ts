import { Injectable, Logger } from '@nestjs/common';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { AuditService } from '../audit/audit.service.js';
import { AppConfig } from '../config/app-config.js';
import { anonymous } from '../identity/caller.js';
import { McpHttpEndpoint } from '../mcp/mcp-http.endpoint.js';
import { crossSiteRefusal } from './cross-site.js';
import { HostOriginGuard, printable, type EdgeRefusal } from './host-origin-guard.js';
import { jsonRpcError, refuse } from './refusal.js';

/** `/mcp`, `/mcp/`, with or without a query string: the paths Express's default (non-strict) routing matched. */
const MCP_PATH = /^\/mcp\/?(?:\?|$)/i;

/**
 * The methods some route serves. Anything else (TRACE, CONNECT, PUT, WebDAV...) is refused here, for
 * every path: undici's Request, which the MCP handler needs, throws on TRACE and CONNECT.
 */
const SERVED_METHODS = new Set(['GET', 'HEAD', 'POST', 'DELETE', 'OPTIONS']);

/**
 * The one gate in front of every route (MCP, admin REST and page, probes, OpenAPI, unknown paths),
 * on node:http ahead of Express: the request target, the method, Host and Origin, and for admin
 * routes that change state, cross-site requests. Then `/mcp` goes to its endpoint (off Express, ADR
 * 0007) and everything else to the application. Refusals are audited and close the connection.
 */
@Injectable()
export class HttpEdge {
  private readonly logger = new Logger('HttpEdge');
  private readonly guard: HostOriginGuard;

  constructor(
    private readonly mcp: McpHttpEndpoint,
    private readonly audit: AuditService,
    config: AppConfig,
  ) {
    this.guard = new HostOriginGuard(config.server);
  }

  /** Takes every request off `server` ahead of the application (Express) listener, which keeps every path but /mcp. */
  mountOn(server: Server): void {
    const application = server.listeners('request') as ((req: IncomingMessage, res: ServerResponse) => void)[];
    server.removeAllListeners('request');
    server.on('request', (req: IncomingMessage, res: ServerResponse) => {
      const isMcp = MCP_PATH.test(req.url ?? '');
      const refusal = this.refusal(req, isMcp);
      if (refusal) return void this.refuse(req, res, refusal, isMcp);
      if (isMcp) this.mcp.handle(req, res);
      else for (const listener of application) listener.call(server, req, res);
    });
  }

  private refusal(req: IncomingMessage, isMcp: boolean): EdgeRefusal | null {
    const target = req.url ?? '';
    // Origin-form only: an absolute-form target (`GET http://other/...`) is for proxies, not for us.
    if (!target.startsWith('/') && !(req.method === 'OPTIONS' && target === '*')) return { status: 400, reason: `malformed request target: ${printable(target)}` };
    if (!SERVED_METHODS.has(req.method ?? '')) return { status: 405, reason: `method not allowed: ${req.method}` };
    return this.guard.refusal(req.headers, req.headersDistinct) ?? (isMcp ? null : crossSiteRefusal(req));
  }

  private refuse(req: IncomingMessage, res: ServerResponse, refusal: EdgeRefusal, isMcp: boolean): void {
    const allow = refusal.status === 405 ? { Allow: isMcp ? 'POST' : [...SERVED_METHODS].join(', ') } : undefined;
    const body = isMcp ? jsonRpcError(-32600, `${STATUS_WORDS[refusal.status]}: ${refusal.reason}`) : { error: ERROR_CODES[refusal.status], message: refusal.reason };
    const detail = { reason: refusal.reason, method: printable(req.method ?? ''), path: printable((req.url ?? '').split('?')[0]) };
    // The refusal stands whether or not its event could be written; a failed write is the log's to report.
    void this.audit
      .record({ caller: anonymous(req.socket.remoteAddress ?? null), action: 'http.request_rejected', outcome: 'rejected', detail })
      .catch((error: Error) => this.logger.warn(`could not audit a refused request: ${error.message}`))
      .finally(() => refuse(req, res, refusal.status, body, allow));
  }
}

const STATUS_WORDS: Record<EdgeRefusal['status'], string> = { 400: 'Bad Request', 403: 'Forbidden', 405: 'Method Not Allowed' };
const ERROR_CODES: Record<EdgeRefusal['status'], string> = { 400: 'bad_request', 403: 'forbidden', 405: 'method_not_allowed' };
