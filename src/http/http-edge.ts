import { Injectable, Logger } from '@nestjs/common';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { AuditService } from '../audit/audit.service.js';
import { AppConfig } from '../config/app-config.js';
import { anonymous } from '../identity/caller.js';
import { crossSiteRefusal } from './cross-site.js';
import { HostOriginGuard, printable, type EdgeRefusal } from './host-origin-guard.js';
import { overLimit } from './http-server.js';
import { OffRouterEndpoint } from './off-router-endpoint.js';
import { refuse } from './refusal.js';

/**
 * The methods some route serves. Anything else (TRACE, CONNECT, PUT, WebDAV...) is refused here, for
 * every path: undici's Request, which the MCP handler needs, throws on TRACE and CONNECT.
 */
const SERVED_METHODS = new Set(['GET', 'HEAD', 'POST', 'PATCH', 'DELETE', 'OPTIONS']);

/** The health probes, answered even past server.max_connections. */
const PROBES = /^\/(?:healthz|readyz)(?:\?|$)/;

/**
 * The one gate in front of every route (MCP, admin REST and page, probes, OpenAPI, unknown paths),
 * on node:http ahead of Express: the request target, the method, Host and Origin, and for admin
 * routes that change state, cross-site requests. Then the off-router endpoint's paths (/mcp) go to it
 * and everything else to the application (Express). Refusals are audited and close the connection.
 */
@Injectable()
export class HttpEdge {
  private readonly logger = new Logger('HttpEdge');
  private readonly guard: HostOriginGuard;

  constructor(
    private readonly endpoint: OffRouterEndpoint,
    private readonly audit: AuditService,
    config: AppConfig,
  ) {
    this.guard = new HostOriginGuard(config.server);
  }

  /** Takes every request off `server` ahead of the application (Express) listener, which keeps every path but the endpoint's. */
  mountOn(server: Server): void {
    const application = server.listeners('request') as ((req: IncomingMessage, res: ServerResponse) => void)[];
    server.removeAllListeners('request');
    server.on('request', (req: IncomingMessage, res: ServerResponse) => {
      // Not audited: under a flood of connections, one event each would add to the load that caused it.
      if (overLimit.has(req.socket) && !PROBES.test(req.url ?? '')) {
        return void refuse(req, res, 503, { error: 'unavailable', message: 'too many connections (server.max_connections); retry shortly' }, { 'Retry-After': '1' });
      }
      const offRouter = this.endpoint.path.test(req.url ?? '');
      const refusal = this.refusal(req);
      if (refusal) return void this.refuse(req, res, refusal, offRouter);
      if (offRouter) this.endpoint.handle(req, res);
      else for (const listener of application) listener.call(server, req, res);
    });
  }

  private refusal(req: IncomingMessage): EdgeRefusal | null {
    const target = req.url ?? '';
    // Origin-form only: an absolute-form target (`GET http://other/...`) is for proxies, not for us.
    if (!target.startsWith('/') && !(req.method === 'OPTIONS' && target === '*')) return { status: 400, reason: `malformed request target: ${printable(target)}` };
    if (!SERVED_METHODS.has(req.method ?? '')) return { status: 405, reason: `method not allowed: ${req.method}` };
    return this.guard.refusal(req.headers, req.headersDistinct) ?? crossSiteRefusal(req);
  }

  private refuse(req: IncomingMessage, res: ServerResponse, refusal: EdgeRefusal, offRouter: boolean): void {
    const allow = refusal.status === 405 ? { Allow: offRouter ? this.endpoint.allow : [...SERVED_METHODS].join(', ') } : undefined;
    const body = offRouter ? this.endpoint.refusalBody(refusal) : { error: ERROR_CODES[refusal.status], message: refusal.reason };
    const detail = { reason: refusal.reason, method: printable(req.method ?? ''), path: printable((req.url ?? '').split('?')[0]) };
    // The refusal stands whether or not its event could be written; a failed write is the log's to report.
    void this.audit
      .record({ caller: anonymous(req.socket.remoteAddress ?? null), action: 'http.request_rejected', outcome: 'rejected', detail })
      .catch((error: Error) => this.logger.warn(`could not audit a refused request: ${error.message}`))
      .finally(() => refuse(req, res, refusal.status, body, allow));
  }
}

const ERROR_CODES: Record<EdgeRefusal['status'], string> = { 400: 'bad_request', 403: 'forbidden', 405: 'method_not_allowed' };
