import { createHash } from 'node:crypto';
import type { Tool } from 'ollama';
import { nowIso } from '../common/clock.js';
import type { AgentConfig } from '../config/agent-config.js';
import { OllamaError } from '../ollama/ollama-error.js';
import type { ChatMessage, ChatReply, ChatToolCall, OllamaGateway } from '../ollama/ollama.gateway.js';
import type { FileChange } from '../workspace/workspace-files.js';
import { AgentFailure } from './agent-runner.js';
import { parseToolCallsFromText } from './tool-call-parser.js';
import type { TraceRepository } from './trace.repository.js';
import type { WorkspaceToolbox } from './workspace-toolbox.js';

const MAX_ERROR_RETRIES = 2;
const REPEAT_LIMIT = 3;
const COMPACT_AT = 0.8;
const KEEP_RECENT_TOOL_RESULTS = 4;
const COMPACTED = '[earlier tool output removed to save context]';

export interface LoopDependencies {
  ollama: OllamaGateway;
  toolbox: WorkspaceToolbox;
  trace: TraceRepository;
  config: AgentConfig;
}

export interface LoopContext {
  taskId: string;
  temperature: number;
  tools: Tool[];
  signal: AbortSignal;
  /** Called after every model call with the Task's running token totals. */
  onTokens: (inputTokens: number, outputTokens: number) => Promise<void>;
}

/**
 * One Task's conversation with the model. Messages are only ever appended (until a compaction), so
 * each request's prompt extends the previous one byte for byte and Ollama reuses its KV cache.
 */
export class AgentLoop {
  readonly messages: ChatMessage[] = [];
  readonly changes = new Map<string, FileChange>();
  inputTokens = 0;
  outputTokens = 0;
  private readonly tokensBySubtask = new Map<string, number>();
  private roundsInTask = 0;

  constructor(
    private readonly deps: LoopDependencies,
    private readonly context: LoopContext,
  ) {}

  tokensOf(subtask: string): number {
    return this.tokensBySubtask.get(subtask) ?? 0;
  }

  get tokenMap(): Map<string, number> {
    return this.tokensBySubtask;
  }

  /**
   * One model call on the conversation plus `extra` messages that are not kept, optionally with a
   * structured-output schema. 5xx answers (e.g. a tool call Ollama could not parse) are retried with
   * feedback to the model, at most twice.
   */
  async call(subtask: string, options: { extra?: ChatMessage[]; format?: object; label?: string } = {}): Promise<ChatReply> {
    const feedback: ChatMessage[] = [];
    for (let attempt = 0; ; attempt++) {
      this.context.signal.throwIfAborted();
      const startedAt = nowIso();
      const started = Date.now();
      try {
        const reply = await this.deps.ollama.chat({
          messages: [...this.messages, ...feedback, ...(options.extra ?? [])],
          temperature: this.context.temperature,
          tools: this.context.tools,
          format: options.format,
          signal: this.context.signal,
        });
        this.messages.push(...feedback);
        await this.account(subtask, reply, { startedAt, durationMs: Date.now() - started, label: options.label ?? 'chat' });
        return reply;
      } catch (error) {
        const retriable = error instanceof OllamaError && error.kind === 'http' && (error.status ?? 0) >= 500;
        if (!retriable || attempt >= MAX_ERROR_RETRIES) {
          if (error instanceof OllamaError && error.kind !== 'aborted') throw new AgentFailure(error.message);
          throw error;
        }
        await this.deps.trace.append({
          taskId: this.context.taskId, subtask, kind: 'model_call', name: options.label ?? 'chat', outcome: 'error',
          startedAt, durationMs: Date.now() - started, detail: { error: error.message, retry: attempt + 1 },
        });
        feedback.push({ role: 'user', content: `Your previous response caused an error: ${error.message}. Try again; keep tool-call arguments small and valid JSON.` });
      }
    }
  }

