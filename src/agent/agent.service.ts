import { Injectable } from '@nestjs/common';
import { chosenOutput, NOT_APPROVED_OUTPUT, QUESTION_DROPPED_OUTPUT, refusedOutput, type ConversationAnswer } from '../approvals/approval-texts.js';
import { pausePrompt } from '../approvals/surface-prompts.js';
import type { ApprovalEntity } from '../approvals/approval.entity.js';
import { ApprovalsService } from '../approvals/approvals.service.js';
import { Clock, nowIso, SYSTEM_CLOCK } from '../common/clock.js';
import { AppConfig } from '../config/app-config.js';
import { OllamaError } from '../ollama/ollama-error.js';
import { DEFAULT_TIER, tierModels } from '../ollama/model-tiers.js';
import { OllamaGateway, type ChatMessage } from '../ollama/ollama.gateway.js';
import { WorkspaceError } from '../workspace/workspace-error.js';
import { sessionFileUri } from '../workspace/session-file-uri.js';
import type { FileChange } from '../workspace/workspace-files.js';
import { AgentFailure, AgentRunner, type AgentOutcome, type AgentTask, type CloseSteering, type TaskProgress } from './agent-runner.js';
import { ApprovalExecutor } from './approval-executor.js';
import { CoreToolSource } from './core-tools.js';
import type { RunEvents } from './core/run-events.js';
import { RunLimits, taskBudgets, type RunBudgets } from './core/run-limits.js';
import { newRunState, type RunState } from './core/run-state.js';
import { decodeRunState, encodeRunState, UnreadableRunState } from './core/run-state-codec.js';
import type { ToolCallContext, ToolResult, ToolSource } from './core/tool-source.js';
import { resolveProfile, type ModelProfile } from './model-profile.js';
import { DIRECT_SYSTEM_PROMPT, PLAN_GUIDANCE, SYSTEM_PROMPT } from './prompts.js';
import { RunToolSources } from './core/run-tool-sources.js';
import { RunEventHub } from './run-event-hub.js';
import { PausedRuns } from './paused-runs.js';
import { RunLoop, type RunOutcome } from './run-loop.js';
import { correctionsDetail } from './run-reporter.js';
import { progressReporter, traceWriter } from './run-subscribers.js';
import { TraceRepository } from './trace.repository.js';
import { SteerInboxRepository } from './steer-inbox.repository.js';
import { WorkspaceToolbox } from './workspace-toolbox.js';

/**
 * The agent: one RunLoop per Task on a RunState that is new (a new turn of the session) or loaded from
 * the pause the session's last Task stored (PausedRuns; this request answers its approval or question). Tools come from the
 * workspace and the core's own source, through the ApprovalExecutor; what the run does reaches the
 * trace, the Task row and every RunEventHub subscriber as RunEvents.
 */
@Injectable()
export class AgentService extends AgentRunner {
  constructor(
    private readonly ollama: OllamaGateway,
    private readonly toolbox: WorkspaceToolbox,
    private readonly trace: TraceRepository,
    private readonly config: AppConfig,
    private readonly approvals: ApprovalsService,
    private readonly hub: RunEventHub,
    private readonly extraSources: RunToolSources,
    private readonly limits: RunLimits,
    private readonly inbox: SteerInboxRepository,
    private readonly pauses: PausedRuns,
    private readonly clock: Clock = SYSTEM_CLOCK,
  ) {
    super();
  }

