import type { ApprovalEntity } from '../approvals/approval.entity.js';
import { CHANGED_SINCE_OUTPUT, chosenOutput, DECLINED_QUESTION_OUTPUT, refusedOutput, waitingLabel } from '../approvals/approval-texts.js';
import type { ApprovalDraft, ApprovalsService } from '../approvals/approvals.service.js';
import { nowIso, type Clock } from '../common/clock.js';
import { cutText } from '../common/cut-text.js';
import type { ChatToolCall } from '../ollama/ollama.gateway.js';
import type { AgentTask } from './agent-runner.js';
import type { StepRecord } from './trace.repository.js';
import type { OfferedTool, PersonForm, PersonRequest, ToolCallContext, ToolExecutor, ToolOutcome, ToolResult, ToolSource } from './core/tool-source.js';

/** Why an unattended Task with `approvals: deny` was told no (issue 38): nobody is there to approve, and a schedule never approves for a person. */
const UNATTENDED_REFUSAL = 'nobody watches this scheduled or triggered task, and its approvals setting is deny';

interface Route {
  source: ToolSource;
  offered: OfferedTool;
}

/**
 * The run's ToolExecutor: each call goes to the source that offered its name, through
 * `agent.approvals`; the offered tool says whether a call needs a person and what they see
 * (`personRequest`), so the executor knows no concrete source and no tool name. A call that needs a person becomes an approval request; a client with the
 * Tasks extension answers while the Task holds its slot (the request is stored at once), otherwise (or
 * when `wait_ms` runs out) the outcome is a pause, and the run stores its RunState with it (PausedRuns),
 * with the request itself when it was not stored yet.
 */
export class ApprovalExecutor implements ToolExecutor {
  /** The requests this run made, by id: the Task's result describes the one it paused for. */
  readonly requested = new Map<string, ApprovalEntity>();
  /** The requests left for the conversation, not stored yet: they are stored with the pause. */
  private readonly unstored = new Map<string, ApprovalDraft>();

  constructor(
    private readonly routes: Map<string, Route>,
    private readonly approvals: ApprovalsService,
    private readonly task: AgentTask,
    /** The run's clock: the steps this executor records are timed by it, as the loop's are. */
    private readonly clock: Clock,
  ) {}

  /** Routes for the tools of `sources` (the first source to offer a name keeps it), in their order. */
  static async routesOf(sources: ToolSource[], caller: ToolCallContext['caller']): Promise<Map<string, Route>> {
    const routes = new Map<string, Route>();
    for (const source of sources) {
      for (const offered of await source.tools(caller)) {
        const name = offered.definition.function.name!;
        if (!routes.has(name)) routes.set(name, { source, offered });
      }
    }
    return routes;
  }

  async execute(call: ChatToolCall, callContext: ToolCallContext): Promise<ToolOutcome> {
    const context = this.withPerson(callContext);
    const route = this.routes.get(call.function.name);
    if (!route) return result({ output: `Error: unknown tool "${call.function.name}".`, isError: true });
    // A source that dispatches by argument (the MCP catalog's call_tool) is asked about as the tool it reaches.
    const target = (await route.source.resolve?.(call, context.caller)) ?? { offered: route.offered, call };
    const asked = await this.personRequest(target.offered, target.call, context);
    if (!asked) return result(await this.run(route, call, this.unasked(target.offered, context)));
    if (asked.kind === 'question') return this.ask(call, asked, context);
    if (this.task.unattended === 'deny') return result({ output: refusedOutput(UNATTENDED_REFUSAL) });
    const approval = await this.show(
      this.approvals.draft({
        taskId: this.task.id,
        sessionId: this.task.sessionId,
        owner: this.task.owner,
        kind: 'approval',
        // Another MCP server's tool names do not fit the column (and need no diff): they are `mcp_tool`, named in the subject.
        tool: target.offered.stepKind === 'mcp_tool' ? 'mcp_tool' : call.function.name,
        subject: asked.subject,
        diff: asked.diff,
        inPlace: this.task.answersInPlace,
      }),
    );
    if (approval.waiting) {
      await context.events.emit({ type: 'status', taskId: this.task.id, status: 'running', currentTask: waitingLabel(approval) });
      const outcome = await this.approvals.awaitInPlace(approval, context.signal);
      if (context.label) await context.events.emit({ type: 'status', taskId: this.task.id, status: 'running', currentTask: context.label });
      if (outcome.state === 'granted') return result(await this.runApproved(call, asked.baseSha256, context));
      if (outcome.state === 'denied') return result({ output: refusedOutput(outcome.reason) });
    }
    return { kind: 'pause', pause: { kind: 'approval', approvalId: approval.id, call, baseSha256: asked.baseSha256 } };
  }

