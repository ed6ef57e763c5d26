import { createHash } from 'node:crypto';
import { nowIso, type Clock } from '../common/clock.js';
import { cutText } from '../common/cut-text.js';
import type { AgentConfig } from '../config/agent-config.js';
import { DEFAULT_TIER } from '../ollama/model-tiers.js';
import type { ChatMessage, ChatToolCall, OllamaGateway } from '../ollama/ollama.gateway.js';
import type { FileChange } from '../workspace/workspace-files.js';
import { SKIPPED_OUTPUT } from '../approvals/approval-texts.js';
import { AgentFailure } from './agent-runner.js';
import { AnswerStream } from './answer-stream.js';
import type { RunEvents } from './core/run-events.js';
import type { RunState, TurnResult } from './core/run-state.js';
import type { PauseRequest, PlanUpdate, ToolCaller, ToolExecutor, ToolResult } from './core/tool-source.js';
import { ModelCaller, type ModelCallSettings } from './model-caller.js';
import { criticalPathTokens, executionOrder, type Subtask } from './plan.js';
import { SUMMARY_INSTRUCTION, subtaskInstruction } from './prompts.js';
import { textToolResults } from './text-tool-protocol.js';
import { splitThinking } from './think-tags.js';
import { invalidCall } from './tool-arguments.js';
import { nativeToolCalls, parseToolCallsFromText } from './tool-call-parser.js';
import type { TaskWorkspace } from './task-workspace.js';

const REPEAT_LIMIT = 3;
/** Rounds in a row whose every call was invalid before the Task stops. */
const INVALID_ROUND_LIMIT = 3;
/** Continuations of an answer cut off by `num_predict` or the context (`done_reason: "length"`). */
const MAX_CONTINUATIONS = 2;
const EMPTY_FEEDBACK = 'Your last reply was empty. Answer the request, or call a tool to make progress.';
const CONTINUE_FEEDBACK = 'Your reply was cut off at the output limit. Continue exactly where it stopped, without repeating anything.';
const DIRECT_STEP = 'ollama chat';
const SUMMARY_STEP = 'summary';
/** The width of tasks.current_task. */
const CURRENT_TASK_CHARS = 200;

export type RunOutcome = { kind: 'answer'; answer: string } | { kind: 'pause'; pause: PauseRequest };

export interface RunDependencies {
  ollama: OllamaGateway;
  executor: ToolExecutor;
  config: AgentConfig;
  events: RunEvents;
  /** The time of the steps' startedAt and durations. */
  clock: Clock;
}

export interface RunContext extends ModelCallSettings {
  /** Null in direct mode, which offers no tools. */
  workspace: TaskWorkspace | null;
  caller: ToolCaller;
}

/**
 * One run of the agent on its RunState, the only writer of it. Each round is one model call on the
 * conversation as it stands; tool calls go to the ToolExecutor, which returns a result or a pause. The
 * model plans only when the work needs it, through the `plan` tool: each subtask's instruction then
 * comes back as that tool's result, so the conversation has no new user turn and, with thinking on,
 * the chat template keeps the earlier reasoning and the cached prefix. A subtask finished with a note
 * in prose gets the next instruction as a user turn instead.
 */
export class RunLoop {
  private readonly model: ModelCaller;
  private readonly knownTools: Set<string>;
  private readonly answer: AnswerStream;
  private readonly seen = new Map<string, number>();
  /** Images of the turn's results by their index, until the turn joins the conversation (not kept in the RunState: a pause drops them). */
  private readonly turnImages = new Map<number, Buffer[]>();
  private roundsInStep = 0;
  private invalidRounds = 0;

  constructor(
    readonly state: RunState,
    private readonly deps: RunDependencies,
    private readonly context: RunContext,
  ) {
    this.model = new ModelCaller(state, deps, context);
    this.knownTools = new Set(context.tools.map((tool) => tool.function.name!));
    this.answer = new AnswerStream(deps.events, state.taskId);
  }

  /** A new turn of the session: the system prompt, the earlier turns, the request. */
  begin(start: ChatMessage[], systemPrompt: string): void {
    this.state.messages.push({ role: 'system', content: this.model.systemPrompt(systemPrompt) }, ...start);
    this.model.checkFits();
  }

