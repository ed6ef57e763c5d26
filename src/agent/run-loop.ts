import { nowIso, type Clock } from '../common/clock.js';
import type { AgentConfig } from '../config/agent-config.js';
import type { ChatMessage, ChatToolCall, OllamaGateway } from '../ollama/ollama.gateway.js';
import { SKIPPED_OUTPUT } from '../approvals/approval-texts.js';
import { AgentFailure } from './agent-runner.js';
import { AnswerStream } from './answer-stream.js';
import type { RunEvents } from './core/run-events.js';
import type { LimitReached, RunLimit } from './core/run-limits.js';
import type { RunState, TurnResult } from './core/run-state.js';
import type { SteerInbox } from './core/steer-inbox.js';
import type { PauseRequest, PlanUpdate, ToolCaller, ToolExecutor, ToolResult } from './core/tool-source.js';
import { compactToolOutputs, ModelCaller, systemPromptFor, type ModelCallOutcome, type ModelCallSettings } from './model-caller.js';
import { completeSubtask, startPlan, type PlanMove } from './plan.js';
import { limitInstruction, LIMIT_SKIPPED_OUTPUT, limitStoppedAnswer, steeringMessage, STEERED_SKIPPED_OUTPUT, SUMMARY_INSTRUCTION, subtaskInstruction } from './prompts.js';
import { RunReporter } from './run-reporter.js';
import { describeCall, fingerprintOf, mergeChange, readReply, REPEAT_LIMIT, resultMessages, roundLimitReached } from './run-rules.js';
import { invalidCall } from './tool-arguments.js';
import type { TaskWorkspace } from './task-workspace.js';

/** Rounds in a row whose every call was invalid before the Task stops. */
const INVALID_ROUND_LIMIT = 3;
/** Continuations of an answer cut off by `num_predict` or the context (`done_reason: "length"`). */
const MAX_CONTINUATIONS = 2;
const EMPTY_FEEDBACK = 'Your last reply was empty. Answer the request, or call a tool to make progress.';
const CONTINUE_FEEDBACK = 'Your reply was cut off at the output limit. Continue exactly where it stopped, without repeating anything.';

export type RunOutcome = { kind: 'answer'; answer: string; stoppedBy?: LimitReached } | { kind: 'pause'; pause: PauseRequest };

export interface RunDependencies {
  ollama: OllamaGateway;
  executor: ToolExecutor;
  config: AgentConfig;
  events: RunEvents;
  /** The time of the steps' startedAt and durations, and of the wall budget. */
  clock: Clock;
  /** The run's limits besides its round limits (its budgets, a quota), consulted at each step boundary. */
  limits: RunLimit[];
  /** Where the person's corrections arrive; null: the run takes none (a direct run). */
  inbox: SteerInbox | null;
}

export interface RunContext extends ModelCallSettings {
  /** Null in direct mode, which offers no tools. */
  workspace: TaskWorkspace | null;
  caller: ToolCaller;
}

/**
 * One run of the agent on its RunState, the only writer of it (its collaborators return what happened:
 * the model caller a ModelCallOutcome, the executor a ToolOutcome). Each round is one model call on the
 * conversation as it stands; tool calls go to the ToolExecutor, which returns a result or a pause. The
 * model plans only when the work needs it, through the `plan` tool: each subtask's instruction then
 * comes back as that tool's result, so the conversation has no new user turn and, with thinking on,
 * the chat template keeps the earlier reasoning and the cached prefix. At each step boundary (before a
 * model call, before a tool call) the run takes the person's corrections and checks its limits; a limit
 * reached ends the run with one summary call and no tools.
 */
export class RunLoop {
  private readonly model: ModelCaller;
  private readonly knownTools: Set<string>;
  private readonly answer: AnswerStream;
  private readonly report: RunReporter;
  /** When this Task's part of the run started, and the wall time the run had spent before it. */
  private readonly startedAt: number;
  private readonly wallBefore: number;

