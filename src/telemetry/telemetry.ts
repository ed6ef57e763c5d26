import { Injectable, Logger, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { AppConfig } from '../config/app-config.js';
import type { TracingSdk } from './tracing-sdk.js';

/**
 * Whether traces are exported, and the SDK when they are. Off (`telemetry.otlp_endpoint` empty) the
 * OpenTelemetry SDK is never loaded: `tracing` is null and every caller skips its span work, so
 * tracing off costs one null check per event (bench/tracing.ts measures on against off).
 */
@Injectable()
export class Telemetry implements OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger('Telemetry');
  private sdk: TracingSdk | null = null;

  constructor(private readonly config: AppConfig) {}

  get enabled(): boolean {
    return this.config.telemetry.otlpEndpoint !== '';
  }

  /** Request text, answers, prompts and file content go into spans only when this is true. */
  get captureContent(): boolean {
    return this.config.telemetry.captureContent;
  }

  get tracing(): TracingSdk | null {
    return this.sdk;
  }

  async onModuleInit(): Promise<void> {
    if (!this.enabled) return;
    const { TracingSdk } = await import('./tracing-sdk.js');
    this.sdk = new TracingSdk(this.config.telemetry, this.logger);
    this.logger.log(`exporting traces to ${this.config.telemetry.otlpEndpoint} (${this.config.telemetry.otlpProtocol})`);
  }

  /** The current trace context (inside a Task's run) as `traceparent`/`tracestate` entries: for `_meta` and HTTP headers. */
  traceContext(): Record<string, string> {
    const carrier: Record<string, string> = {};
    this.sdk?.inject(carrier);
    return carrier;
  }

  /** Spans still buffered are sent before the process exits. */
  async onApplicationShutdown(): Promise<void> {
    await this.sdk?.shutdown().catch((error: unknown) => this.logger.warn(`spans could not be flushed: ${(error as Error).message}`));
  }
}