  /** Calls the model and runs its tool calls until it gives the final answer, or a call pauses. */
  async run(): Promise<RunOutcome> {
    const { state } = this;
    await this.showPosition();
    let emptyRetried = false;
    let continued = '';
    let continuations = 0;
    for (;;) {
      this.countRound();
      const subtask = state.position.subtask;
      await this.status(this.roundsInStep === 1 ? this.stepLabel() : `${this.stepLabel()} (round ${this.roundsInStep})`);
      const final = state.plan === null || state.position.phase === 'summary';
      const reply = await this.model.call(subtask, final ? this.answer : undefined);
      const { answer, thinking: leaked } = splitThinking(reply.content);
      const thinking = [reply.thinking, leaked].filter(Boolean).join('\n\n');
      const native = nativeToolCalls(reply.toolCalls);
      // Without tools (direct mode) there is nothing to call: any markup is the answer's text.
      const calls = this.knownTools.size === 0 ? [] : native.length > 0 ? native : parseToolCallsFromText(answer, this.knownTools);
      const recovered = native.length === 0 && calls.length > 0;
      const text = this.model.textMode;
      state.messages.push({
        role: 'assistant',
        // A native model's recovered calls go back as tool_calls (as if its parser had worked); a text
        // model sees its own <tool_call> blocks, the only form it knows.
        content: recovered && !text ? '' : answer,
        ...(thinking ? { thinking } : {}),
        ...(calls.length > 0 && !text ? { tool_calls: calls } : {}),
      });
      if (calls.length > 0) {
        this.answer.withdraw();
        await this.answer.flushed();
        state.turn = { calls, results: [] };
        const paused = await this.runTurn();
        if (paused) return paused;
        continue;
      }
      if (reply.doneReason === 'length') {
        if (continuations++ >= MAX_CONTINUATIONS) {
          throw new AgentFailure(
            `The model's answer was cut off ${continuations} times (done_reason "length", ${reply.evalCount} tokens in the last part). ${this.model.raiseHint()}, or ask for a shorter answer.`,
          );
        }
        this.answer.keep();
        continued += answer;
        state.messages.push({ role: 'user', content: CONTINUE_FEEDBACK });
        continue;
      }
      if (answer.trim() === '' && continued === '') {
        if (emptyRetried) {
          throw new AgentFailure(
            `The model returned an empty answer twice (done_reason "${reply.doneReason}", ${reply.evalCount} output tokens): Ollama may have dropped a tool call it could not parse (ollama#17274). Try again or use a larger model (e.g. ${state.model.startsWith('qwen3') ? 'qwen3:14b' : 'qwen3:8b'}).`,
          );
        }
        emptyRetried = true;
        state.messages.push({ role: 'user', content: EMPTY_FEEDBACK });
        continue;
      }
      if (!final) {
        // A subtask finished with a note in prose: the next instruction has to be a user turn.
        state.messages.push({ role: 'user', content: await this.advance() });
        continued = '';
        continuations = 0;
        emptyRetried = false;
        continue;
      }
      await this.answer.flushed();
      state.position = { subtask: '', phase: 'done' };
      await this.showEnd();
      return { kind: 'answer', answer: (continued + answer).trim() };
    }
  }

  /**
   * Continues a run stopped for a person: `result` is what the call that asked gets (the action's real
   * output when approved), the rest of that turn is reported as not run, and `instruction` (the
   * person's new message) follows when given.
   */
  async resume(result: ToolResult, instruction: ChatMessage | null): Promise<RunOutcome> {
    const { state } = this;
    const pause = state.pause;
    if (!pause) throw new AgentFailure('The stored point to continue from has no pending request.');
    delete state.pause;
    const output = await this.apply(pause.call, result);
    const at = state.turn.results.length;
    const later = state.turn.calls.slice(at + 1).map((call) => ({ call, output: SKIPPED_OUTPUT }));
    this.endTurn([...state.turn.results, { call: pause.call, output }, ...later]);
    if (instruction) state.messages.push(instruction);
    this.model.checkFits();
    return this.run();
  }