  constructor(
    readonly state: RunState,
    private readonly deps: RunDependencies,
    private readonly context: RunContext,
  ) {
    this.model = new ModelCaller(deps, context);
    this.knownTools = new Set(context.tools.map((tool) => tool.function.name!));
    this.answer = new AnswerStream(deps.events, state.taskId);
    this.report = new RunReporter(state, deps.events);
    this.startedAt = deps.clock.now();
    this.wallBefore = state.usage.wallMs;
  }

  /** A new turn of the session: the system prompt, the earlier turns, the request. */
  begin(start: ChatMessage[], systemPrompt: string): void {
    this.state.messages.push({ role: 'system', content: systemPromptFor(systemPrompt, this.state.toolMode, this.context.tools) }, ...start);
    this.model.checkFits(this.state);
  }

  /** Calls the model and runs its tool calls until it gives the final answer, or a call pauses. */
  async run(): Promise<RunOutcome> {
    const { state } = this;
    await this.report.position();
    for (;;) {
      await this.beforeModelCall();
      const { counters } = state;
      const subtask = state.position.subtask;
      await this.report.status(counters.roundsInStep <= 1 ? this.report.stepLabel() : `${this.report.stepLabel()} (round ${counters.roundsInStep})`);
      const final = state.plan === null || state.position.phase === 'summary' || state.stopped !== undefined;
      const called = await this.callModel(subtask, final);
      if (!called) continue;
      const reply = called.reply;
      // Without tools (direct mode, or the summary after a limit) there is nothing to call: any markup is the answer's text.
      const known = state.stopped ? new Set<string>() : this.knownTools;
      const { answer, calls, message } = readReply(reply, known, state.toolMode);
      await this.report.repairedReply(reply, calls, nowIso(this.deps.clock));
      state.messages.push(message);
      if (state.stopped) return this.finish(counters.continued + answer, state.stopped);
      if (calls.length > 0) {
        this.answer.withdraw();
        await this.answer.flushed();
        state.turn = { calls, results: [] };
        const paused = await this.runTurn();
        if (paused) return paused;
        continue;
      }
      if (reply.doneReason === 'length') {
        if (counters.continuations++ >= MAX_CONTINUATIONS) {
          throw new AgentFailure(
            `The model's answer was cut off ${counters.continuations} times (done_reason "length", ${reply.evalCount} tokens in the last part). ${this.model.raiseHint()}, or ask for a shorter answer.`,
          );
        }
        this.answer.keep();
        counters.continued += answer;
        state.messages.push({ role: 'user', content: CONTINUE_FEEDBACK });
        continue;
      }
      if (answer.trim() === '' && counters.continued === '') {
        if (counters.emptyRetried) {
          throw new AgentFailure(
            `The model returned an empty answer twice (done_reason "${reply.doneReason}", ${reply.evalCount} output tokens): Ollama may have dropped a tool call it could not parse (ollama#17274). Try again or use a larger model (e.g. ${state.model.startsWith('qwen3') ? 'qwen3:14b' : 'qwen3:8b'}).`,
          );
        }
        counters.emptyRetried = true;
        state.messages.push({ role: 'user', content: EMPTY_FEEDBACK });
        continue;
      }
      if (!final) {
        // A subtask finished with a note in prose: the next instruction has to be a user turn.
        state.messages.push({ role: 'user', content: await this.advance() });
        Object.assign(counters, { continued: '', continuations: 0, emptyRetried: false });
        continue;
      }
      // A correction that arrived during this call: the answer is not final, the model reads it next.
      if (!(await this.closeInbox())) {
        this.answer.withdraw();
        await this.answer.flushed();
        continue;
      }
      return this.finish(counters.continued + answer);
    }
  }

