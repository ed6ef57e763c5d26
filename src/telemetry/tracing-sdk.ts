import {
  createTraceState,
  defaultTextMapSetter,
  diag,
  DiagLogLevel,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  TraceFlags,
  type Attributes,
  type Context,
  type Link,
  type Span,
  type SpanContext,
} from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter as OtlpJsonExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as OtlpProtobufExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, BatchSpanProcessor, RandomIdGenerator, type IdGenerator } from '@opentelemetry/sdk-trace-base';
import { ATTR_SERVICE_NAME, ATTR_SERVICE_VERSION } from '@opentelemetry/semantic-conventions';
import { SERVER_INFO } from '../common/server-info.js';
import type { AgentConfig } from '../config/agent-config.js';
import type { SpanRef } from './trace-context.js';

/** One finished span, recorded after the fact from what the run reported (its start, its end). */
export interface SpanRecord {
  name: string;
  parent: SpanRef | null;
  startMs: number;
  endMs: number;
  kind?: SpanKind;
  attributes?: Attributes;
  links?: SpanRef[];
  error?: string;
  /** The span's own ids, chosen earlier (a Task's span id is chosen at accept and stored with it). */
  ids?: { traceId: string; spanId: string };
}

/**
 * Hands out the ids chosen for the span being started (set just before `startSpan`, cleared just after:
 * both synchronous), else random ones. The Task's span id is fixed when the
 * Task is accepted (its children, on any replica, name it as parent) while the span itself is recorded
 * at the Task's end; the SDK lets an IdGenerator choose ids and nothing else (ADR 0029).
 */
class PresetIds implements IdGenerator {
  private readonly random = new RandomIdGenerator();
  next: { traceId: string; spanId: string } | null = null;

  generateTraceId(): string {
    return this.next?.traceId ?? this.random.generateTraceId();
  }

  generateSpanId(): string {
    return this.next?.spanId ?? this.random.generateSpanId();
  }
}

/**
 * The OpenTelemetry SDK as this service uses it: one tracer provider exporting OTLP over HTTP (protobuf
 * or JSON), nothing registered globally (several instances in one process stay apart), an
 * AsyncLocalStorage context manager for what runs under a Task's span (calls to other MCP servers), and
 * the W3C propagator. Loaded only when `telemetry.otlp_endpoint` is set.
 */
export class TracingSdk {
  private readonly ids = new PresetIds();
  private readonly provider: BasicTracerProvider;
  private readonly tracer;
  private readonly contexts = new AsyncLocalStorageContextManager().enable();
  private readonly propagator = new W3CTraceContextPropagator();

  constructor(telemetry: AgentConfig['telemetry'], logger: { warn(message: string): void }) {
    // The SDK reports a failed export on its diagnostic channel only, silent unless a logger is set (it is global).
    const warn = (message: string, ...args: unknown[]) => logger.warn(`${message} ${args.map((arg) => (arg instanceof Error ? arg.message : String(arg))).join(' ')}`.trim());
    diag.setLogger({ error: warn, warn, info: () => undefined, debug: () => undefined, verbose: () => undefined }, { logLevel: DiagLogLevel.WARN, suppressOverrideMessage: true });
    const url = `${telemetry.otlpEndpoint.replace(/\/+$/, '')}/v1/traces`;
    const exporter = telemetry.otlpProtocol === 'http/json' ? new OtlpJsonExporter({ url }) : new OtlpProtobufExporter({ url });
    this.provider = new BasicTracerProvider({
      resource: resourceFromAttributes({ [ATTR_SERVICE_NAME]: telemetry.serviceName, [ATTR_SERVICE_VERSION]: SERVER_INFO.version }),
      idGenerator: this.ids,
      spanProcessors: [new BatchSpanProcessor(exporter, { scheduledDelayMillis: 500 })],
    });
    this.tracer = this.provider.getTracer('ollama-agent-mcp', SERVER_INFO.version);
  }

  /** Records a span that already happened. */
  record(span: SpanRecord): void {
    this.open(span.name, span.parent, span.startMs, span).end(span.endMs);
  }

  /** Starts a span that ends later (a wait for a person); `end` it. */
  open(name: string, parent: SpanRef | null, startMs: number, options: Omit<SpanRecord, 'name' | 'parent' | 'startMs' | 'endMs'> = {}): Span {
    this.ids.next = options.ids ?? null;
    const span = this.tracer.startSpan(
      name,
      { kind: options.kind ?? SpanKind.INTERNAL, startTime: startMs, attributes: options.attributes, links: options.links?.map(linkOf), root: parent === null },
      parent ? contextOf(parent) : ROOT_CONTEXT,
    );
    this.ids.next = null;
    if (options.error !== undefined) span.setStatus({ code: SpanStatusCode.ERROR, message: options.error });
    return span;
  }

  /** Runs `work` under `parent` as the active context: what it sends to other servers carries it. */
  within<T>(parent: SpanRef, work: () => T): T {
    return this.contexts.with(contextOf(parent), work);
  }

  /** The active context's `traceparent`/`tracestate`, written into `carrier`. */
  inject(carrier: Record<string, string>): void {
    this.propagator.inject(this.contexts.active(), carrier, defaultTextMapSetter);
  }

  async shutdown(): Promise<void> {
    await this.provider.shutdown();
    this.contexts.disable();
  }
}

function spanContextOf(ref: SpanRef): SpanContext {
  return {
    traceId: ref.traceId,
    spanId: ref.spanId,
    traceFlags: ref.sampled ? TraceFlags.SAMPLED : TraceFlags.NONE,
    isRemote: true,
    ...(ref.traceState ? { traceState: createTraceState(ref.traceState) } : {}),
  };
}

const contextOf = (ref: SpanRef): Context => trace.setSpanContext(ROOT_CONTEXT, spanContextOf(ref));

const linkOf = (ref: SpanRef): Link => ({ context: spanContextOf(ref) });
