import type { AnswerStream } from './answer-stream.js';
import { createHash } from 'node:crypto';
import type { Tool } from 'ollama';
import { nowIso } from '../common/clock.js';
import { cutText } from '../common/cut-text.js';
import type { AgentConfig } from '../config/agent-config.js';
import { OllamaError } from '../ollama/ollama-error.js';
import type { ChatMessage, ChatReply, ChatToolCall, OllamaGateway } from '../ollama/ollama.gateway.js';
import type { FileChange } from '../workspace/workspace-files.js';
import { AgentFailure } from './agent-runner.js';
import { ContextBudget } from './context-budget.js';
import { noToolsFailure, type ModelProfile } from './model-profile.js';
import { textToolInstructions, textToolResults } from './text-tool-protocol.js';
import { splitThinking } from './think-tags.js';
import { invalidCall } from './tool-arguments.js';
import { parseToolCallsFromText } from './tool-call-parser.js';
import type { TraceRepository } from './trace.repository.js';
import type { TaskWorkspace, WorkspaceToolbox } from './workspace-toolbox.js';

const MAX_ERROR_RETRIES = 2;
const MAX_STALL_RETRIES = 1;
const REPEAT_LIMIT = 3;
/** Rounds in a row whose every call was invalid before the Task stops. */
const INVALID_ROUND_LIMIT = 3;
/** Continuations of an answer cut off by `num_predict` or the context (`done_reason: "length"`). */
const MAX_CONTINUATIONS = 2;
const COMPACT_AT = 0.8;
const KEEP_RECENT_TOOL_RESULTS = 4;
const COMPACTED = '[earlier tool output removed to save context]';
const EMPTY_FEEDBACK = 'Your last reply was empty. Answer the request, or call a tool to make progress.';
const CONTINUE_FEEDBACK = 'Your reply was cut off at the output limit. Continue exactly where it stopped, without repeating anything.';

export interface TurnResult {
  call: ChatToolCall;
  output: string;
}

export interface LoopDependencies {
  ollama: OllamaGateway;
  /** The workspace toolbox, or the approval gate in front of it. */
  toolbox: Pick<WorkspaceToolbox, 'run'>;
  trace: TraceRepository;
  config: AgentConfig;
}

export interface LoopContext {
  taskId: string;
  temperature: number;
  /** The tools offered: sent with each request, or described in the system prompt (text tool mode). */
  tools: Tool[];
  profile: ModelProfile;
  signal: AbortSignal;
  /** The session workspace every tool call of the Task is confined to. */
  workspace: TaskWorkspace;
  /** Called after every model call with the Task's running token totals. */
  onTokens: (inputTokens: number, outputTokens: number) => Promise<void>;
  /** Called when the action in progress changes (`ollama chat (round 2)`, `run_command: npm test`). */
  onAction: (action: string) => Promise<void>;
}

/**
 * One Task's conversation with the model. Messages are only ever appended (until a compaction), so
 * each request's prompt extends the previous one byte for byte and Ollama reuses its KV cache.
 */
export class AgentLoop {
  readonly messages: ChatMessage[] = [];
  readonly changes = new Map<string, FileChange>();
  /** The tool calls of the turn being run and their results so far (they join the conversation once all have run). */
  turn: { calls: ChatToolCall[]; results: TurnResult[] } = { calls: [], results: [] };
  inputTokens = 0;
  outputTokens = 0;
  private readonly tokensBySubtask = new Map<string, number>();
  private readonly budget: ContextBudget;
  private readonly knownTools: Set<string>;
  private roundsInTask = 0;

  constructor(
    private readonly deps: LoopDependencies,
    private readonly context: LoopContext,
  ) {
    this.budget = new ContextBudget(deps.config.ollama.numCtx);
    this.knownTools = new Set(context.tools.map((tool) => tool.function.name!));
  }

  tokensOf(subtask: string): number {
    return this.tokensBySubtask.get(subtask) ?? 0;
  }

  get tokenMap(): Map<string, number> {
    return this.tokensBySubtask;
  }

  /** The system prompt for this Task's tool mode. */
  systemPrompt(base: string): string {
    return this.context.profile.toolMode === 'text' ? base + textToolInstructions(this.context.tools) : base;
  }