  /**
   * A question with choices waits like an approval, through the same rows: answered in place (a form
   * whose one property is an enum of the options) or, once the run has stopped, by the session's next request.
   */
  private async ask(call: ChatToolCall, asked: Extract<PersonRequest, { kind: 'question' }>, context: ToolCallContext): Promise<ToolOutcome> {
    const { question: text, options } = asked;
    await this.record(context, { kind: 'tool_call', name: call.function.name, outcome: 'ok', startedAt: nowIso(this.clock), durationMs: 0, detail: { question: text, options } });
    if (this.task.unattended === 'deny') return result({ output: DECLINED_QUESTION_OUTPUT });
    const question = await this.show(
      this.approvals.draft({
        taskId: this.task.id,
        sessionId: this.task.sessionId,
        owner: this.task.owner,
        kind: 'question',
        tool: call.function.name,
        subject: text,
        diff: null,
        options,
        inPlace: this.task.answersInPlace,
      }),
    );
    if (question.waiting) {
      await context.events.emit({ type: 'status', taskId: this.task.id, status: 'running', currentTask: waitingLabel(question) });
      const outcome = await this.approvals.awaitInPlace(question, context.signal);
      if (context.label) await context.events.emit({ type: 'status', taskId: this.task.id, status: 'running', currentTask: context.label });
      if (outcome.state === 'granted') return result({ output: chosenOutput(outcome.reason ?? '') });
      if (outcome.state === 'denied') return result({ output: DECLINED_QUESTION_OUTPUT });
    }
    return { kind: 'pause', pause: { kind: 'question', questionId: question.id, call, question: text, options } };
  }

  /**
   * A request the Task waits for in place is stored now (its person answers it meanwhile); one left for
   * the conversation is stored with the run's pause, in the same unit of work (`unstoredRequest`).
   */
  private async show(draft: ApprovalDraft): Promise<ApprovalEntity> {
    this.requested.set(draft.row.id, draft.row);
    if (draft.row.waiting) await this.approvals.store(draft);
    else this.unstored.set(draft.row.id, draft);
    return draft.row;
  }

  /** The request `id` and its audit event when they are still to be stored (with the pause), else null. */
  unstoredRequest(id: string): ApprovalDraft | null {
    return this.unstored.get(id) ?? null;
  }

  /**
   * The context a source's call runs in: with `askPerson` when the Task's client answers in place, so
   * that another server's form reaches the person while the Task holds its slot (shown in
   * `current_task` like a question); without it, a server that asks is told `decline`.
   */
  private withPerson(context: ToolCallContext): ToolCallContext {
    if (!this.approvals.answersInPlace(this.task.answersInPlace)) return context;
    const askPerson = async (form: PersonForm, signal: AbortSignal) => {
      const task = { taskId: this.task.id, sessionId: this.task.sessionId, owner: this.task.owner };
      const answer = await this.approvals.askForm({ ...task, ...form }, signal, (row) =>
        context.events.emit({ type: 'status', taskId: this.task.id, status: 'running', currentTask: waitingLabel(row) }),
      );
      if (context.label) await context.events.emit({ type: 'status', taskId: this.task.id, status: 'running', currentTask: context.label });
      return answer;
    };
    return { ...context, askPerson };
  }

  /** Runs an approved call, while what the person was shown still applies (a file change: the file is still the one whose diff was shown). */
  async runApproved(call: ChatToolCall, baseSha256: string | null, callContext: ToolCallContext): Promise<ToolResult> {
    const context = this.withPerson(callContext);
    const route = this.routes.get(call.function.name);
    if (!route) return { output: `Error: the tool "${call.function.name}" is no longer offered; the approved action was not run.`, isError: true };
    if (baseSha256 !== null) {
      const target = (await route.source.resolve?.(call, context.caller)) ?? { offered: route.offered, call };
      if (target.offered.stillApplies && !(await target.offered.stillApplies(target.call, baseSha256, context))) return { output: CHANGED_SINCE_OUTPUT };
    }
    return this.run(route, call, context);
  }

  /** Runs a call on its source and records the step it describes, once, timed by the run's clock. */
  private async run(route: Route, call: ChatToolCall, context: ToolCallContext): Promise<ToolResult> {
    const started = this.clock.now();
    const startedAt = nowIso(this.clock);
    const { step, ...done } = await route.source.execute(call, context);
    if (step) {
      const outcome = step.outcome ?? (done.isError ? 'error' : 'ok');
      await this.record(context, {
        kind: step.kind ?? route.offered.stepKind,
        name: step.name ?? call.function.name,
        outcome,
        startedAt,
        durationMs: this.clock.now() - started,
        detail: step.detail,
      });
    }
    return done;
  }

  /** The one place a tool step of this run is recorded (the trace and every subscriber read it as a `step` event). */
  private record(context: ToolCallContext, step: Omit<StepRecord, 'taskId' | 'subtask'>): Promise<void> {
    return context.events.emit({ type: 'step', taskId: this.task.id, step: { taskId: this.task.id, subtask: context.subtask, ...step } });
  }

  /**
   * A tool's own rule first (`approval: always | never`), then the tool's own answer (`personRequest`),
   * or the mode by the tool's effect, showing the call's name and its exact arguments (escaped, bounded).
   */
  private async personRequest(offered: OfferedTool, call: ChatToolCall, context: ToolCallContext): Promise<PersonRequest | null> {
    const { policy } = this.approvals;
    if (offered.approval === 'never') return null;
    if (offered.approval !== 'always') {
      if (offered.personRequest) return offered.personRequest(call, context, policy);
      if (offered.effect === 'read' || policy.mode === 'never' || (offered.effect === 'change' && policy.mode !== 'changes')) return null;
    }
    return { kind: 'approval', subject: `${call.function.name} ${cutText(JSON.stringify(call.function.arguments), 2000, { mark: 'chars' })}`, diff: null, baseSha256: null };
  }

  /** The context of a call that runs unasked: a command under a mode that asks for commands (allowlisted) runs read-only. */
  private unasked(offered: OfferedTool, context: ToolCallContext): ToolCallContext {
    return offered.effect === 'command' && this.approvals.policy.mode !== 'never' ? { ...context, unapproved: true } : context;
  }
}

const result = (value: ToolResult): ToolOutcome => ({ kind: 'result', result: value });
