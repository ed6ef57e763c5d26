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
  profile: ModelProfile;
  signal: AbortSignal;
}

/**
 * The loop's model calls on its RunState: each request is the conversation as it stands (so it
 * extends the previous one byte for byte), fitted to `num_ctx` first, retried on a 5xx (with feedback)
 * or a stall, and accounted (tokens, a `model_call` trace step) through the run's events. Part of the
 * loop: it writes the state's conversation and token counts on the loop's behalf.
 */
export class ModelCaller {
  private readonly budget: ContextBudget;

  constructor(
    private readonly state: RunState,
    private readonly deps: { ollama: OllamaGateway; config: AgentConfig; events: RunEvents; clock: Clock },
    private readonly settings: ModelCallSettings,
  ) {
    this.budget = new ContextBudget(deps.config.ollama);
  }

  get textMode(): boolean {
    return this.settings.profile.toolMode === 'text';
  }

  /** The system prompt for this Task's tool mode. */
  systemPrompt(base: string): string {
    return this.textMode ? base + textToolInstructions(this.settings.tools) : base;
  }

  /**
   * Fails at once when the conversation as it starts (system prompt, history, request and its images,
   * tools) cannot fit `ollama.num_ctx` with room for an answer.
   */
  checkFits(): void {
    const needed = this.budget.estimate(this.state.messages, this.nativeTools);
    if (needed <= this.budget.limit) return;
    const images = this.state.messages.reduce((sum, message) => sum + (message.images?.length ?? 0), 0);
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
   * content as it streams; a retried attempt withdraws what it sent.
   */
  async call(subtask: string, answer?: AnswerStream): Promise<ChatReply> {
    const { messages } = this.state;
    const feedback: ChatMessage[] = [];
    let stalls = 0;
    for (let attempt = 0; ; attempt++) {
      this.settings.signal.throwIfAborted();
      const started = this.deps.clock.now();
      const startedAt = nowIso(this.deps.clock);
      const estimated = this.fit(feedback);
      try {
        const reply = await this.deps.ollama.chat({
          model: this.state.model,
          messages: [...messages, ...feedback],
          temperature: this.settings.temperature,
          tools: this.nativeTools,
          think: this.settings.profile.think,
          signal: this.settings.signal,
          onContent: answer?.onContent,
        });
        // The streamed deltas go out before this call's step and tokens: one order per Task.
        await answer?.flushed();
        messages.push(...feedback);
        this.budget.observe(estimated, reply.promptEvalCount);
        await this.account(subtask, reply, { startedAt, durationMs: this.deps.clock.now() - started, estimated });
        return reply;
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
          if (!this.deps.config.agent.textTools || this.textMode) throw noToolsFailure(this.state.model, `Ollama: ${error.message}`);
          await trace({ switchedTo: 'text tool protocol' });
          this.switchToTextTools();
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

  private get nativeTools(): Tool[] {
    return this.textMode ? [] : this.settings.tools;
  }

  /**
   * Before a request: compacts when its estimate nears the limit, and fails rather than let Ollama drop
   * the start of the conversation. Returns the estimate.
   */
  private fit(extra: ChatMessage[]): number {
    const estimate = () => this.budget.estimate([...this.state.messages, ...extra], this.nativeTools);
    if (estimate() > COMPACT_AT * this.budget.limit) this.compact(KEEP_RECENT_TOOL_RESULTS);
    if (estimate() > this.budget.limit) this.compact(1);
    const needed = estimate();
    if (needed > this.budget.limit) {
      throw new AgentFailure(
        `Stopped: the conversation needs about ${needed} tokens even after old tool output was removed, more than fits ollama.num_ctx ${this.budget.numCtx} (${this.budget.limit} with room for the answer). ${this.raiseHint()}, or split the work into smaller requests.`,
      );
    }
    return needed;
  }

  /** Ollama said no to tools mid-Task: the rest of the Task describes them in the system prompt. */
  private switchToTextTools(): void {
    const { messages } = this.state;
    const base = messages[0]?.role === 'system' ? messages[0].content : '';
    this.settings.profile.toolMode = 'text';
    if (messages[0]?.role === 'system') messages[0] = { ...messages[0], content: this.systemPrompt(base) };
  }

  private async account(subtask: string, reply: ChatReply, timing: { startedAt: string; durationMs: number; estimated: number }): Promise<void> {
    const { tokens } = this.state;
    tokens.input += reply.promptEvalCount;
    // eval_count includes the thinking tokens (Ollama counts every generated token).
    tokens.output += reply.evalCount;
    tokens.bySubtask[subtask] = (tokens.bySubtask[subtask] ?? 0) + reply.promptEvalCount + reply.evalCount;
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
        model: this.state.model,
        ...(reply.firstTokenMs !== undefined ? { firstTokenMs: reply.firstTokenMs } : {}),
        doneReason: reply.doneReason,
        estimatedPromptTokens: timing.estimated,
        toolCalls: reply.toolCalls.map((call) => call.function.name),
        content: reply.content.slice(0, 500),
        ...(reply.thinking ? { thinkingChars: reply.thinking.length } : {}),
      },
    });
    await this.deps.events.emit({ type: 'tokens', taskId: this.settings.taskId, inputTokens: tokens.input, outputTokens: tokens.output });
    if (reply.promptEvalCount + reply.evalCount > COMPACT_AT * this.deps.config.ollama.numCtx) this.compact(KEEP_RECENT_TOOL_RESULTS);
  }

  private step(fields: Omit<StepRecord, 'taskId'>): Promise<void> {
    const taskId = this.settings.taskId;
    return this.deps.events.emit({ type: 'step', taskId, step: { taskId, ...fields } });
  }

  /**
   * Near the context size, old tool outputs are replaced by a marker (Ollama would otherwise drop the
   * oldest messages silently). This is the one place the prompt prefix changes.
   */
  private compact(keep: number): void {
    const toolMessages = this.state.messages.filter((message) => message.role === 'tool' || message.content.startsWith('<tool_response '));
    for (const message of toolMessages.slice(0, -keep)) {
      if (message.content.length > COMPACTED.length) message.content = COMPACTED;
    }
  }
}