  /**
   * Fails at once when the conversation as it starts (system prompt, history, request and its images,
   * tools) cannot fit `ollama.num_ctx` with room for an answer.
   */
  checkFits(): void {
    const needed = this.budget.estimate(this.messages, this.nativeTools);
    if (needed <= this.budget.limit) return;
    const images = this.messages.reduce((sum, message) => sum + (message.images?.length ?? 0), 0);
    const withImages = images > 0 ? ` (${images} image(s) at about 768 tokens each)` : '';
    throw new AgentFailure(
      `The request needs about ${needed} tokens${withImages}, more than fits ollama.num_ctx ${this.budget.numCtx} with room for the answer (${this.budget.limit}). ${this.raiseHint()} or send less (shorter text, fewer or smaller images).`,
    );
  }

  get taskId(): string {
    return this.context.taskId;
  }

  /**
   * One model call on the conversation plus `extra` messages that are not kept, optionally with a
   * structured-output schema. 5xx answers (e.g. a tool call Ollama could not parse) are retried with
   * feedback to the model, at most twice; a stalled stream once.
   */
  async call(subtask: string, options: { extra?: ChatMessage[]; format?: object; label?: string; answer?: AnswerStream } = {}): Promise<ChatReply> {
    const feedback: ChatMessage[] = [];
    let stalls = 0;
    for (let attempt = 0; ; attempt++) {
      this.context.signal.throwIfAborted();
      const startedAt = nowIso();
      const started = Date.now();
      const estimated = this.fit([...feedback, ...(options.extra ?? [])]);
      options.answer?.restart();
      try {
        const reply = await this.deps.ollama.chat({
          messages: [...this.messages, ...feedback, ...(options.extra ?? [])],
          temperature: this.context.temperature,
          tools: this.nativeTools,
          format: options.format,
          think: this.context.profile.think,
          signal: this.context.signal,
          ...(options.answer ? { onContent: (content: string) => options.answer!.chunk(content) } : {}),
        });
        this.messages.push(...feedback);
        this.budget.observe(estimated, reply.promptEvalCount);
        await this.account(subtask, reply, { startedAt, durationMs: Date.now() - started, label: options.label ?? 'chat', estimated });
        return reply;
      } catch (error) {
        if (!(error instanceof OllamaError) || error.kind === 'aborted') throw error;
        const trace = (detail: Record<string, unknown>) =>
          this.deps.trace.append({
            taskId: this.context.taskId, subtask, kind: 'model_call', name: options.label ?? 'chat', outcome: 'error',
            startedAt, durationMs: Date.now() - started, detail: { error: error.message, ...detail },
          });
        if (error.kind === 'no_tools') {
          // The capabilities said tools, the template disagrees (a custom tag hides it: continue#11402).
          if (!this.deps.config.agent.textTools || this.context.profile.toolMode === 'text') throw noToolsFailure(this.deps.config.ollama.model, `Ollama: ${error.message}`);
          await trace({ switchedTo: 'text tool protocol' });
          this.switchToTextTools();
          continue;
        }
        if (error.kind === 'stalled' && stalls++ < MAX_STALL_RETRIES) {
          await trace({ retry: stalls });
          continue;
        }
        if (error.kind === 'stalled') {
          throw new AgentFailure(`${error.message}, twice: the model or Ollama is stuck. Check \`ollama ps\` and the Ollama server log, or raise ollama.stall_timeout_ms for a slow machine.`);
        }
        const retriable = error.kind === 'http' && (error.status ?? 0) >= 500;
        if (!retriable || attempt >= MAX_ERROR_RETRIES) throw new AgentFailure(error.message);
        await trace({ retry: attempt + 1 });
        feedback.push({ role: 'user', content: `Your previous response caused an error: ${error.message}. Try again; keep tool-call arguments small and valid JSON.` });
      }
    }
  }