  /** The calls of the turn not yet run, in order; a pause stops the turn where it is. */
  private async runTurn(): Promise<RunOutcome | null> {
    const { state } = this;
    let invalid = 0;
    for (const call of state.turn.calls.slice(state.turn.results.length)) {
      this.context.signal.throwIfAborted();
      const problem = invalidCall(call, this.context.tools);
      if (problem) {
        invalid++;
        await this.deps.events.emit({
          type: 'step',
          taskId: state.taskId,
          step: {
            taskId: state.taskId,
            subtask: state.position.subtask,
            kind: 'tool_call',
            name: call.function.name,
            outcome: 'error',
            startedAt: nowIso(this.deps.clock),
            durationMs: 0,
            detail: { arguments: call.function.arguments, error: problem },
          },
        });
        state.turn.results.push({ call, output: problem });
        continue;
      }
      const label = this.actionLabel(call);
      await this.status(label);
      const outcome = await this.deps.executor.execute(call, {
        taskId: state.taskId,
        subtask: state.position.subtask,
        signal: this.context.signal,
        // Only a run with tools reaches here, and such a run has its workspace.
        workspace: this.context.workspace!,
        caller: this.context.caller,
        events: this.deps.events,
        model: state.model,
        label,
      });
      if (outcome.kind === 'pause') {
        const { pause } = outcome;
        state.pause =
          pause.kind === 'approval'
            ? { kind: 'approval', id: pause.approvalId, call, baseSha256: pause.baseSha256 }
            : { kind: 'question', id: pause.questionId, call, baseSha256: null, options: pause.options };
        await this.deps.events.emit({ type: 'paused', taskId: state.taskId, kind: pause.kind, id: state.pause.id });
        return { kind: 'pause', pause };
      }
      state.turn.results.push({ call, output: await this.apply(call, outcome.result) });
      if (outcome.result.images?.length) this.turnImages.set(state.turn.results.length - 1, outcome.result.images);
    }
    const { results } = state.turn;
    this.invalidRounds = invalid === results.length ? this.invalidRounds + 1 : 0;
    if (this.invalidRounds >= INVALID_ROUND_LIMIT) {
      throw new AgentFailure(`Stopped: the model made invalid tool calls ${INVALID_ROUND_LIMIT} rounds in a row; the last: ${results.at(-1)!.output}`);
    }
    this.endTurn(results);
    return null;
  }

  /** What a call's result does to the run (a file change, a plan step), and the text the model gets. */
  private async apply(call: ChatToolCall, result: ToolResult): Promise<string> {
    const { state } = this;
    this.context.signal.throwIfAborted();
    if (result.change) {
      state.changes[result.change.path] = mergeChange(state.changes[result.change.path], result.change);
      await this.deps.events.emit({ type: 'file_change', taskId: state.taskId, change: result.change });
    }
    // The Task's model answered for the tool (an MCP server's sampling requests): the Task's tokens.
    if (result.tokens) {
      state.tokens.input += result.tokens.input;
      state.tokens.output += result.tokens.output;
      state.tokens.bySubtask[state.position.subtask] = (state.tokens.bySubtask[state.position.subtask] ?? 0) + result.tokens.input + result.tokens.output;
      await this.deps.events.emit({ type: 'tokens', taskId: state.taskId, inputTokens: state.tokens.input, outputTokens: state.tokens.output });
    }
    const output = result.plan ? await this.applyPlan(result.plan) : result.output;
    const fingerprint = fingerprintOf(call, output);
    const repeats = (this.seen.get(fingerprint) ?? 0) + 1;
    this.seen.set(fingerprint, repeats);
    if (repeats >= REPEAT_LIMIT) {
      throw new AgentFailure(`Stopped: the model repeated the same call ${REPEAT_LIMIT} times with the same result: ${describe(call)}`);
    }
    return output;
  }

  /** A new plan starts at its first subtask; `done` moves on. The answer is the next instruction. */
  private async applyPlan(update: PlanUpdate): Promise<string> {
    const { state } = this;
    if ('subtasks' in update) {
      if (state.plan !== null) return 'Error: a plan is already being worked through. Finish the current subtask, then call plan with done.';
      state.plan = update.subtasks;
      const order = executionOrder(update.subtasks)!;
      this.moveTo({ subtask: order[0].id, phase: 'working' });
      await this.showPosition();
      return `Plan accepted: ${order.length} subtasks.\n${subtaskInstruction(order[0], 0, order.length)}`;
    }
    if (state.plan === null || state.position.phase !== 'working') return 'Error: there is no subtask in progress. Continue with the work, or give the final answer.';
    return this.advance();
  }

  /** The current subtask is done: the next one (in dependency order), or the summary. Returns its instruction. */
  private async advance(): Promise<string> {
    const { state } = this;
    const order = executionOrder(state.plan!)!;
    const index = order.findIndex((subtask) => subtask.id === state.position.subtask);
    const next = order[index + 1] as Subtask | undefined;
    await this.progress({ completedSubtasks: index + 1 });
    this.moveTo(next ? { subtask: next.id, phase: 'working' } : { subtask: '', phase: 'summary' });
    await this.showPosition();
    return next ? subtaskInstruction(next, index + 1, order.length) : SUMMARY_INSTRUCTION;
  }

