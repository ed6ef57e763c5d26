import { Injectable, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import { SpanKind, type Attributes, type Span } from '@opentelemetry/api';
import type { RunEvent } from '../agent/core/run-events.js';
import { RunEventHub } from '../agent/run-event-hub.js';
import { TOOL_STEP_KINDS } from '../agent/task-step.entity.js';
import type { StepRecord } from '../agent/trace.repository.js';
import { Telemetry } from './telemetry.js';
import type { TracedTask } from './traced-task.js';
import { callerRef, type SpanRef } from './trace-context.js';
import type { TracingSdk } from './tracing-sdk.js';

/** What a tool's name looks like (MCP's tool names, prefixed with their server's for other servers). */
const TOOL_NAME = /^[A-Za-z0-9_.-]{1,128}$/;

/** How much of a tool's arguments or a model's answer a span keeps with `telemetry.capture_content`. */
const CONTENT_CHARS = 4000;

interface TracedRun {
  task: TracedTask;
  parent: SpanRef;
  wait: Span | null;
  tokens: { input: number; output: number };
}

/**
 * The spans of a Task (issue 39), built from what the run emits (RunEvents) and from the queue's
 * accept, claim, checkpoints and end, never from inside the loop. One trace per Task: the Task's span
 * (`invoke_agent`, its id chosen at accept and stored on the row) under the caller's span when there was
 * one; under it the accept, the queue wait, each model call (GenAI semantic conventions), each tool call,
 * each wait for a person and each checkpoint. Steps arrive finished, so their spans are recorded after the
 * fact with the step's own start and duration. No request text, answer or argument unless
 * `telemetry.capture_content` is true.
 */
@Injectable()
export class RunSpans implements OnModuleInit, OnModuleDestroy {
  private readonly runs = new Map<string, TracedRun>();
  private unhook: (() => void) | null = null;

  constructor(
    private readonly telemetry: Telemetry,
    private readonly hub: RunEventHub,
  ) {}

  onModuleInit(): void {
    if (this.telemetry.enabled) this.unhook = this.hub.subscribe((event) => this.onEvent(event));
  }

  onModuleDestroy(): void {
    this.unhook?.();
  }

  /** The Task was stored: its accept, from when the request reached the queue until it committed. */
  accepted(task: TracedTask, startMs: number): void {
    const sdk = this.telemetry.tracing;
    const parent = taskRef(task);
    if (!sdk || !parent) return;
    sdk.record({ name: 'accept', parent, startMs, endMs: Date.now(), attributes: { 'agent.task.id': task.id, 'agent.task.surface': task.surface ?? '' } });
  }

  /** The worker claimed it: the queue wait ends, the run's spans start. */
  started(task: TracedTask): void {
    const sdk = this.telemetry.tracing;
    const parent = taskRef(task);
    if (!sdk || !parent) return;
    this.runs.set(task.id, { task, parent, wait: null, tokens: { input: 0, output: 0 } });
    sdk.record({ name: 'queue wait', parent, startMs: Date.parse(task.createdAt), endMs: Date.now(), attributes: { 'agent.task.id': task.id } });
  }

  /** Runs `work` under the Task's span: a call to another MCP server carries it as its parent. */
  within<T>(task: TracedTask, work: () => Promise<T>): Promise<T> {
    const sdk = this.telemetry.tracing;
    const parent = taskRef(task);
    return sdk && parent ? sdk.within(parent, work) : work();
  }

  /** A workspace checkpoint (before or after the run) as a span of its own. */
  async checkpoint<T>(task: TracedTask, which: 'before' | 'after', work: () => Promise<T>): Promise<T> {
    const sdk = this.telemetry.tracing;
    const parent = taskRef(task);
    if (!sdk || !parent) return work();
    const startMs = Date.now();
    let error: string | undefined;
    try {
      return await work();
    } catch (thrown) {
      error = (thrown as Error).name;
      throw thrown;
    } finally {
      sdk.record({ name: `checkpoint ${which}`, parent, startMs, endMs: Date.now(), attributes: { 'agent.checkpoint': which }, ...(error ? { error } : {}) });
    }
  }

  /** The run left this process without an end here (a lost lease): its open wait ends, nothing is kept. */
  forget(taskId: string): void {
    this.runs.get(taskId)?.wait?.end();
    this.runs.delete(taskId);
  }

  /**
   * The Task ended: its span, from its creation to now, with the ids stored at accept, under the caller's
   * span; `resumes` links a Task that continues another's run (an answer to its approval or question).
   */
  ended(task: TracedTask, status: string, outcome: { result: string; inputTokens: number; outputTokens: number; resumes?: TracedTask | null }): void {
    const sdk = this.telemetry.tracing;
    const run = this.runs.get(task.id);
    this.runs.delete(task.id);
    run?.wait?.end();
    if (!sdk || !task.traceId || !task.spanId) return;
    const link = outcome.resumes && taskRef(outcome.resumes);
    const attributes: Attributes = {
      'gen_ai.operation.name': 'invoke_agent',
      'gen_ai.agent.name': 'ollama-agent-mcp',
      'gen_ai.conversation.id': task.sessionId,
      'gen_ai.usage.input_tokens': outcome.inputTokens,
      'gen_ai.usage.output_tokens': outcome.outputTokens,
      'agent.task.id': task.id,
      'agent.task.status': status,
      'agent.task.surface': task.surface ?? '',
      'agent.task.tier': task.tier,
      'agent.task.mode': task.mode,
      ...(this.telemetry.captureContent ? { 'gen_ai.input.messages': messages('user', task.request), 'gen_ai.output.messages': messages('assistant', outcome.result) } : {}),
    };
    sdk.record({
      name: 'invoke_agent ollama-agent-mcp',
      parent: callerRef(task.traceParent, task.traceState),
      ids: { traceId: task.traceId, spanId: task.spanId },
      startMs: Date.parse(task.createdAt),
      endMs: Date.now(),
      kind: SpanKind.SERVER,
      attributes,
      ...(link ? { links: [link] } : {}),
      ...(status === 'failed' ? { error: 'failed' } : {}),
    });
  }

  private onEvent(event: RunEvent): void {
    const run = this.runs.get(event.taskId);
    const sdk = this.telemetry.tracing;
    if (!run || !sdk) return;
    // A wait for a person lasts until the run does anything else (answered in place) or ends.
    if (run.wait && event.type !== 'paused') {
      run.wait.end();
      run.wait = null;
    }
    if (event.type === 'step') this.step(sdk, run, event.step);
    else if (event.type === 'paused') {
      run.wait?.end();
      run.wait = sdk.open(`wait ${event.kind}`, run.parent, Date.now(), { attributes: { 'agent.wait.kind': event.kind, 'agent.wait.id': event.id } });
    }
  }

  private step(sdk: TracingSdk, run: TracedRun, step: StepRecord): void {
    const startMs = Date.parse(step.startedAt);
    const endMs = startMs + step.durationMs;
    const error = step.outcome === 'ok' ? undefined : step.outcome;
    if (step.kind === 'model_call') {
      const model = typeof step.detail.model === 'string' ? step.detail.model : 'unknown';
      const attributes: Attributes = {
        'gen_ai.operation.name': 'chat',
        'gen_ai.provider.name': 'ollama',
        'gen_ai.request.model': model,
        'gen_ai.usage.input_tokens': step.inputTokens ?? 0,
        'gen_ai.usage.output_tokens': step.outputTokens ?? 0,
        ...(typeof step.detail.doneReason === 'string' && step.detail.doneReason ? { 'gen_ai.response.finish_reasons': [step.detail.doneReason] } : {}),
        ...(typeof step.detail.firstTokenMs === 'number' ? { 'gen_ai.response.time_to_first_chunk': step.detail.firstTokenMs / 1000 } : {}),
        'agent.task.tier': run.task.tier,
        ...(this.telemetry.captureContent && typeof step.detail.content === 'string' ? { 'gen_ai.output.messages': messages('assistant', step.detail.content) } : {}),
      };
      sdk.record({ name: `chat ${model}`, parent: run.parent, startMs, endMs, kind: SpanKind.CLIENT, attributes, ...(error ? { error } : {}) });
      return;
    }
    if (step.kind === 'limit') {
      // A limit (a budget, the daily token quota) ended the run's tool work: the summary follows.
      sdk.record({ name: `limit ${step.name}`, parent: run.parent, startMs, endMs: startMs, attributes: { 'agent.limit': step.name } });
      return;
    }
    if (!TOOL_STEP_KINDS.includes(step.kind)) return;
    // A command step's name is its command line: content, like the arguments. A name the model made up that is
    // no tool's name could be anything it wrote: it shows as `unknown`.
    const tool = step.kind === 'command' ? 'run_command' : TOOL_NAME.test(step.name) ? step.name : 'unknown';
    const attributes: Attributes = {
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': tool,
      'agent.tool.source': step.kind,
      'agent.tool.outcome': step.outcome,
      ...(typeof step.detail.server === 'string' ? { 'agent.tool.server': step.detail.server } : {}),
      ...(this.telemetry.captureContent
        ? { 'gen_ai.tool.call.arguments': JSON.stringify(step.kind === 'command' ? step.name : (step.detail.arguments ?? null)).slice(0, CONTENT_CHARS) }
        : {}),
    };
    sdk.record({ name: `execute_tool ${tool}`, parent: run.parent, startMs, endMs, attributes, ...(error ? { error } : {}) });
  }
}

/** The Task's own span, as the parent of its children. */
function taskRef(task: TracedTask): SpanRef | null {
  if (!task.traceId || !task.spanId) return null;
  const caller = callerRef(task.traceParent, task.traceState);
  return { traceId: task.traceId, spanId: task.spanId, sampled: caller?.sampled ?? true, traceState: task.traceState };
}

/** GenAI semantic conventions' message shape, bounded. */
const messages = (role: 'user' | 'assistant', text: string) => JSON.stringify([{ role, parts: [{ type: 'text', content: text.slice(0, CONTENT_CHARS) }] }]);
