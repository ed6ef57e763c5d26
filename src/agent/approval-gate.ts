import { createHash } from 'node:crypto';
import type { ApprovalEntity } from '../approvals/approval.entity.js';
import { CHANGED_SINCE_OUTPUT, refusedOutput, waitingLabel } from '../approvals/approval-texts.js';
import type { ApprovalsService } from '../approvals/approvals.service.js';
import { unifiedDiff } from '../approvals/unified-diff.js';
import type { ChatToolCall } from '../ollama/ollama.gateway.js';
import type { AgentLoop } from './agent-loop.js';
import type { AgentTask, TaskProgress } from './agent-runner.js';
import { encodeResume } from './approval-resume.js';
import type { Subtask } from './plan.js';
import type { ToolContext, ToolRun, WorkspaceToolbox } from './workspace-toolbox.js';

/** A diff bounded for a form or a Task result (the approval is for exactly what the person saw). */
const DIFF_BOUNDS = { maxLines: 120, maxChars: 6000 };

/** The Task ends so that its request can be answered in the conversation. */
export class ApprovalPause extends Error {
  constructor(readonly approval: ApprovalEntity) {
    super('waiting for approval');
    this.name = 'ApprovalPause';
  }
}

type Report = (progress: TaskProgress) => Promise<void>;

/**
 * The tool runner of one Task run: calls that `agent.approvals` covers wait for a person; the others,
 * and approved ones, go to the workspace toolbox. A client with the Tasks extension answers while the
 * Task holds its slot; otherwise, or when `wait_ms` runs out, the run ends with an ApprovalPause.
 */
export class ApprovalGate {
  /** The plan the run works through, for resuming in the right place (null on the direct path). */
  plan: Subtask[] | null = null;
  private currentTask = '';

  constructor(
    private readonly toolbox: WorkspaceToolbox,
    private readonly approvals: ApprovalsService,
    private readonly task: AgentTask,
    private readonly send: Report,
    private readonly conversation: () => Pick<AgentLoop, 'messages' | 'turn'>,
  ) {}

  /** The run's progress reports, through here so the step shown before a wait comes back after it. */
  readonly report: Report = async (progress) => {
    if (progress.currentTask !== undefined) this.currentTask = progress.currentTask;
    await this.send(progress);
  };

  async run(call: ChatToolCall, context: ToolContext): Promise<ToolRun> {
    const { name, arguments: args } = call.function;
    const mcp = context.workspace.mcp;
    // TEMPORARY HOOK (issue 22): an MCP tool is approved by its offered effect, recorded as `mcp_tool`.
    const mcpCall = mcp?.owns(name) === true;
    if (mcpCall ? !(await mcp!.requiresApproval(call, this.approvals.policy.mode)) : !this.approvals.policy.requires(name, args)) return this.toolbox.run(call, context);
    let subject = mcpCall ? mcp!.describe(call) : typeof args.command === 'string' ? args.command : '';
    let diff: string | null = null;
    let baseSha256: string | null = null;
    if (name !== 'run_command' && !mcpCall) {
      const preview = await this.toolbox.preview(context.workspace.paths, name, args);
      if (!preview) return this.toolbox.run(call, context);
      subject = preview.path;
      diff = unifiedDiff(preview.path, preview.before, preview.after, DIFF_BOUNDS).text;
      baseSha256 = fileHash(preview.before);
    }
    const approval = await this.approvals.request({
      taskId: this.task.id,
      sessionId: this.task.sessionId,
      owner: this.task.owner,
      tool: mcpCall ? 'mcp_tool' : name,
      subject,
      diff,
      resume: this.resumePoint(call, baseSha256, context.subtask),
      inPlace: this.task.answersInPlace,
    });
    if (approval.waiting) {
      const shown = this.currentTask;
      await this.send({ currentTask: waitingLabel(approval) });
      const outcome = await this.approvals.awaitInPlace(approval, context.signal);
      await this.send({ currentTask: shown });
      if (outcome.state === 'granted') return this.runApproved(call, baseSha256, context);
      if (outcome.state === 'denied') return { output: refusedOutput(outcome.reason) };
    }
    throw new ApprovalPause(approval);
  }

  private resumePoint(call: ChatToolCall, baseSha256: string | null, subtask: string): string {
    const { messages, turn } = this.conversation();
    return encodeResume({ call, baseSha256, messages, turnCalls: turn.calls, turnResults: turn.results, plan: this.plan, subtask });
  }

  /** Runs an approved call; a file change only while the file is still the one whose diff was shown. */
  async runApproved(call: ChatToolCall, baseSha256: string | null, context: ToolContext): Promise<ToolRun> {
    if (baseSha256 !== null) {
      const preview = await this.toolbox.preview(context.workspace.paths, call.function.name, call.function.arguments);
      if (!preview || fileHash(preview.before) !== baseSha256) return { output: CHANGED_SINCE_OUTPUT };
    }
    return this.toolbox.run(call, context);
  }
}

const fileHash = (content: string | null) => (content === null ? 'absent' : createHash('sha256').update(content).digest('hex'));
