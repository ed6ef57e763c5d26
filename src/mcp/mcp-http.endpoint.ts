import { Injectable, Logger } from '@nestjs/common';
import { createMcpHandler, type McpHttpHandler } from '@modelcontextprotocol/server';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { RequestLimits } from '../config/request-limits.js';
import { MAX_JSON_DEPTH } from '../http/json-depth.js';
import type { Caller } from '../identity/caller.js';
import { printable, type EdgeRefusal } from '../http/host-origin-guard.js';
import { edgeRoutesOf, OffRouterEndpoint } from '../http/off-router-endpoint.js';
import { jsonRpcError } from '../http/refusal.js';
import { RequestAdmission, type SurfaceErrors } from '../http/request-admission.js';
import { AgentMcpServers } from './agent-mcp-servers.js';
import { serveParsed } from './node-fetch-bridge.js';
import { listenRequestOf, SubscriptionsListen } from './subscriptions-listen.js';

/**
 * Stateless Streamable HTTP at /mcp, served straight from node:http rather than through Express and
 * Nest's router, which cost more per call than this endpoint's own work (ADR 0007); HttpEdge has
 * checked the method, Host and Origin. The SDK handler answers GET/DELETE with 405, never mints a
 * session id, and runs the header/_meta ladder (-32020/-32022/-32602). RequestAdmission identifies the
 * caller from the headers before a byte of the body is read, then reads the body with /mcp's limit
 * (RequestLimits, sized for the configured image limits: 413 above it); the SDK gets it already parsed.
 */
@Injectable()
export class McpHttpEndpoint extends OffRouterEndpoint {
  /** `/mcp`, `/mcp/`, with or without a query string, and POST: the route table's row. */
  readonly path: RegExp;
  readonly allow: string;
  private readonly logger = new Logger('McpHttp');
  private readonly handler: McpHttpHandler;

  constructor(
    servers: AgentMcpServers,
    private readonly admission: RequestAdmission,
    limits: RequestLimits,
    private readonly listen: SubscriptionsListen,
  ) {
    super();
    ({ path: this.path, allow: this.allow } = edgeRoutesOf('mcp'));
    const onerror = (error: Error) => this.logger.debug?.(`MCP request rejected: ${error.message}`);
    this.handler = createMcpHandler(({ era, authInfo }) => servers.create({ era }, (authInfo?.extra as { caller: Caller }).caller, true), {
      legacy: 'stateless',
      onerror,
      maxRequestBodySize: limits.bodyBytes('mcp-http'),
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
    const admitted = await this.admission.request(req, res, MCP_ERRORS, '/mcp');
    if (!admitted) return;
    const { caller, body, lease } = admitted;
    // Held open and fed by the Task events: served here, not by the SDK's listen router (see SubscriptionsListen).
    const listen = body === undefined ? null : listenRequestOf(body);
    if (listen) {
      lease.release();
      return this.listen.serve(req, res, caller, listen);
    }
    const authInfo = { token: '', clientId: caller.user, scopes: [], extra: { caller } };
    await serveParsed(this.handler, req, res, { authInfo, parsedBody: body });
  }
}

/**
 * /mcp's refusals as JSON-RPC errors. A refused body is audited like any refused call (the caller is
 * known by now): the event names the method and tool when the message is readable, never its content.
 */
const MCP_ERRORS: SurfaceErrors = {
  transport: 'mcp-http',
  bodyRejected: 'mcp.request_rejected',
  unadmitted: ({ message }) => jsonRpcError(-32600, message),
  busy: () => jsonRpcError(-32000, 'Service busy: too many request bodies in flight; retry shortly'),
  badBody(problem, maxBytes) {
    // A POST without a body goes to the SDK, which answers it in its own words.
    if (problem.kind === 'none') return null;
    const [status, code, message]: [400 | 413, number, string] =
      problem.kind === 'too_large'
        ? [413, -32600, `Request body exceeds ${maxBytes} bytes`]
        : problem.kind === 'invalid'
          ? [400, -32700, `Parse error: ${problem.reason}`]
          : [400, -32600, `Invalid Request: JSON nested deeper than ${MAX_JSON_DEPTH} levels`];
    const { id, method, tool } = envelopeOf(problem.kind === 'too_deep' ? problem.value : undefined);
    return { status, body: { ...jsonRpcError(code, message), id }, detail: { reason: message, method, tool } };
  },
};

const STATUS_WORDS: Record<EdgeRefusal['status'], string> = { 400: 'Bad Request', 403: 'Forbidden', 405: 'Method Not Allowed' };

/** The id, method and tool name of a parsed message, when they are plain values (bounded for the audit log). */
function envelopeOf(message: unknown): { id: string | number | null; method: string | null; tool: string | null } {
  const record = typeof message === 'object' && message !== null && !Array.isArray(message) ? (message as Record<string, unknown>) : {};
  const params = typeof record.params === 'object' && record.params !== null ? (record.params as Record<string, unknown>) : {};
  const id = typeof record.id === 'string' ? record.id.slice(0, 200) : typeof record.id === 'number' ? record.id : null;
  const text = (value: unknown) => (typeof value === 'string' ? printable(value) : null);
  return { id, method: text(record.method), tool: text(params.name) };
}
