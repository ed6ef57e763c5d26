import { context, type TextMapGetter } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** What one call of the `traced` tool received. */
export interface SeenCall {
  metaTraceparent: unknown;
  headerTraceparent: unknown;
}

const propagator = new W3CTraceContextPropagator();
const metaGetter: TextMapGetter<Record<string, unknown>> = {
  keys: (carrier) => Object.keys(carrier),
  get: (carrier, key) => (typeof carrier[key] === 'string' ? carrier[key] : undefined),
};

/**
 * A downstream MCP server as a platform team would run one: the official SDK (the 2025-11-25 line the
 * reference servers use) over stateless Streamable HTTP, instrumented with OpenTelemetry the usual way. Its
 * tool `traced` continues the trace context it gets in `_meta` (SEP-414) with a span of its own, exported
 * to `otlpUrl`, and records what came in `_meta` and in the HTTP header.
 */
export class TracedMcpServer {
  readonly calls: SeenCall[] = [];
  private http: Server | null = null;
  private readonly provider: BasicTracerProvider;

  constructor(otlpUrl: string) {
    this.provider = new BasicTracerProvider({
      resource: resourceFromAttributes({ 'service.name': 'downstream-mcp' }),
      spanProcessors: [new SimpleSpanProcessor(new OTLPTraceExporter({ url: `${otlpUrl}/v1/traces` }))],
    });
  }

  get url(): string {
    return `http://127.0.0.1:${(this.http!.address() as AddressInfo).port}/mcp`;
  }

  async start(): Promise<this> {
    const tracer = this.provider.getTracer('downstream');
    this.http = createServer((req, res) => {
      const server = new McpServer({ name: 'downstream', version: '1.0.0' });
      server.registerTool('traced', { description: 'answers, in a span of its own', inputSchema: {} }, (_args, extra) => {
        const meta = (extra._meta ?? {}) as Record<string, unknown>;
        this.calls.push({ metaTraceparent: meta.traceparent, headerTraceparent: extra.requestInfo?.headers?.traceparent });
        const parent = propagator.extract(context.active(), meta, metaGetter);
        tracer.startSpan('downstream traced', {}, parent).end();
        return { content: [{ type: 'text', text: 'traced ok' }] };
      });
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
      res.on('close', () => void transport.close().then(() => server.close()));
      void server.connect(transport).then(() => transport.handleRequest(req, res));
    });
    await new Promise<void>((resolve) => this.http!.listen(0, '127.0.0.1', resolve));
    return this;
  }

  async stop(): Promise<void> {
    await this.provider.shutdown();
    await new Promise((resolve) => this.http?.close(resolve));
  }
}