  /**
   * Continues a run stopped for a person, in the Task `taskId` that took the answer: `result` is what
   * the call that asked gets (the action's real output when approved), the rest of that turn is reported
   * as not run, and `instruction` (the person's new message) follows when given. Token counts, the
   * critical path, the changed files and the round count are each Task's own; the budgets' usage and the
   * counters go on.
   */
  async resume(taskId: string, result: ToolResult, instruction: ChatMessage | null): Promise<RunOutcome> {
    const { state } = this;
    const pause = state.pause;
    if (!pause) throw new AgentFailure('The stored point to continue from has no pending request.');
    // A Task cancelled while the answer's action ran leaves the kept corrections untaken (AgentService drops them).
    this.context.signal.throwIfAborted();
    // Corrections sent while the run waited are the paused Task's (`state.taskId` until the next line): taken
    // now, they reach the model after the answer's result. `received` counts what this Task's inbox gives.
    const kept = this.deps.inbox ? await this.deps.inbox.take(state.taskId) : [];
    Object.assign(state, {
      taskId,
      changes: {},
      tokens: { input: 0, output: 0, bySubtask: {} },
      rounds: 0,
      steering: { pending: [...state.steering.pending, ...kept], received: 0 },
    });
    delete state.pause;
    const output = await this.apply(pause.call, result);
    const at = state.turn.results.length;
    const later = state.turn.calls.slice(at + 1).map((call) => ({ call, output: SKIPPED_OUTPUT }));
    this.endTurn([...state.turn.results, { call: pause.call, output }, ...later]);
    if (instruction) state.messages.push(instruction);
    this.model.checkFits(state);
    return this.run();
  }

  /**
   * One model call, applied to the state; null when the wall budget cut it off (the run then stops
   * with its summary). Only the summary after a limit is not bounded by the wall budget.
   */
  private async callModel(subtask: string, final: boolean): Promise<ModelCallOutcome | null> {
    const { state } = this;
    const wall = new AbortController();
    const left = state.budgets.maxWallMs - state.usage.wallMs;
    const timer = state.stopped ? null : setTimeout(() => wall.abort(), Math.max(0, left));
    timer?.unref();
    let outcome: ModelCallOutcome;
    try {
      outcome = await this.model.call(state, {
        subtask,
        answer: final ? this.answer : undefined,
        offerTools: state.stopped === undefined,
        signal: AbortSignal.any([this.context.signal, wall.signal]),
      });
    } catch (error) {
      if (!wall.signal.aborted || this.context.signal.aborted) throw error;
      this.tickWall();
      await this.stop({ limit: 'max_wall_ms', detail: `the Task ran for ${Math.round(state.usage.wallMs / 1000)} s (budget ${state.budgets.maxWallMs} ms)` });
      return null;
    } finally {
      if (timer) clearTimeout(timer);
    }
    const { reply, feedback, switchedToText, compactKeep } = outcome;
    state.messages.push(...feedback);
    if (switchedToText) {
      // Once, here: the run stays in the text protocol, and a pause keeps it (toolMode is stored).
      state.toolMode = 'text';
      if (state.messages[0]?.role === 'system') state.messages[0] = { ...state.messages[0], content: systemPromptFor(state.messages[0].content, 'text', this.context.tools) };
    }
    if (compactKeep !== null) {
      const before = state.messages;
      state.messages = compactToolOutputs(before, compactKeep);
      const outputs = state.messages.filter((message, index) => message !== before[index]).length;
      if (outputs > 0) await this.report.compacted(outputs, compactKeep, nowIso(this.deps.clock));
    }
    this.countTokens(subtask, { input: reply.promptEvalCount, output: reply.evalCount });
    state.usage.modelCalls++;
    await this.report.tokens();
    return outcome;
  }

  /** The step boundary before a model call: the wall clock, the rounds and limits, the person's corrections. */
  private async beforeModelCall(): Promise<void> {
    const { state } = this;
    if (!state.stopped) {
      const rounds = this.countRound();
      const reached = rounds ?? (await this.limitReached());
      if (reached) await this.stop(reached);
    }
    // Before the summary's call the inbox closes: a correction accepted after it becomes a follow-up Task.
    if (state.stopped) await this.closeInbox();
    else await this.takeSteering();
    await this.giveSteering();
    // Last, so that it follows the turn's results and the corrections: what the summary call answers.
    if (state.stopped) {
      const instruction = limitInstruction(state.stopped);
      if (state.messages.at(-1)?.content !== instruction) state.messages.push({ role: 'user', content: instruction });
    }
  }