  /** Calls the model and runs its tool calls until it answers without any; returns that answer. */
  async untilAnswer(subtask: string): Promise<string> {
    const { maxRoundsPerSubtask, maxRoundsPerTask } = this.deps.config.agent;
    const seen = new Map<string, number>();
    for (let round = 1; ; round++) {
      if (round > maxRoundsPerSubtask) throw new AgentFailure(`Stopped: the round limit of ${maxRoundsPerSubtask} model calls per subtask was reached.`);
      if (++this.roundsInTask > maxRoundsPerTask) throw new AgentFailure(`Stopped: the round limit of ${maxRoundsPerTask} model calls per task was reached.`);
      const reply = await this.call(subtask);
      const calls = reply.toolCalls.length > 0 ? reply.toolCalls : parseToolCallsFromText(reply.content);
      const recovered = reply.toolCalls.length === 0 && calls.length > 0;
      this.messages.push({
        role: 'assistant',
        content: recovered ? '' : reply.content,
        ...(reply.thinking ? { thinking: reply.thinking } : {}),
        ...(calls.length > 0 ? { tool_calls: calls } : {}),
      });
      if (calls.length === 0) return reply.content;
      for (const call of calls) {
        this.context.signal.throwIfAborted();
        const result = await this.deps.toolbox.run(call, { taskId: this.context.taskId, subtask, signal: this.context.signal });
        if (result.change) this.changes.set(result.change.path, mergeChange(this.changes.get(result.change.path), result.change));
        this.context.signal.throwIfAborted();
        const fingerprint = fingerprintOf(call, result.output);
        const repeats = (seen.get(fingerprint) ?? 0) + 1;
        seen.set(fingerprint, repeats);
        if (repeats >= REPEAT_LIMIT) {
          throw new AgentFailure(`Stopped: the model repeated the same call ${REPEAT_LIMIT} times with the same result: ${describe(call)}`);
        }
        this.messages.push({ role: 'tool', tool_name: call.function.name, ...(call.id ? { tool_call_id: call.id } : {}), content: result.output });
      }
    }
  }

  private async account(subtask: string, reply: ChatReply, timing: { startedAt: string; durationMs: number; label: string }): Promise<void> {
    this.inputTokens += reply.promptEvalCount;
    this.outputTokens += reply.evalCount;
    this.tokensBySubtask.set(subtask, this.tokensOf(subtask) + reply.promptEvalCount + reply.evalCount);
    await this.deps.trace.append({
      taskId: this.context.taskId,
      subtask,
      kind: 'model_call',
      name: timing.label,
      outcome: 'ok',
      inputTokens: reply.promptEvalCount,
      outputTokens: reply.evalCount,
      startedAt: timing.startedAt,
      durationMs: timing.durationMs,
      detail: {
        doneReason: reply.doneReason,
        toolCalls: reply.toolCalls.map((call) => call.function.name),
        content: reply.content.slice(0, 500),
      },
    });
    await this.context.onTokens(this.inputTokens, this.outputTokens);
    if (reply.promptEvalCount + reply.evalCount > COMPACT_AT * this.deps.config.ollama.numCtx) this.compact();
  }

  /**
   * Near the context size, old tool outputs are replaced by a marker (Ollama would otherwise drop the
   * oldest messages silently). This is the one place the prompt prefix changes.
   */
  private compact(): void {
    const toolMessages = this.messages.filter((message) => message.role === 'tool');
    for (const message of toolMessages.slice(0, -KEEP_RECENT_TOOL_RESULTS)) {
      if (message.content.length > COMPACTED.length) message.content = COMPACTED;
    }
  }
}

function fingerprintOf(call: ChatToolCall, output: string): string {
  return createHash('sha256').update(call.function.name).update('\0').update(JSON.stringify(call.function.arguments)).update('\0').update(output).digest('hex');
}

function describe(call: ChatToolCall): string {
  const args = JSON.stringify(call.function.arguments);
  return `${call.function.name}(${args.length > 200 ? `${args.slice(0, 200)}…` : args})`;
}

function mergeChange(previous: FileChange | undefined, next: FileChange): FileChange {
  return previous ? { ...next, created: previous.created || next.created } : next;
}
