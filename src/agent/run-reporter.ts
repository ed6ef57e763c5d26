import { cutText } from '../common/cut-text.js';
import { DEFAULT_TIER } from '../ollama/model-tiers.js';
import type { ChatReply, ChatToolCall } from '../ollama/ollama.gateway.js';
import type { RunEvents } from './core/run-events.js';
import type { LimitReached } from './core/run-limits.js';
import type { RunState, SteerMessage } from './core/run-state.js';
import type { RepairKind } from './task-step.entity.js';
import type { StepRecord } from './trace.repository.js';
import { completedBefore, criticalPathTokens } from './plan.js';

const DIRECT_STEP = 'ollama chat';
const SUMMARY_STEP = 'summary';
/** The width of tasks.current_task. */
const CURRENT_TASK_CHARS = 200;

/**
 * What a person sees of a run while it goes (`current_task`, `completed_tasks`): read from the RunState,
 * never written to it, and emitted as RunEvents.
 */
export class RunReporter {
  constructor(
    private readonly state: Readonly<RunState>,
    private readonly events: RunEvents,
  ) {}

  /**
   * The step a person sees: `ollama chat` without a plan, else the subtask's title or `summary`; a tier
   * other than the default is named after it (`ollama chat [high_performance]`).
   */
  stepLabel(): string {
    const { plan, position, tier } = this.state;
    const step = plan === null ? DIRECT_STEP : (plan.find((subtask) => subtask.id === position.subtask)?.title ?? SUMMARY_STEP);
    return tier === DEFAULT_TIER ? step : `${step} [${tier}]`;
  }

  actionLabel(call: ChatToolCall): string {
    return this.state.plan === null ? actionOf(call) : `${this.stepLabel()} / ${actionOf(call)}`;
  }

  async status(currentTask: string): Promise<void> {
    await this.events.emit({ type: 'status', taskId: this.state.taskId, status: 'running', currentTask: currentTask.slice(0, CURRENT_TASK_CHARS) });
  }

  /** Where the run stands, as `completed_tasks` and `current_task`: `0/1 ollama chat` without a plan. */
  async position(): Promise<void> {
    const { plan, position } = this.state;
    await this.progress({ completedSubtasks: plan === null ? 0 : completedBefore(plan, position), currentTask: this.stepLabel() });
  }

  async end(): Promise<void> {
    await this.progress({ completedSubtasks: this.state.plan?.length ?? 1 });
  }

  async progress(fields: { completedSubtasks: number; currentTask?: string }): Promise<void> {
    const { plan, tokens, taskId } = this.state;
    await this.events.emit({
      type: 'progress',
      taskId,
      totalSubtasks: plan?.length ?? 1,
      criticalPathTokens: plan ? criticalPathTokens(plan, tokens.bySubtask) : 0,
      ...fields,
    });
  }

  /** A call the model made wrong (unknown tool, bad arguments): traced, never run. */
  async invalidCall(call: ChatToolCall, problem: string, startedAt: string): Promise<void> {
    await this.step({ kind: 'tool_call', name: call.function.name, outcome: 'error', startedAt, detail: { arguments: call.function.arguments, error: problem } });
  }

  /** The person's corrections reached the model: a trace step, and `steered` for the Task's followers. */
  async steered(messages: SteerMessage[], startedAt: string): Promise<void> {
    const detail = correctionsDetail(messages);
    await this.step({ kind: 'steer', name: 'correction', outcome: 'ok', startedAt, detail });
    await this.events.emit({ type: 'steered', taskId: this.state.taskId, count: this.state.steering.received });
  }

  /** A limit ended the tool work: a trace step with what was spent, and `current_task` says the summary is next. */
  async limit(reached: LimitReached, startedAt: string): Promise<void> {
    await this.step({ kind: 'limit', name: reached.limit, outcome: 'ok', startedAt, detail: { ...reached, usage: { ...this.state.usage } } });
    await this.status(`${reached.limit}: summary`);
  }

  /**
   * What the service mended in one model reply, one `repair` step each: calls it found in the text (no native
   * call came), native calls whose arguments were a JSON string. Nothing mended: no step.
   */
  async repairedReply(reply: ChatReply, calls: readonly ChatToolCall[], startedAt: string): Promise<void> {
    if (reply.toolCalls.length === 0 && calls.length > 0) await this.repaired('text_tool_calls', { calls: calls.length }, startedAt);
    const stringArguments = reply.toolCalls.filter((call) => typeof (call.function?.arguments as unknown) === 'string').length;
    if (stringArguments > 0) await this.repaired('string_arguments', { calls: stringArguments }, startedAt);
  }

  /** Old tool outputs were replaced by a marker so the conversation fits the context (`keep` kept whole). */
  async compacted(outputs: number, keep: number, startedAt: string): Promise<void> {
    await this.repaired('compaction', { outputs, keep }, startedAt);
  }

  private async repaired(name: RepairKind, detail: Record<string, unknown>, startedAt: string): Promise<void> {
    await this.step({ kind: 'repair', name, outcome: 'ok', startedAt, detail });
  }

  private async step(fields: Pick<StepRecord, 'kind' | 'name' | 'outcome' | 'startedAt' | 'detail'>): Promise<void> {
    const { taskId, position } = this.state;
    await this.events.emit({ type: 'step', taskId, step: { taskId, subtask: position.subtask, durationMs: 0, ...fields } });
  }

  async tokens(): Promise<void> {
    const { taskId, tokens } = this.state;
    await this.events.emit({ type: 'tokens', taskId, inputTokens: tokens.input, outputTokens: tokens.output });
  }
}

/** The action as progress shows it: the tool and its main argument, on one line. */
function actionOf(call: ChatToolCall): string {
  const args = call.function.arguments;
  const main = args.command ?? args.path ?? args.pattern ?? '';
  return `${call.function.name}${main === '' ? '' : `: ${typeof main === 'string' ? main : JSON.stringify(main)}`}`.replace(/\s+/g, ' ');
}

/** How a trace step shows corrections: how many, and each one's id, time and text (cut to 500 characters). */
export const correctionsDetail = (messages: SteerMessage[]) => ({
  count: messages.length,
  messages: messages.map((message) => ({ id: message.id, at: message.at, text: cutText(message.text, 500) })),
});