  /** The calls of the turn not yet run, in order; a pause stops the turn where it is, as a limit or a correction does. */
  private async runTurn(): Promise<RunOutcome | null> {
    const { state } = this;
    let invalid = 0;
    for (const call of state.turn.calls.slice(state.turn.results.length)) {
      this.context.signal.throwIfAborted();
      const cut = await this.beforeToolCall();
      if (cut) {
        state.turn.results.push({ call, output: cut });
        continue;
      }
      const problem = invalidCall(call, this.context.tools);
      if (problem) {
        invalid++;
        await this.report.invalidCall(call, problem, nowIso(this.deps.clock));
        state.turn.results.push({ call, output: problem });
        continue;
      }
      const label = this.report.actionLabel(call);
      await this.report.status(label);
      state.usage.toolCalls++;
      const outcome = await this.deps.executor.execute(call, {
        taskId: state.taskId,
        subtask: state.position.subtask,
        signal: this.context.signal,
        // Only a run with tools reaches here, and such a run has its workspace.
        workspace: this.context.workspace!,
        caller: this.context.caller,
        events: this.deps.events,
        clock: this.deps.clock,
        model: state.model,
        label,
      });
      if (outcome.kind === 'pause') {
        const { pause } = outcome;
        state.pause =
          pause.kind === 'approval'
            ? { kind: 'approval', id: pause.approvalId, call, baseSha256: pause.baseSha256 }
            : { kind: 'question', id: pause.questionId, call, baseSha256: null, options: pause.options };
        // Corrections already accepted wait with the run, and reach the model when the wait ends.
        await this.closeInbox();
        this.tickWall();
        // The `paused` event is the caller's to emit, once the pause is stored (a client told reads the request).
        return { kind: 'pause', pause };
      }
      const output = await this.apply(call, outcome.result);
      state.turn.results.push({ call, output, ...(outcome.result.images?.length ? { images: outcome.result.images } : {}) });
    }
    const { results } = state.turn;
    state.counters.invalidRounds = invalid === results.length ? state.counters.invalidRounds + 1 : 0;
    if (state.counters.invalidRounds >= INVALID_ROUND_LIMIT) {
      throw new AgentFailure(`Stopped: the model made invalid tool calls ${INVALID_ROUND_LIMIT} rounds in a row; the last: ${results.at(-1)!.output}`);
    }
    this.endTurn(results);
    return null;
  }