  private endTurn(results: TurnResult[]): void {
    this.state.messages.push(...this.resultMessages(results));
    this.state.turn = { calls: [], results: [] };
    this.turnImages.clear();
  }

  /** How a turn's results join the conversation: one message per result, or one text block for a text-protocol model. */
  private resultMessages(results: TurnResult[]): ChatMessage[] {
    if (this.model.textMode) return [textToolResults(results)];
    // A tool's images (an MCP server's image content) go with its result to a vision model; others get the text only.
    const vision = this.context.profile.facts.capabilities.includes('vision');
    return results.map(({ call, output }, index) => {
      const images = vision ? this.turnImages.get(index) : undefined;
      return { role: 'tool', tool_name: call.function.name, ...(call.id ? { tool_call_id: call.id } : {}), content: output, ...(images ? { images } : {}) };
    });
  }

  private countRound(): void {
    const { maxRoundsPerSubtask, maxRoundsPerTask } = this.deps.config.agent;
    if (++this.roundsInStep > maxRoundsPerSubtask) throw new AgentFailure(`Stopped: the round limit of ${maxRoundsPerSubtask} model calls per subtask was reached.`);
    if (++this.state.rounds > maxRoundsPerTask) throw new AgentFailure(`Stopped: the round limit of ${maxRoundsPerTask} model calls per task was reached.`);
  }

  private moveTo(position: RunState['position']): void {
    this.state.position = position;
    this.roundsInStep = 0;
  }

  /**
   * The step a person sees: `ollama chat` without a plan, else the subtask's title or `summary`; a tier
   * other than the default is named after it (`ollama chat [high_performance]`).
   */
  private stepLabel(): string {
    const { plan, position, tier } = this.state;
    const step = plan === null ? DIRECT_STEP : (plan.find((subtask) => subtask.id === position.subtask)?.title ?? SUMMARY_STEP);
    return tier === DEFAULT_TIER ? step : `${step} [${tier}]`;
  }

  private actionLabel(call: ChatToolCall): string {
    return this.state.plan === null ? actionOf(call) : `${this.stepLabel()} / ${actionOf(call)}`;
  }

  private async status(currentTask: string): Promise<void> {
    await this.deps.events.emit({ type: 'status', taskId: this.state.taskId, status: 'running', currentTask: currentTask.slice(0, CURRENT_TASK_CHARS) });
  }

  /** Where the run stands, as `completed_tasks` and `current_task`: `0/1 ollama chat` without a plan. */
  private async showPosition(): Promise<void> {
    const { plan, position } = this.state;
    if (plan === null) return this.progress({ completedSubtasks: 0, currentTask: this.stepLabel() });
    const order = executionOrder(plan)!;
    const index = position.phase === 'working' ? order.findIndex((subtask) => subtask.id === position.subtask) : order.length;
    await this.progress({ completedSubtasks: index, currentTask: this.stepLabel() });
  }

  private async showEnd(): Promise<void> {
    await this.progress({ completedSubtasks: this.state.plan?.length ?? 1 });
  }

  private async progress(fields: { completedSubtasks: number; currentTask?: string }): Promise<void> {
    const { plan, tokens, taskId } = this.state;
    await this.deps.events.emit({
      type: 'progress',
      taskId,
      totalSubtasks: plan?.length ?? 1,
      criticalPathTokens: plan ? criticalPathTokens(plan, tokens.bySubtask) : 0,
      ...fields,
    });
  }
}

/** The action as progress shows it: the tool and its main argument, on one line. */
function actionOf(call: ChatToolCall): string {
  const args = call.function.arguments;
  const main = args.command ?? args.path ?? args.pattern ?? '';
  return `${call.function.name}${main === '' ? '' : `: ${typeof main === 'string' ? main : JSON.stringify(main)}`}`.replace(/\s+/g, ' ');
}

function fingerprintOf(call: ChatToolCall, output: string): string {
  return createHash('sha256').update(call.function.name).update('\0').update(JSON.stringify(call.function.arguments)).update('\0').update(output).digest('hex');
}

function describe(call: ChatToolCall): string {
  return `${call.function.name}(${cutText(JSON.stringify(call.function.arguments), 200)})`;
}

function mergeChange(previous: FileChange | undefined, next: FileChange): FileChange {
  return previous ? { ...next, created: previous.created || next.created } : next;
}
