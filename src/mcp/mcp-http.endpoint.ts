import { Injectable, Logger } from '@nestjs/common';
import { createMcpHandler, type McpHttpHandler } from '@modelcontextprotocol/server';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { AppConfig } from '../config/app-config.js';
import { maxRequestBodyBytes } from '../config/request-limits.js';
import { BodyBudget } from '../http/body-budget.js';
import { readJsonBody } from '../http/json-body.js';
import { MAX_JSON_DEPTH } from '../http/json-depth.js';
import { AuditService } from '../audit/audit.service.js';
import type { Caller } from '../identity/caller.js';
import { printable, type EdgeRefusal } from '../http/host-origin-guard.js';
import { OffRouterEndpoint } from '../http/off-router-endpoint.js';
import { jsonRpcError, refuse } from '../http/refusal.js';
import { SurfaceIdentity } from '../http/surface-identity.js';
import { AgentMcpServers } from './agent-mcp-servers.js';
import { serveParsed } from './node-fetch-bridge.js';
import { listenRequestOf, SubscriptionsListen } from './subscriptions-listen.js';

/**
 * Stateless Streamable HTTP at /mcp, served straight from node:http rather than through Express and
 * Nest's router, which cost more per call than this endpoint's own work (ADR 0007); HttpEdge has
 * checked the method, Host and Origin. The SDK handler answers GET/DELETE with 405, never mints a
 * session id, and runs the header/_meta ladder (-32020/-32022/-32602). The caller is identified from
 * the headers before a byte of the body is read; then the body is read here, with a limit sized for
 * the configured image limits (413 above it), and handed to the SDK already parsed.
 */
@Injectable()
export class McpHttpEndpoint extends OffRouterEndpoint {
  /** `/mcp`, `/mcp/`, with or without a query string: the paths Express's default (non-strict) routing matched. */
  readonly path = /^\/mcp\/?(?:\?|$)/i;
  readonly allow = 'POST';
  private readonly logger = new Logger('McpHttp');
  private readonly handler: McpHttpHandler;
  private readonly maxBodyBytes: number;

  constructor(
    servers: AgentMcpServers,
    private readonly identity: SurfaceIdentity,
    private readonly audit: AuditService,
    private readonly budget: BodyBudget,
    config: AppConfig,
    private readonly listen: SubscriptionsListen,
  ) {
    super();
    this.maxBodyBytes = maxRequestBodyBytes(config.mcp.images.maxTotalBytes);
    const onerror = (error: Error) => this.logger.debug?.(`MCP request rejected: ${error.message}`);
    this.handler = createMcpHandler(({ era, authInfo }) => servers.create({ era }, (authInfo?.extra as { caller: Caller }).caller, true), {
      legacy: 'stateless',
      onerror,
      maxRequestBodySize: this.maxBodyBytes,
    });
  }

  refusalBody(refusal: EdgeRefusal): unknown {
    return jsonRpcError(-32600, `${STATUS_WORDS[refusal.status]}: ${refusal.reason}`);
  }

  handle(req: IncomingMessage, res: ServerResponse): void {
    this.serve(req, res).catch((error: Error) => {
      // What Express did for a failing handler: log it, answer 500 if nothing was sent yet.
      this.logger.error(`MCP request failed: ${error.stack ?? String(error)}`);
      if (!res.headersSent) res.writeHead(500, { 'Content-Type': 'application/json' }).end(JSON.stringify(jsonRpcError(-32603, 'Internal error')));
      else res.destroy();
    });
  }

  private async serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const admission = await this.identity.admit(req, 'mcp-http', '/mcp');
    if ('refusal' in admission) return refuse(req, res, admission.refusal.status, jsonRpcError(-32600, admission.refusal.message), admission.refusal.headers);
    const { caller } = admission;
    // What the body holds counts against server.max_buffered_bytes until the answer is written.
    const lease = this.budget.lease();
    res.once('close', lease.release);
    const body = await readJsonBody(req, this.maxBodyBytes, lease);
    if (body.kind === 'aborted') return;
    if (body.kind === 'busy') return refuse(req, res, 503, jsonRpcError(-32000, 'Service busy: too many request bodies in flight; retry shortly'), { 'Retry-After': '1' });
    if (body.kind === 'too_large') return this.refuseBody(req, res, caller, 413, -32600, `Request body exceeds ${this.maxBodyBytes} bytes`);
    if (body.kind === 'invalid') return this.refuseBody(req, res, caller, 400, -32700, `Parse error: ${body.reason}`);
    if (body.kind === 'too_deep') return this.refuseBody(req, res, caller, 400, -32600, `Invalid Request: JSON nested deeper than ${MAX_JSON_DEPTH} levels`, body.value);
    // Held open and fed by the Task events: served here, not by the SDK's listen router (see SubscriptionsListen).
    const listen = body.kind === 'json' ? listenRequestOf(body.value) : null;
    if (listen) {
      lease.release();
      return this.listen.serve(req, res, caller, listen);
    }
    const authInfo = { token: '', clientId: caller.user, scopes: [], extra: { caller } };
    await serveParsed(this.handler, req, res, { authInfo, parsedBody: body.kind === 'json' ? body.value : undefined });
  }

  /**
   * A body refused before the SDK sees it, audited like any refused call: the caller is known by now.
   * The event names the method and tool when the message is readable, never its content.
   */
  private async refuseBody(req: IncomingMessage, res: ServerResponse, caller: Caller, status: number, code: number, message: string, parsed?: unknown): Promise<void> {
    const { id, method, tool } = envelopeOf(parsed);
    await this.audit.record({ caller, action: 'mcp.request_rejected', outcome: 'rejected', detail: { reason: message, method, tool } });
    refuse(req, res, status, { ...jsonRpcError(code, message), id });
  }
}

const STATUS_WORDS: Record<EdgeRefusal['status'], string> = { 400: 'Bad Request', 403: 'Forbidden', 405: 'Method Not Allowed' };

/** The id, method and tool name of a parsed message, when they are plain values (bounded for the audit log). */
function envelopeOf(message: unknown): { id: string | number | null; method: string | null; tool: string | null } {
  const record = typeof message === 'object' && message !== null && !Array.isArray(message) ? (message as Record<string, unknown>) : {};
  const params = typeof record.params === 'object' && record.params !== null ? (record.params as Record<string, unknown>) : {};
  const id = typeof record.id === 'string' ? record.id.slice(0, 200) : typeof record.id === 'number' ? record.id : null;
  const text = (value: unknown) => (typeof value === 'string' ? printable(value) : null);
  return { id, method: text(record.method), tool: text(params.name) };
}