  /** The step boundary before a tool call: what the call gets instead of running (a limit, a correction), or null. */
  private async beforeToolCall(): Promise<string | null> {
    const { state } = this;
    if (state.stopped) return LIMIT_SKIPPED_OUTPUT(state.stopped.limit);
    const reached = await this.limitReached();
    if (reached) {
      await this.stop(reached);
      return LIMIT_SKIPPED_OUTPUT(reached.limit);
    }
    await this.takeSteering();
    return state.steering.pending.length > 0 ? STEERED_SKIPPED_OUTPUT : null;
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
      this.countTokens(state.position.subtask, result.tokens);
      await this.report.tokens();
    }
    const output = result.plan ? await this.applyPlan(result.plan) : result.output;
    const fingerprint = fingerprintOf(call, output);
    const repeats = (state.fingerprints[fingerprint] ?? 0) + 1;
    state.fingerprints[fingerprint] = repeats;
    if (repeats >= REPEAT_LIMIT) {
      throw new AgentFailure(`Stopped: the model repeated the same call ${REPEAT_LIMIT} times with the same result: ${describeCall(call)}`);
    }
    return output;
  }

  /** A new plan starts at its first subtask; `done` moves on. The answer is the next instruction. */
  private async applyPlan(update: PlanUpdate): Promise<string> {
    const { state } = this;
    if ('subtasks' in update) {
      if (state.plan !== null) return 'Error: a plan is already being worked through. Finish the current subtask, then call plan with done.';
      state.plan = update.subtasks;
      const move = startPlan(update.subtasks);
      this.moveTo(move);
      await this.report.position();
      return `Plan accepted: ${move.total} subtasks.\n${subtaskInstruction(move.next!, 0, move.total)}`;
    }
    if (state.plan === null || state.position.phase !== 'working') return 'Error: there is no subtask in progress. Continue with the work, or give the final answer.';
    return this.advance();
  }

  /** The current subtask is done: the next one (in dependency order), or the summary. Returns its instruction. */
  private async advance(): Promise<string> {
    const move = completeSubtask(this.state.plan!, this.state.position.subtask);
    await this.report.progress({ completedSubtasks: move.completed });
    this.moveTo(move);
    await this.report.position();
    return move.next ? subtaskInstruction(move.next, move.completed, move.total) : SUMMARY_INSTRUCTION;
  }

  private moveTo(move: PlanMove): void {
    this.state.position = move.position;
    this.state.counters.roundsInStep = 0;
  }

  private endTurn(results: TurnResult[]): void {
    this.state.messages.push(...resultMessages(results, this.state.toolMode, this.context.profile.facts.capabilities.includes('vision')));
    this.state.turn = { calls: [], results: [] };
  }

  /** Counts a model call against the round limits; the limit it would pass, or null. */
  private countRound(): LimitReached | null {
    const reached = roundLimitReached(this.state, this.deps.config.agent);
    if (reached) return reached;
    this.state.counters.roundsInStep++;
    this.state.rounds++;
    return null;
  }

  private async limitReached(): Promise<LimitReached | null> {
    this.tickWall();
    for (const limit of this.deps.limits) {
      const reached = await limit.check(this.state.usage);
      if (reached) return reached;
    }
    return null;
  }

  /** A limit was reached: no more tools; the next model call (asked for at its boundary) is the summary, and its answer is the Task's. */
  private async stop(reached: LimitReached): Promise<void> {
    const { state } = this;
    state.stopped = reached;
    await this.report.limit(reached, nowIso(this.deps.clock));
  }

  /** The person's corrections accepted since the last look, kept until the model can be given them. */
  private async takeSteering(): Promise<void> {
    if (!this.deps.inbox) return;
    const taken = await this.deps.inbox.take(this.state.taskId);
    this.state.steering.pending.push(...taken);
    this.state.steering.received += taken.length;
  }

  /** Before a model call: the corrections taken so far join the conversation as the person's words, traced once. */
  private async giveSteering(): Promise<void> {
    const { state } = this;
    const pending = state.steering.pending;
    if (pending.length === 0) return;
    state.messages.push(steeringMessage(pending.map((message) => message.text)));
    state.steering.pending = [];
    await this.report.steered(pending, nowIso(this.deps.clock));
  }

  /** Closes the inbox; false when a correction arrived first (it is taken, for the model to read). */
  private async closeInbox(): Promise<boolean> {
    if (!this.deps.inbox) return true;
    let closed = true;
    while (!(await this.deps.inbox.close(this.state.taskId, this.state.steering.received))) {
      closed = false;
      await this.takeSteering();
    }
    return closed;
  }

  private async finish(answer: string, stoppedBy?: LimitReached): Promise<RunOutcome> {
    await this.answer.flushed();
    this.tickWall();
    this.state.position = { subtask: '', phase: 'done' };
    await this.report.end();
    const text = answer.trim();
    return { kind: 'answer', answer: text === '' && stoppedBy ? limitStoppedAnswer(stoppedBy) : text, ...(stoppedBy ? { stoppedBy } : {}) };
  }

  private countTokens(subtask: string, tokens: { input: number; output: number }): void {
    const { state } = this;
    state.tokens.input += tokens.input;
    // eval_count includes the thinking tokens (Ollama counts every generated token).
    state.tokens.output += tokens.output;
    state.tokens.bySubtask[subtask] = (state.tokens.bySubtask[subtask] ?? 0) + tokens.input + tokens.output;
    state.usage.tokens += tokens.input + tokens.output;
  }

  private tickWall(): void {
    this.state.usage.wallMs = this.wallBefore + (this.deps.clock.now() - this.startedAt);
  }
}