  async run(task: AgentTask, report: (progress: TaskProgress) => Promise<void>, signal: AbortSignal, closeSteering: CloseSteering): Promise<AgentOutcome> {
    const events = this.hub.forRun([traceWriter(this.trace, { sessionId: task.sessionId, owner: task.owner }), progressReporter(report)]);
    const direct = task.mode === 'direct';
    // A pause is continued on the model it stopped on (and that model's profile), whatever tier answers it.
    const pending = direct ? null : await this.approvals.pendingOfSession(task.sessionId);
    const pendingResume = pending ? await this.pauses.resumeOf(pending) : null;
    // A request left for the conversation whose pause was never stored (its run stopped in between): no
    // run can continue it, so it ends and this request is a new one (ADR 0020 §2).
    if (pending && !pending.waiting && pendingResume === null) {
      await this.approvals.dropUnanswerable(pending);
      await this.dropKept(pending, task, events);
    }
    const model = (pendingResume === null ? null : storedModel(pendingResume)) ?? this.tierModel(task.tier);
    let profile = await this.profile(task, model, signal);
    // The direct mode has no tools and no workspace: one answer from the model.
    const workspace = direct ? null : await this.openWorkspace(task);
    const caller = { user: task.owner, email: task.ownerEmail, groups: task.ownerGroups };
    // After the workspace's and the core's own tools: each MCP server the caller may use (or their catalog), then its skills.
    const sources: ToolSource[] = direct
      ? []
      : [
          this.toolbox,
          new CoreToolSource({ maxSubtasks: this.config.agent.maxSubtasks, numCtx: this.config.ollama.numCtx }),
          ...(await this.extraSources.forCaller(caller, workspace?.paths.root ?? null)),
        ];
    const routes = await ApprovalExecutor.routesOf(sources, caller);
    // After the fixed prompt, so its bytes stay the prefix: what a source says of itself (a server that is unavailable).
    const notices = sources.flatMap((source) => source.notices?.(caller) ?? []);
    const executor = new ApprovalExecutor(routes, this.approvals, task, this.clock);
    const tools = [...routes.values()].map((route) => route.offered.definition);
    if (profile.notes.length > 0) {
      await events.emit({
        type: 'step',
        taskId: task.id,
        step: { taskId: task.id, subtask: '', kind: 'plan', name: 'model', outcome: 'ok', durationMs: 0, startedAt: nowIso(this.clock), detail: { notes: profile.notes } },
      });
    }
    // A direct Task answers nothing pending: its request is a question for the model, not for the run.
    const taken = direct ? null : await this.approvals.takeAnswer(task);
    const resume = taken ? await this.pauses.take(taken.approval) : null;
    // A decision carried by this Task for a pause that was never stored: the request is a new one.
    const answered = resume === null ? null : taken;
    if (taken && !answered) await this.dropKept(taken.approval, task, events);
    const budgets = taskBudgets(this.config.agent.budgets, task.budget);
    const state =
      resume !== null
        ? this.storedState(task, resume, budgets)
        : newRunState({ taskId: task.id, sessionId: task.sessionId, tier: task.tier, model, mode: task.mode, toolMode: profile.toolMode, think: profile.think, budgets });
    // Another request took the pending answer first, and its run stopped on another model.
    if (state.model !== model) profile = await this.profile(task, state.model, signal);
    const limits = await this.limits.forRun({ taskId: task.id, sessionId: task.sessionId, owner: task.owner, ownerGroups: task.ownerGroups, budgets: state.budgets });
    const loop = new RunLoop(
      state,
      {
        ollama: this.ollama,
        executor,
        config: this.config,
        events,
        clock: this.clock,
        limits,
        inbox: direct ? null : { take: (taskId) => this.inbox.take(taskId), close: closeSteering },
      },
      { taskId: task.id, temperature: task.temperature, tools, profile, signal, workspace, caller },
    );
    try {
      let outcome: RunOutcome;
      if (answered) {
        // Only an agent-mode Task answers a pause, so it has its workspace.
        const context: ToolCallContext = { taskId: task.id, subtask: state.position.subtask, signal, workspace: workspace!, caller, events, clock: this.clock, model: state.model };
        const result = await this.answerResult(answered, state, executor, context);
        outcome = await loop.resume(task.id, result, answered.answer === 'instruction' ? requestMessage(task) : null);
      } else {
        const prompt = direct ? DIRECT_SYSTEM_PROMPT : routes.has('plan') ? SYSTEM_PROMPT + PLAN_GUIDANCE : SYSTEM_PROMPT;
        loop.begin(conversationStart(task), notices.length > 0 ? `${prompt}\n${notices.join('\n')}` : prompt);
        outcome = await loop.run();
      }
      const files = deliverables(task.sessionId, Object.values(state.changes));
      const tokens = { inputTokens: state.tokens.input, outputTokens: state.tokens.output };
      if (outcome.kind === 'answer') return { result: outcome.answer + files, progress: { ...tokens, ...(outcome.stoppedBy ? { stoppedBy: outcome.stoppedBy.limit } : {}) } };
      const approvalId = outcome.pause.kind === 'approval' ? outcome.pause.approvalId : outcome.pause.questionId;
      const pause = { taskId: task.id, sessionId: task.sessionId, owner: task.owner, kind: outcome.pause.kind, approvalId };
      await this.pauses.store(pause, encodeRunState(state), executor.unstoredRequest(approvalId));
      // Only now: a client told "input required" (webhooks, subscriptions/listen, A2A push) finds the request stored.
      await events.emit({ type: 'paused', taskId: task.id, kind: pause.kind, id: approvalId });
      return { result: this.pauseText(executor, state, task) + files, progress: tokens };
    } catch (error) {
      if (error instanceof AgentFailure) throw new AgentFailure(error.message, { inputTokens: state.tokens.input, outputTokens: state.tokens.output });
      throw error;
    } finally {
      // A Task that took the answer but stopped before its model read what was kept for the wait (cancelled, failed).
      if (answered) await this.dropKept(answered.approval, task, events);
      await Promise.all(sources.map((source) => source.endRun?.({ taskId: task.id, sessionId: task.sessionId }) ?? Promise.resolve()));
    }
  }

