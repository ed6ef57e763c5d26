import { Injectable, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import type { RunEvent } from '../agent/core/run-events.js';
import { RunEventHub } from '../agent/run-event-hub.js';
import { TOOL_STEP_KINDS } from '../agent/task-step.entity.js';
import type { StepRecord } from '../agent/trace.repository.js';
import { Metrics } from '../metrics/metrics.js';
import type { TracedTask } from './traced-task.js';

/** The surfaces a Task can come from; anything else (an old row) counts as `unknown`, so the label set stays bounded. */
const SURFACES = new Set(['mcp-http', 'stdio', 'chat', 'a2a', 'console', 'schedule', 'trigger']);

/**
 * The GenAI measures of the Prometheus endpoint, from the run's events (model and tool steps) and the
 * queue's claim and end. Counted in the process that runs the Task; labels bounded (see Metrics).
 */
@Injectable()
export class RunMetrics implements OnModuleInit, OnModuleDestroy {
  /** The tier of each Task running here, for the model-call labels. */
  private readonly tiers = new Map<string, string>();
  private unhook: (() => void) | null = null;

  constructor(
    private readonly metrics: Metrics,
    private readonly hub: RunEventHub,
  ) {}

  onModuleInit(): void {
    this.unhook = this.hub.subscribe((event) => this.onEvent(event));
  }

  onModuleDestroy(): void {
    this.unhook?.();
  }

  started(task: TracedTask): void {
    this.tiers.set(task.id, task.tier);
    this.metrics.queueWait.observe(Math.max(0, Date.now() - Date.parse(task.createdAt)) / 1000);
  }

  forget(taskId: string): void {
    this.tiers.delete(taskId);
  }

  ended(task: TracedTask, status: string): void {
    this.tiers.delete(task.id);
    this.metrics.tasksEnded.inc({ surface: task.surface && SURFACES.has(task.surface) ? task.surface : 'unknown', status });
  }

  private onEvent(event: RunEvent): void {
    if (event.type !== 'step') return;
    const tier = this.tiers.get(event.taskId);
    if (tier !== undefined) this.step(event.step, tier);
  }

  private step(step: StepRecord, tier: string): void {
    if (step.kind === 'model_call') {
      const model = typeof step.detail.model === 'string' ? step.detail.model : 'unknown';
      this.metrics.genAiCallDuration.observe({ model, tier, outcome: step.outcome }, step.durationMs / 1000);
      if (step.outcome !== 'ok') return;
      this.metrics.genAiTokens.inc({ model, tier, direction: 'input' }, step.inputTokens ?? 0);
      this.metrics.genAiTokens.inc({ model, tier, direction: 'output' }, step.outputTokens ?? 0);
      if (typeof step.detail.firstTokenMs === 'number') this.metrics.genAiTimeToFirstToken.observe({ model, tier }, step.detail.firstTokenMs / 1000);
      return;
    }
    if (!TOOL_STEP_KINDS.includes(step.kind)) return;
    this.metrics.toolCallDuration.observe({ source: step.kind }, step.durationMs / 1000);
    if (step.outcome !== 'ok') this.metrics.toolCallErrors.inc({ source: step.kind, outcome: step.outcome });
  }
}
