import type { Tool } from 'ollama';
import { nowIso, type Clock } from '../common/clock.js';
import type { AgentConfig } from '../config/agent-config.js';
import { OllamaError } from '../ollama/ollama-error.js';
import type { ChatMessage, ChatReply, OllamaGateway } from '../ollama/ollama.gateway.js';
import { AgentFailure } from './agent-runner.js';
import type { AnswerStream } from './answer-stream.js';
import { ContextBudget } from './context-budget.js';
import type { RunEvents } from './core/run-events.js';
import type { RunState } from './core/run-state.js';
import type { StepRecord } from './trace.repository.js';
import { noToolsFailure, type ModelProfile } from './model-profile.js';
import { textToolInstructions } from './text-tool-protocol.js';

const MAX_ERROR_RETRIES = 2;
const MAX_STALL_RETRIES = 1;
const COMPACT_AT = 0.8;
const KEEP_RECENT_TOOL_RESULTS = 4;
const COMPACTED = '[earlier tool output removed to save context]';

export interface ModelCallSettings {
  taskId: string;
  temperature: number;
  /** The tools offered: sent with each request, or described in the system prompt (text tool mode). */
  tools: Tool[];
  /** What the model can do (its capabilities, its trained context); the tool mode and `think` are the state's. */
  profile: ModelProfile;
  signal: AbortSignal;
}

/** What one model call did; the loop, the state's only writer, applies it. */
export interface ModelCallOutcome {
  reply: ChatReply;
  /** Feedback the retries added before the reply (after a 5xx): it joins the conversation before the reply. */
  feedback: ChatMessage[];
  /** Ollama refused native tools, and the call went on in the text tool protocol: the run stays in it. */
  switchedToText: boolean;
  /** Old tool outputs were replaced by a marker in the request, keeping this many: the conversation takes the same; null: none. */
  compactKeep: number | null;
}

/** The system prompt for a tool mode: the text protocol describes the tools in it. */
export function systemPromptFor(base: string, toolMode: RunState['toolMode'], tools: Tool[]): string {
  return toolMode === 'text' ? base + textToolInstructions(tools) : base;
}

/**
 * Near the context size, old tool outputs are replaced by a marker (Ollama would otherwise drop the
 * oldest messages silently): the one place the prompt prefix changes. Pure: a new list, keeping `keep`.
 */
export function compactToolOutputs(messages: readonly ChatMessage[], keep: number): ChatMessage[] {
  const tools = messages.filter((message) => message.role === 'tool' || message.content.startsWith('<tool_response '));
  const drop = new Set(tools.slice(0, -keep).filter((message) => message.content.length > COMPACTED.length));
  return messages.map((message) => (drop.has(message) ? { ...message, content: COMPACTED } : message));
}

/**
 * The loop's model calls on its RunState, which it only reads: each request is the conversation as it
 * stands (so it extends the previous one byte for byte), fitted to `num_ctx` first, retried on a 5xx
 * (with feedback) or a stall, and traced (a `model_call` step). What happened comes back as a
 * ModelCallOutcome for the loop to apply.
 */
export class ModelCaller {
  private readonly budget: ContextBudget;

  constructor(
    private readonly deps: { ollama: OllamaGateway; config: AgentConfig; events: RunEvents; clock: Clock },
    private readonly settings: ModelCallSettings,
  ) {
    this.budget = new ContextBudget(deps.config.ollama);
  }

  /**
   * Fails at once when the conversation as it starts (system prompt, history, request and its images,
   * tools) cannot fit `ollama.num_ctx` with room for an answer.
   */
  checkFits(state: Readonly<RunState>): void {
    const needed = this.budget.estimate(state.messages, this.nativeTools(state.toolMode));
    if (needed <= this.budget.limit) return;
    const images = state.messages.reduce((sum, message) => sum + (message.images?.length ?? 0), 0);
    const withImages = images > 0 ? ` (${images} image(s) at about 768 tokens each)` : '';
    throw new AgentFailure(
      `The request needs about ${needed} tokens${withImages}, more than fits ollama.num_ctx ${this.budget.numCtx} with room for the answer (${this.budget.limit}). ${this.raiseHint()} or send less (shorter text, fewer or smaller images).`,
    );
  }

  raiseHint(): string {
    const trained = this.settings.profile.facts.contextLength;
    return trained && trained > this.budget.numCtx ? `Raise ollama.num_ctx (the model was trained for ${trained})` : 'Use a model with a larger context';
  }