  /**
   * The wait `approval` showed ended with no run to give the model what was kept for it (docs/agent.md):
   * those corrections end `dropped`, and this Task's trace says so, where the person looks next.
   */
  private async dropKept(approval: Pick<ApprovalEntity, 'id' | 'taskId'>, task: AgentTask, events: RunEvents): Promise<void> {
    const dropped = await this.inbox.dropKept(approval.taskId);
    if (dropped.length === 0) return;
    const detail = { ...correctionsDetail(dropped), kept_for: approval.id, paused_task: approval.taskId };
    const step = { taskId: task.id, subtask: '', kind: 'steer', name: 'correction', outcome: 'dropped', durationMs: 0, startedAt: nowIso(this.clock), detail } as const;
    await events.emit({ type: 'step', taskId: task.id, step });
  }

  private tierModel(tier: string): string {
    const model = tierModels(this.config.ollama).get(tier);
    if (!model)
      throw new AgentFailure(`The model tier "${tier}" is not configured (any more); the tiers are ${[...tierModels(this.config.ollama).keys()].join(', ')} (ollama.models).`);
    return model;
  }

  /** The paused run's state, which this Task continues (the loop makes it this Task's when it resumes). */
  private storedState(task: AgentTask, resume: string, budgets: RunBudgets): RunState {
    try {
      return decodeRunState(resume, { taskId: task.id, sessionId: task.sessionId, tier: DEFAULT_TIER, model: this.config.ollama.model, budgets });
    } catch (error) {
      if (error instanceof UnreadableRunState) throw new AgentFailure(error.message);
      throw error;
    }
  }

  /**
   * What the call that asked gets: the option chosen for a question; for an action its real output when
   * approved (and the file still the one shown).
   */
  private async answerResult(
    { approval, answer }: { approval: ApprovalEntity; answer: ConversationAnswer },
    state: RunState,
    executor: ApprovalExecutor,
    context: ToolCallContext,
  ): Promise<ToolResult> {
    const pause = state.pause;
    if (!pause) throw new AgentFailure('The stored point to continue from has no pending request; send the request again.');
    if (pause.kind === 'question') return { output: answer === 'approve' ? chosenOutput(approval.reason ?? '') : QUESTION_DROPPED_OUTPUT };
    if (answer === 'deny') return { output: refusedOutput(null) };
    if (answer === 'instruction') return { output: NOT_APPROVED_OUTPUT };
    return executor.runApproved(pause.call, pause.baseSha256, context);
  }

  private pauseText(executor: ApprovalExecutor, state: RunState, task: AgentTask): string {
    const request = executor.requested.get(state.pause!.id)!;
    return pausePrompt(request, task, this.config.mcp.locale);
  }

  private async openWorkspace(task: AgentTask) {
    try {
      return await this.toolbox.open(task);
    } catch (error) {
      if (error instanceof WorkspaceError) throw new AgentFailure(`The session workspace could not take the Task's images: ${error.message}`);
      throw error;
    }
  }

  /** What the model can do and how this Task will talk to it; a model or Ollama problem fails the Task. */
  private async profile(task: AgentTask, model: string, signal: AbortSignal): Promise<ModelProfile> {
    try {
      const [facts, version] = await Promise.all([this.ollama.model(signal, model), this.ollama.version(signal)]);
      return resolveProfile(facts, version, this.config, { model, imageCount: task.images.length, tools: task.mode === 'agent' });
    } catch (error) {
      if (error instanceof OllamaError && error.kind !== 'aborted') throw new AgentFailure(error.message);
      throw error;
    }
  }
}

/** Earlier turns of the session, then the request (with its images): the stable start of every prompt. */
function conversationStart(task: AgentTask): ChatMessage[] {
  const messages: ChatMessage[] = [];
  for (const turn of task.history) {
    const note = turn.imageCount > 0 ? `\n\n[${turn.imageCount} image(s) were attached to this message]` : '';
    messages.push({ role: 'user', content: turn.request + note }, { role: 'assistant', content: turn.answer });
  }
  messages.push(requestMessage(task));
  return messages;
}

/** The model a stored resume point stopped on, or null when it names none (a point from before RunState). */
function storedModel(resume: string): string | null {
  try {
    const model = (JSON.parse(resume) as { model?: unknown }).model;
    return typeof model === 'string' && model !== '' ? model : null;
  } catch {
    return null;
  }
}

/** The person's request of this Task, with its images. */
function requestMessage(task: AgentTask): ChatMessage {
  return { role: 'user', content: task.request, ...(task.images.length > 0 ? { images: task.images.map((image) => image.data) } : {}) };
}

/** The files the Task created or changed, verified by the tools that wrote them, with their resource URIs. */
function deliverables(sessionId: string, changes: FileChange[]): string {
  if (changes.length === 0) return '';
  const lines = changes.map((change) => `- ${change.path} (${change.created ? 'created' : 'changed'}, ${change.bytes} bytes) ${sessionFileUri(sessionId, change.path)}`);
  return `\n\nFiles created or changed:\n${lines.join('\n')}`;
}
