import { Injectable } from '@nestjs/common';
import { RunMetrics } from './run-metrics.js';
import { RunSpans } from './run-spans.js';
import { Telemetry } from './telemetry.js';
import type { TracedTask } from './traced-task.js';

/** What the queue tells telemetry of a Task's life (accept, claim, checkpoints, end): its spans and its metrics. */
@Injectable()
export class TaskTelemetry {
  constructor(
    private readonly spans: RunSpans,
    private readonly metrics: RunMetrics,
    private readonly telemetry: Telemetry,
  ) {}

  /** Whether spans are recorded (the SDK is loaded). */
  get tracing(): boolean {
    return this.telemetry.tracing !== null;
  }

  accepted(task: TracedTask, startMs: number): void {
    this.spans.accepted(task, startMs);
  }

  started(task: TracedTask): void {
    this.metrics.started(task);
    this.spans.started(task);
  }

  within<T>(task: TracedTask, work: () => Promise<T>): Promise<T> {
    return this.spans.within(task, work);
  }

  checkpoint<T>(task: TracedTask, which: 'before' | 'after', work: () => Promise<T>): Promise<T> {
    return this.spans.checkpoint(task, which, work);
  }

  /** The run left this process (ended, or its lease lost): nothing of it is kept. */
  forget(taskId: string): void {
    this.metrics.forget(taskId);
    this.spans.forget(taskId);
  }

  ended(task: TracedTask, status: string, outcome: { result: string; inputTokens: number; outputTokens: number; resumes?: TracedTask | null }): void {
    this.metrics.ended(task, status);
    this.spans.ended(task, status, outcome);
  }
}