  /**
   * Calls the model and runs its tool calls until it answers without any; returns that answer.
   * Progress names the step (`ollama chat`, a subtask's title) with its round, and each tool call,
   * after the step's name when `toolsUnderStep`.
   */
  async untilAnswer(subtask: string, step: string, toolsUnderStep = false, answerStream?: AnswerStream): Promise<string> {
    const { maxRoundsPerSubtask, maxRoundsPerTask } = this.deps.config.agent;
    const seen = new Map<string, number>();
    let invalidRounds = 0;
    let emptyRetried = false;
    let continued = '';
    let continuations = 0;
    for (let round = 1; ; round++) {
      if (round > maxRoundsPerSubtask) throw new AgentFailure(`Stopped: the round limit of ${maxRoundsPerSubtask} model calls per subtask was reached.`);
      if (++this.roundsInTask > maxRoundsPerTask) throw new AgentFailure(`Stopped: the round limit of ${maxRoundsPerTask} model calls per task was reached.`);
      await this.context.onAction(round === 1 ? step : `${step} (round ${round})`);
      const reply = await this.call(subtask, { answer: answerStream });
      const { answer, thinking: leaked } = splitThinking(reply.content);
      const thinking = [reply.thinking, leaked].filter(Boolean).join('\n\n');
      const text = this.context.profile.toolMode === 'text';
      const calls = reply.toolCalls.length > 0 ? reply.toolCalls : parseToolCallsFromText(answer, this.knownTools);
      const recovered = reply.toolCalls.length === 0 && calls.length > 0;
      this.messages.push({
        role: 'assistant',
        // A native model's recovered calls go back as tool_calls (as if its parser had worked); a text
        // model sees its own <tool_call> blocks, the only form it knows.
        content: recovered && !text ? '' : answer,
        ...(thinking ? { thinking } : {}),
        ...(calls.length > 0 && !text ? { tool_calls: calls } : {}),
      });
      if (calls.length === 0) {
        if (reply.doneReason === 'length') {
          if (continuations++ >= MAX_CONTINUATIONS) {
            throw new AgentFailure(
              `The model's answer was cut off ${continuations} times (done_reason "length", ${reply.evalCount} tokens in the last part). ${this.raiseHint()}, or ask for a shorter answer.`,
            );
          }
          continued += answer;
          answerStream?.continueAfter(continued);
          this.messages.push({ role: 'user', content: CONTINUE_FEEDBACK });
          continue;
        }
        if (answer.trim() === '' && continued === '') {
          if (emptyRetried) {
            throw new AgentFailure(
              `The model returned an empty answer twice (done_reason "${reply.doneReason}", ${reply.evalCount} output tokens): Ollama may have dropped a tool call it could not parse (ollama#17274). Try again or use a larger model (e.g. ${this.deps.config.ollama.model.startsWith('qwen3') ? 'qwen3:14b' : 'qwen3:8b'}).`,
            );
          }
          emptyRetried = true;
          this.messages.push({ role: 'user', content: EMPTY_FEEDBACK });
          continue;
        }
        return continued + answer;
      }
      await answerStream?.discard();
      this.turn = { calls, results: [] };
      const { results } = this.turn;
      let invalid = 0;
      for (const call of calls) {
        this.context.signal.throwIfAborted();
        const output = await this.runCall(call, subtask, seen, toolsUnderStep ? step : '');
        if (output.invalid) invalid++;
        results.push({ call, output: output.text });
      }
      invalidRounds = invalid === calls.length ? invalidRounds + 1 : 0;
      if (invalidRounds >= INVALID_ROUND_LIMIT) {
        throw new AgentFailure(`Stopped: the model made invalid tool calls ${INVALID_ROUND_LIMIT} rounds in a row; the last: ${results.at(-1)!.output}`);
      }
      this.messages.push(...this.resultMessages(results));
    }
  }

  /** How a turn's results join the conversation: one message per result, or one text block for a text-protocol model. */
  resultMessages(results: TurnResult[]): ChatMessage[] {
    if (this.context.profile.toolMode === 'text') return [textToolResults(results)];
    return results.map(({ call, output }) => ({ role: 'tool', tool_name: call.function.name, ...(call.id ? { tool_call_id: call.id } : {}), content: output }));
  }

  private get nativeTools(): Tool[] {
    return this.context.profile.toolMode === 'native' ? this.context.tools : [];
  }

