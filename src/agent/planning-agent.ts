import { Injectable } from '@nestjs/common';
import type { ApprovalEntity } from '../approvals/approval.entity.js';
import { approvalRequestResult, NOT_APPROVED_OUTPUT, refusedOutput, SKIPPED_OUTPUT, type ConversationAnswer } from '../approvals/approval-texts.js';
import { ApprovalsService } from '../approvals/approvals.service.js';
import { nowIso } from '../common/clock.js';
import { AppConfig } from '../config/app-config.js';
import { OllamaError } from '../ollama/ollama-error.js';
import { OllamaGateway, type ChatMessage } from '../ollama/ollama.gateway.js';
import type { FileChange } from '../workspace/workspace-files.js';
import { WorkspaceError } from '../workspace/workspace-error.js';
import { sessionFileUri } from '../workspace/session-file-uri.js';
import { AnswerStream } from './answer-stream.js';
import { RunEventSink } from './core/run-events.js';
import { AgentLoop } from './agent-loop.js';
import { AgentFailure, AgentRunner, type AgentOutcome, type AgentTask, type TaskProgress } from './agent-runner.js';
import { ApprovalGate, ApprovalPause } from './approval-gate.js';
import { decodeResume } from './approval-resume.js';
import { criticalPathTokens, executionOrder, parsePlan, PLAN_SCHEMA, type Subtask } from './plan.js';
import { resolveProfile, type ModelProfile } from './model-profile.js';
import { splitThinking } from './think-tags.js';
import { PLANNING_INSTRUCTION, SUMMARY_INSTRUCTION, subtaskInstruction, SYSTEM_PROMPT } from './prompts.js';
import { TraceRepository } from './trace.repository.js';
import { WorkspaceToolbox, type ToolContext } from './workspace-toolbox.js';

const DIRECT_STEP = 'ollama chat';
const PLANNING_STEP = 'planning';
const SUMMARY_STEP = 'summary';
/** The width of tasks.current_task. */
const CURRENT_TASK_CHARS = 200;

type Report = (progress: TaskProgress) => Promise<void>;

/**
 * The agent: a planning call (structured output) decides between the direct path (one tool-using
 * conversation, reported as `ollama chat` 0/1 → 1/1) and a plan of subtasks with dependencies, run in
 * dependency order on one continuing conversation, then summarised.
 */
@Injectable()
export class PlanningAgent extends AgentRunner {
  constructor(
    private readonly ollama: OllamaGateway,
    private readonly toolbox: WorkspaceToolbox,
    private readonly trace: TraceRepository,
    private readonly config: AppConfig,
    private readonly approvals: ApprovalsService,
    private readonly events: RunEventSink,
  ) {
    super();
  }

  async run(task: AgentTask, send: Report, signal: AbortSignal): Promise<AgentOutcome> {
    const profile = await this.profile(task, signal);
    const workspace = await this.openWorkspace(task);
    const gate: ApprovalGate = new ApprovalGate(this.toolbox, this.approvals, task, send, (): AgentLoop => loop);
    const report = gate.report;
    const loop = new AgentLoop(
      { ollama: this.ollama, toolbox: gate, trace: this.trace, config: this.config },
      {
        taskId: task.id,
        workspace,
        temperature: task.temperature,
        tools: this.toolbox.definitions(),
        profile,
        signal,
        onTokens: (inputTokens, outputTokens) => report({ inputTokens, outputTokens }),
        onAction: (action) => report({ currentTask: action.slice(0, CURRENT_TASK_CHARS) }),
      },
    );
    try {
      if (profile.notes.length > 0) {
        await this.trace.append({ taskId: task.id, subtask: '', kind: 'plan', name: 'model', outcome: 'ok', durationMs: 0, startedAt: nowIso(), detail: { notes: profile.notes } });
      }
      const answered = await this.approvals.takeAnswer(task);
      const outcome = answered ? await this.resume(loop, gate, task, answered, { signal, workspace }) : await this.start(loop, gate, task);
      return { ...outcome, result: outcome.result + deliverables(task.sessionId, [...loop.changes.values()]) };
    } catch (error) {
      if (error instanceof ApprovalPause) {
        const request = approvalRequestResult(error.approval, task.sessionId);
        return { ...this.outcome(loop, request, {}), result: request + deliverables(task.sessionId, [...loop.changes.values()]) };
      }
      if (error instanceof AgentFailure) throw new AgentFailure(error.message, { inputTokens: loop.inputTokens, outputTokens: loop.outputTokens });
      throw error;
    }
  }