  /**
   * One model call on the conversation. 5xx answers (e.g. a tool call Ollama could not parse) are
   * retried with feedback to the model, at most twice; a stalled stream once. `answer` receives the
   * content as it streams; a retried attempt withdraws what it sent. `offerTools: false` sends none
   * (the summary after a limit); `signal` may be the run's, narrowed by its wall budget.
   */
  async call(state: Readonly<RunState>, options: { subtask: string; answer?: AnswerStream; offerTools: boolean; signal: AbortSignal }): Promise<ModelCallOutcome> {
    const { subtask, answer, signal } = options;
    const feedback: ChatMessage[] = [];
    let toolMode = state.toolMode;
    // The system prompt as this call sends it: rewritten for the text protocol when Ollama refuses native tools.
    let system: ChatMessage | undefined = state.messages[0];
    let stalls = 0;
    let compactKeep: number | null = null;
    for (let attempt = 0; ; attempt++) {
      signal.throwIfAborted();
      const started = this.deps.clock.now();
      const startedAt = nowIso(this.deps.clock);
      const tools = options.offerTools ? this.nativeTools(toolMode) : [];
      const fitted = this.fit([...(system ? [system] : []), ...state.messages.slice(1), ...feedback], tools);
      compactKeep = minKeep(compactKeep, fitted.keep);
      try {
        const reply = await this.deps.ollama.chat({
          model: state.model,
          messages: fitted.messages,
          temperature: this.settings.temperature,
          tools,
          // A state upgraded from version 1 did not store it: the profile resolved for the same model says it.
          think: state.think ?? this.settings.profile.think,
          signal,
          onContent: answer?.onContent,
        });
        // The streamed deltas go out before this call's step and tokens: one order per Task.
        await answer?.flushed();
        this.budget.observe(fitted.estimate, reply.promptEvalCount);
        await this.traceCall(subtask, reply, { model: state.model, startedAt, durationMs: this.deps.clock.now() - started, estimated: fitted.estimate });
        if (reply.promptEvalCount + reply.evalCount > COMPACT_AT * this.deps.config.ollama.numCtx) compactKeep = minKeep(compactKeep, KEEP_RECENT_TOOL_RESULTS);
        return { reply, feedback, switchedToText: toolMode !== state.toolMode, compactKeep };
      } catch (error) {
        answer?.withdraw();
        if (!(error instanceof OllamaError) || error.kind === 'aborted') throw error;
        await answer?.flushed();
        const trace = (detail: Record<string, unknown>) =>
          this.step({
            subtask,
            kind: 'model_call',
            name: 'chat',
            outcome: 'error',
            startedAt,
            durationMs: this.deps.clock.now() - started,
            detail: { error: error.message, ...detail },
          });
        if (error.kind === 'no_tools') {
          // The capabilities said tools, the template disagrees (a custom tag hides it: continue#11402).
          if (!this.deps.config.agent.textTools || toolMode === 'text') throw noToolsFailure(state.model, `Ollama: ${error.message}`);
          await trace({ switchedTo: 'text tool protocol' });
          // The rest of the run describes the tools in the system prompt (the loop rewrites it once it applies the switch).
          toolMode = 'text';
          if (system?.role === 'system') system = { ...system, content: systemPromptFor(system.content, 'text', this.settings.tools) };
          continue;
        }
        if (error.kind === 'stalled' && stalls++ < MAX_STALL_RETRIES) {
          await trace({ retry: stalls });
          continue;
        }
        if (error.kind === 'stalled') {
          throw new AgentFailure(
            `${error.message}, twice: the model or Ollama is stuck. Check \`ollama ps\` and the Ollama server log, or raise ollama.stall_timeout_ms for a slow machine.`,
          );
        }
        const retriable = error.kind === 'http' && (error.status ?? 0) >= 500;
        if (!retriable || attempt >= MAX_ERROR_RETRIES) throw new AgentFailure(error.message);
        await trace({ retry: attempt + 1 });
        feedback.push({ role: 'user', content: `Your previous response caused an error: ${error.message}. Try again; keep tool-call arguments small and valid JSON.` });
      }
    }
  }

  private nativeTools(toolMode: RunState['toolMode']): Tool[] {
    return toolMode === 'text' ? [] : this.settings.tools;
  }

  /**
   * Before a request: compacts when its estimate nears the limit, and fails rather than let Ollama drop
   * the start of the conversation. Returns the messages to send, their estimate and the compaction made.
   */
  private fit(messages: ChatMessage[], tools: Tool[]): { messages: ChatMessage[]; estimate: number; keep: number | null } {
    let keep: number | null = null;
    const estimate = () => this.budget.estimate(messages, tools);
    if (estimate() > COMPACT_AT * this.budget.limit) messages = compactToolOutputs(messages, (keep = KEEP_RECENT_TOOL_RESULTS));
    if (estimate() > this.budget.limit) messages = compactToolOutputs(messages, (keep = 1));
    const needed = estimate();
    if (needed > this.budget.limit) {
      throw new AgentFailure(
        `Stopped: the conversation needs about ${needed} tokens even after old tool output was removed, more than fits ollama.num_ctx ${this.budget.numCtx} (${this.budget.limit} with room for the answer). ${this.raiseHint()}, or split the work into smaller requests.`,
      );
    }
    return { messages, estimate: needed, keep };
  }

  private async traceCall(subtask: string, reply: ChatReply, timing: { model: string; startedAt: string; durationMs: number; estimated: number }): Promise<void> {
    await this.step({
      subtask,
      kind: 'model_call',
      name: 'chat',
      outcome: 'ok',
      inputTokens: reply.promptEvalCount,
      outputTokens: reply.evalCount,
      startedAt: timing.startedAt,
      durationMs: timing.durationMs,
      detail: {
        // Issue 39: what the model call's span and metrics name (the model, the time to its first token).
        model: timing.model,
        ...(reply.firstTokenMs !== undefined ? { firstTokenMs: reply.firstTokenMs } : {}),
        doneReason: reply.doneReason,
        estimatedPromptTokens: timing.estimated,
        toolCalls: reply.toolCalls.map((call) => call.function.name),
        content: reply.content.slice(0, 500),
        ...(reply.thinking ? { thinkingChars: reply.thinking.length } : {}),
      },
    });
  }

  private step(fields: Omit<StepRecord, 'taskId'>): Promise<void> {
    const taskId = this.settings.taskId;
    return this.deps.events.emit({ type: 'step', taskId, step: { taskId, ...fields } });
  }
}

const minKeep = (a: number | null, b: number | null) => (a === null ? b : b === null ? a : Math.min(a, b));