  /** One call: validated against its schema (the model gets the error and the schema), then run. */
  private async runCall(call: ChatToolCall, subtask: string, seen: Map<string, number>, under: string): Promise<{ text: string; invalid: boolean }> {
    const problem = invalidCall(call, this.context.tools);
    if (problem) {
      await this.deps.trace.append({
        taskId: this.context.taskId, subtask, kind: 'tool_call', name: call.function.name, outcome: 'error',
        startedAt: nowIso(), durationMs: 0, detail: { arguments: call.function.arguments, error: problem },
      });
      return { text: problem, invalid: true };
    }
    await this.context.onAction(under ? `${under} / ${actionOf(call)}` : actionOf(call));
    const result = await this.deps.toolbox.run(call, { taskId: this.context.taskId, subtask, signal: this.context.signal, workspace: this.context.workspace });
    if (result.change) this.changes.set(result.change.path, mergeChange(this.changes.get(result.change.path), result.change));
    this.context.signal.throwIfAborted();
    const fingerprint = fingerprintOf(call, result.output);
    const repeats = (seen.get(fingerprint) ?? 0) + 1;
    seen.set(fingerprint, repeats);
    if (repeats >= REPEAT_LIMIT) {
      throw new AgentFailure(`Stopped: the model repeated the same call ${REPEAT_LIMIT} times with the same result: ${describe(call)}`);
    }
    return { text: result.output, invalid: false };
  }

  /**
   * Before a request: compacts when its estimate nears the limit, and fails rather than let Ollama drop
   * the start of the conversation. Returns the estimate.
   */
  private fit(extra: ChatMessage[]): number {
    const estimate = () => this.budget.estimate([...this.messages, ...extra], this.nativeTools);
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

  private raiseHint(): string {
    const trained = this.context.profile.facts.contextLength;
    return trained && trained > this.budget.numCtx ? `Raise ollama.num_ctx (the model was trained for ${trained})` : 'Use a model with a larger context';
  }

  /** Ollama said no to tools mid-Task: the rest of the Task describes them in the system prompt. */
  private switchToTextTools(): void {
    const base = this.messages[0]?.role === 'system' ? this.messages[0].content : '';
    this.context.profile.toolMode = 'text';
    if (this.messages[0]?.role === 'system') this.messages[0] = { ...this.messages[0], content: this.systemPrompt(base) };
  }

  private async account(subtask: string, reply: ChatReply, timing: { startedAt: string; durationMs: number; label: string; estimated: number }): Promise<void> {
    this.inputTokens += reply.promptEvalCount;
    // eval_count includes the thinking tokens (Ollama counts every generated token).
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
        estimatedPromptTokens: timing.estimated,
        toolCalls: reply.toolCalls.map((call) => call.function.name),
        content: reply.content.slice(0, 500),
        ...(reply.thinking ? { thinkingChars: reply.thinking.length } : {}),
      },
    });
    await this.context.onTokens(this.inputTokens, this.outputTokens);
    if (reply.promptEvalCount + reply.evalCount > COMPACT_AT * this.deps.config.ollama.numCtx) this.compact(KEEP_RECENT_TOOL_RESULTS);
  }

  /**
   * Near the context size, old tool outputs are replaced by a marker (Ollama would otherwise drop the
   * oldest messages silently). This is the one place the prompt prefix changes.
   */
  private compact(keep: number): void {
    const toolMessages = this.messages.filter((message) => message.role === 'tool' || message.content.startsWith('<tool_response '));
    for (const message of toolMessages.slice(0, -keep)) {
      if (message.content.length > COMPACTED.length) message.content = COMPACTED;
    }
  }
}

/** The action as progress shows it: the tool and its main argument, on one line. */
function actionOf(call: ChatToolCall): string {
  const args = call.function.arguments;
  const main = args.command ?? args.path ?? args.pattern ?? '';
  return `${call.function.name}${main === '' ? '' : `: ${String(main)}`}`.replace(/\s+/g, ' ');
}

function fingerprintOf(call: ChatToolCall, output: string): string {
  return createHash('sha256').update(call.function.name).update('\0').update(JSON.stringify(call.function.arguments)).update('\0').update(output).digest('hex');
}

function describe(call: ChatToolCall): string {
  const args = JSON.stringify(call.function.arguments);
  return `${call.function.name}(${cutText(args, 200)})`;
}

function mergeChange(previous: FileChange | undefined, next: FileChange): FileChange {
  return previous ? { ...next, created: previous.created || next.created } : next;
}