  /** A new turn of the session: its conversation, a plan, then the direct path or the subtasks. */
  private async start(loop: AgentLoop, gate: ApprovalGate, task: AgentTask): Promise<AgentOutcome> {
    loop.messages.push(...conversationStart(task, loop.systemPrompt(SYSTEM_PROMPT)));
    loop.checkFits();
    await gate.report({ status: 'planning', currentTask: PLANNING_STEP, completedSubtasks: 0, totalSubtasks: 1 });
    const plan = await this.plan(loop, task.id);
    if (plan.mode === 'direct') return this.direct(loop, gate.report);
    gate.plan = plan.subtasks;
    return this.planned(loop, plan.subtasks, gate.report);
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
  private async profile(task: AgentTask, signal: AbortSignal): Promise<ModelProfile> {
    try {
      const [facts, version] = await Promise.all([this.ollama.model(signal), this.ollama.version(signal)]);
      return resolveProfile(facts, version, this.config, task.images.length);
    } catch (error) {
      if (error instanceof OllamaError && error.kind !== 'aborted') throw new AgentFailure(error.message);
      throw error;
    }
  }

  private async plan(loop: AgentLoop, taskId: string) {
    const instruction: ChatMessage = { role: 'user', content: PLANNING_INSTRUCTION };
    const reply = await loop.call('', { extra: [instruction], format: PLAN_SCHEMA, label: 'plan' });
    const { plan, problem } = parsePlan(planText(reply.content), this.config.agent.maxSubtasks);
    await this.trace.append({
      taskId, subtask: '', kind: 'plan', name: plan.mode, outcome: problem ? 'error' : 'ok', durationMs: 0, startedAt: new Date().toISOString(),
      detail: plan.mode === 'plan' ? { subtasks: plan.subtasks } : { mode: 'direct', ...(problem ? { fallback: problem } : {}) },
    });
    // A plan stays in the conversation (later subtasks refer to it); the direct path drops the planning
    // exchange, so its prompt starts exactly as the planning prompt did and reuses the cache.
    if (plan.mode === 'plan') loop.messages.push(instruction, { role: 'assistant', content: planText(reply.content) });
    return plan;
  }

  private async direct(loop: AgentLoop, report: Report): Promise<AgentOutcome> {
    await report({ status: 'running', currentTask: DIRECT_STEP, completedSubtasks: 0, totalSubtasks: 1 });
    const answer = await loop.untilAnswer('', DIRECT_STEP, false, new AnswerStream(loop.taskId, this.events));
    return this.outcome(loop, answer, { completedSubtasks: 1, totalSubtasks: 1, criticalPathTokens: 0 });
  }

  /**
   * Works through the plan; `resumeAt` (a subtask index, or the subtask count for the summary) continues
   * a conversation that stopped for approval there, whose instruction the model already has.
   */
  private async planned(loop: AgentLoop, subtasks: Subtask[], report: Report, resumeAt?: number): Promise<AgentOutcome> {
    const order = executionOrder(subtasks)!;
    const total = order.length;
    for (let index = resumeAt ?? 0; index < total; index++) {
      const subtask = order[index];
      await report({ status: 'running', currentTask: subtask.title, completedSubtasks: index, totalSubtasks: total });
      if (index !== resumeAt) loop.messages.push({ role: 'user', content: subtaskInstruction(subtask, index, total) });
      await loop.untilAnswer(subtask.id, subtask.title, true);
      await report({ completedSubtasks: index + 1, criticalPathTokens: criticalPathTokens(subtasks, loop.tokenMap) });
    }
    await report({ status: 'running', currentTask: SUMMARY_STEP, completedSubtasks: total, totalSubtasks: total });
    if (resumeAt !== total) loop.messages.push({ role: 'user', content: SUMMARY_INSTRUCTION });
    const summary = await loop.untilAnswer('', SUMMARY_STEP, true, new AnswerStream(loop.taskId, this.events));
    return this.outcome(loop, summary, { completedSubtasks: total, totalSubtasks: total, criticalPathTokens: criticalPathTokens(subtasks, loop.tokenMap) });
  }

  /**
   * The conversation that stopped for approval, continued: the answer becomes the result of the call
   * that asked (the action's real output when approved), the rest of that turn is reported as not run,
   * a new instruction follows as the person's message, and the agent goes on where it stood.
   */
  private async resume(
    loop: AgentLoop,
    gate: ApprovalGate,
    task: AgentTask,
    { approval, answer }: { approval: ApprovalEntity; answer: ConversationAnswer },
    { signal, workspace }: Pick<ToolContext, 'signal' | 'workspace'>,
  ): Promise<AgentOutcome> {
    const point = decodeResume(approval.resume);
    loop.messages.push(...point.messages);
    gate.plan = point.plan;
    const order = point.plan ? executionOrder(point.plan)! : null;
    const at = order && point.subtask !== '' ? order.findIndex((subtask) => subtask.id === point.subtask) : -1;
    await gate.report({ status: 'running', currentTask: order ? (order[at]?.title ?? SUMMARY_STEP) : DIRECT_STEP });
    let output = answer === 'deny' ? refusedOutput(null) : NOT_APPROVED_OUTPUT;
    if (answer === 'approve') {
      const run = await gate.runApproved(point.call, point.baseSha256, { taskId: task.id, subtask: point.subtask, signal, workspace });
      if (run.change) loop.changes.set(run.change.path, run.change);
      output = run.output;
    }
    const later = point.turnCalls.slice(point.turnResults.length + 1).map((call) => ({ call, output: SKIPPED_OUTPUT }));
    loop.messages.push(...loop.resultMessages([...point.turnResults, { call: point.call, output }, ...later]));
    if (answer === 'instruction') loop.messages.push(requestMessage(task));
    loop.checkFits();
    if (!order) return this.direct(loop, gate.report);
    return this.planned(loop, point.plan!, gate.report, at === -1 ? order.length : at);
  }

  private outcome(loop: AgentLoop, answer: string, progress: TaskProgress): AgentOutcome {
    return {
      result: answer.trim(),
      progress: { ...progress, inputTokens: loop.inputTokens, outputTokens: loop.outputTokens },
    };
  }
}

/**
 * The plan's JSON. Models that ignore `format` (thinking models on some Ollama versions, ollama#10538)
 * wrap it in reasoning or a code fence; what is left otherwise is not JSON and the direct path follows.
 */
function planText(content: string): string {
  const answer = splitThinking(content).answer.trim();
  return /^```(?:json)?\s*([\s\S]*?)\s*```$/.exec(answer)?.[1] ?? answer;
}

/** Earlier turns of the session, then the request (with its images): the stable start of every prompt. */
function conversationStart(task: AgentTask, systemPrompt: string): ChatMessage[] {
  const messages: ChatMessage[] = [{ role: 'system', content: systemPrompt }];
  for (const turn of task.history) {
    const note = turn.imageCount > 0 ? `\n\n[${turn.imageCount} image(s) were attached to this message]` : '';
    messages.push({ role: 'user', content: turn.request + note }, { role: 'assistant', content: turn.answer });
  }
  messages.push(requestMessage(task));
  return messages;
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
