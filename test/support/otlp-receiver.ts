import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import { pollUntil } from './poll.js';

/**
 * OTLP/HTTP's trace messages as the OpenTelemetry JS packages define them: the protobufjs root generated from
 * opentelemetry-proto that @opentelemetry/otlp-transformer shipped up to 0.217 (a devDependency under the alias
 * otlp-transformer-protobuf; later versions write protobuf by hand and decode only responses).
 */
const root = createRequire(import.meta.url)('otlp-transformer-protobuf/build/src/generated/root.js');
const TraceService = root.opentelemetry.proto.collector.trace.v1;

export interface ReceivedSpan {
  service: string;
  traceId: string;
  spanId: string;
  /** '' for a root span. */
  parentSpanId: string;
  name: string;
  kind: number;
  attributes: Record<string, unknown>;
  links: { traceId: string; spanId: string }[];
  status: { code: number; message: string };
  startMs: number;
  endMs: number;
}

const hex = (bytes: Uint8Array | null | undefined) => (bytes && bytes.length > 0 ? Buffer.from(bytes).toString('hex') : '');

function valueOf(value: any): unknown {
  if (!value) return null;
  if (value.stringValue !== undefined && value.stringValue !== null) return value.stringValue;
  if (value.boolValue !== undefined && value.boolValue !== null) return value.boolValue;
  if (value.intValue !== undefined && value.intValue !== null) return Number(value.intValue);
  if (value.doubleValue !== undefined && value.doubleValue !== null) return value.doubleValue;
  if (value.arrayValue) return (value.arrayValue.values ?? []).map(valueOf);
  return null;
}

const attributesOf = (list: any[] | undefined) => Object.fromEntries((list ?? []).map((attribute) => [attribute.key, valueOf(attribute.value)]));

/**
 * An OTLP/HTTP trace receiver in the test process (the OpenTelemetry Collector cannot be installed here):
 * `POST /v1/traces` with `application/x-protobuf` (decoded with the definitions above) or `application/json`,
 * answered as a collector does. Keeps every span and every raw body (to look for text that must not be there).
 */
export class OtlpReceiver {
  readonly spans: ReceivedSpan[] = [];
  readonly bodies: Buffer[] = [];
  readonly contentTypes: string[] = [];
  private server: Server | null = null;

  get url(): string {
    return `http://127.0.0.1:${(this.server!.address() as AddressInfo).port}`;
  }

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const body = Buffer.concat(chunks);
        if (req.method !== 'POST' || req.url !== '/v1/traces') return void res.writeHead(404).end();
        const type = req.headers['content-type'] ?? '';
        this.bodies.push(body);
        this.contentTypes.push(type);
        try {
          if (type.startsWith('application/json')) this.collectJson(JSON.parse(body.toString('utf8')));
          else this.collect(TraceService.ExportTraceServiceRequest.decode(body));
        } catch (error) {
          return void res.writeHead(400, { 'Content-Type': 'text/plain' }).end(String(error));
        }
        if (type.startsWith('application/json')) res.writeHead(200, { 'Content-Type': 'application/json' }).end('{}');
        else res.writeHead(200, { 'Content-Type': 'application/x-protobuf' }).end(Buffer.from(TraceService.ExportTraceServiceResponse.encode({}).finish()));
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    return this;
  }

  async stop(): Promise<void> {
    await new Promise((resolve) => this.server?.close(resolve));
  }

  /** The spans of one trace. */
  trace(traceId: string): ReceivedSpan[] {
    return this.spans.filter((span) => span.traceId === traceId);
  }

  /** Waits until a span named `name` of `traceId` has arrived (the service batches spans) and returns the trace. */
  async traceWith(traceId: string, name: string | RegExp, timeoutMs = 15_000): Promise<ReceivedSpan[]> {
    return pollUntil(
      async () => (this.trace(traceId).some((span) => (typeof name === 'string' ? span.name === name : name.test(span.name))) ? this.trace(traceId) : undefined),
      `span ${String(name)} of trace ${traceId}`,
      {
        timeoutMs,
        everyMs: 100,
        lastSeen: () =>
          this.trace(traceId)
            .map((span) => span.name)
            .join(', '),
      },
    );
  }

  private collect(request: any): void {
    for (const resourceSpans of request.resourceSpans ?? []) {
      const service = String(attributesOf(resourceSpans.resource?.attributes)['service.name'] ?? '');
      for (const scopeSpans of resourceSpans.scopeSpans ?? []) {
        for (const span of scopeSpans.spans ?? []) {
          this.spans.push({
            service,
            traceId: hex(span.traceId),
            spanId: hex(span.spanId),
            parentSpanId: hex(span.parentSpanId),
            name: span.name,
            kind: span.kind,
            attributes: attributesOf(span.attributes),
            links: (span.links ?? []).map((link: any) => ({ traceId: hex(link.traceId), spanId: hex(link.spanId) })),
            status: { code: span.status?.code ?? 0, message: span.status?.message ?? '' },
            startMs: Number(BigInt(String(span.startTimeUnixNano)) / 1_000_000n),
            endMs: Number(BigInt(String(span.endTimeUnixNano)) / 1_000_000n),
          });
        }
      }
    }
  }

  /** OTLP/JSON: ids as hex strings, times as decimal strings (the OTLP JSON mapping). */
  private collectJson(request: any): void {
    for (const resourceSpans of request.resourceSpans ?? []) {
      const service = String(attributesOf(resourceSpans.resource?.attributes)['service.name'] ?? '');
      for (const scopeSpans of resourceSpans.scopeSpans ?? []) {
        for (const span of scopeSpans.spans ?? []) {
          this.spans.push({
            service,
            traceId: span.traceId,
            spanId: span.spanId,
            parentSpanId: span.parentSpanId ?? '',
            name: span.name,
            kind: span.kind,
            attributes: attributesOf(span.attributes),
            links: (span.links ?? []).map((link: any) => ({ traceId: link.traceId, spanId: link.spanId })),
            status: { code: span.status?.code ?? 0, message: span.status?.message ?? '' },
            startMs: Number(BigInt(span.startTimeUnixNano) / 1_000_000n),
            endMs: Number(BigInt(span.endTimeUnixNano) / 1_000_000n),
          });
        }
      }
    }
  }
}
