import type { Tool } from 'ollama';
import type { ApprovalMode } from '../approvals/approval-policy.js';
import { nowIso } from '../common/clock.js';
import { cutText } from '../common/cut-text.js';
import type { ChatToolCall } from '../ollama/ollama.gateway.js';
import type { OfferedTool, ToolCallContext, ToolCaller, ToolResult, ToolSource } from './core/tool-source.js';
import type { TraceRepository } from './trace.repository.js';
import type { RunTools } from './workspace-toolbox.js';

/** The approval text shows the arguments exactly, escaped (JSON) and bounded. */
const APPROVAL_ARGUMENTS_CHARS = 2000;

/**
 * Whether a call of an offered tool waits for a person: `approval: always | never` decide; otherwise a
 * read never asks, a command asks in `commands` and `changes` modes, a change only in `changes` mode.
 */
export function needsApproval(offered: OfferedTool, mode: ApprovalMode): boolean {
  if (offered.approval) return offered.approval === 'always';
  if (offered.effect === 'read') return false;
  return offered.effect === 'command' ? mode !== 'never' : mode === 'changes';
}

/**
 * TEMPORARY HOOK (issue 22) until the rebuilt agent core (ADR 0009) takes ToolSources itself: the extra
 * tool sources of one run (the MCP servers), in the shape today's WorkspaceToolbox / ApprovalGate /
 * PlanningAgent use. It offers the sources' definitions after the workspace tools, routes their calls,
 * writes their trace steps and counts sampling tokens. The rebuilt loop replaces it with its ToolExecutor.
 */
export class SourcesHook implements RunTools {
  private spent: (input: number, output: number) => void = () => undefined;

  private constructor(
    private readonly caller: ToolCaller,
    private readonly offered: Map<string, { source: ToolSource; offered: OfferedTool }>,
    private readonly trace: TraceRepository,
  ) {}

  static async open(sources: ToolSource[], caller: ToolCaller, trace: TraceRepository): Promise<SourcesHook> {
    const offered = new Map<string, { source: ToolSource; offered: OfferedTool }>();
    for (const source of sources) {
      for (const tool of await source.tools(caller)) offered.set(tool.definition.function.name!, { source, offered: tool });
    }
    return new SourcesHook(caller, offered, trace);
  }

  get definitions(): Tool[] {
    return [...this.offered.values()].map((entry) => entry.offered.definition);
  }

  owns(name: string): boolean {
    return this.offered.has(name);
  }

  /** Where the tokens of a server's sampling requests are added to the Task's. */
  countTokens(spent: (input: number, output: number) => void): void {
    this.spent = spent;
  }

  async requiresApproval(call: ChatToolCall, mode: ApprovalMode): Promise<boolean> {
    const target = await this.target(call);
    return target !== undefined && needsApproval(target, mode);
  }

  /** What the person is asked to approve: the server's tool and the exact arguments. */
  describe(call: ChatToolCall): string {
    const { name, arguments: args } = call.function;
    const target = name === 'call_tool' ? String(args.name ?? '') : name;
    const shown = name === 'call_tool' ? (args.arguments ?? {}) : args;
    return `${target} ${cutText(JSON.stringify(shown), APPROVAL_ARGUMENTS_CHARS, { mark: 'chars' })}`;
  }

  async run(call: ChatToolCall, context: Omit<ToolCallContext, 'caller' | 'events'>): Promise<ToolResult> {
    const entry = this.offered.get(call.function.name)!;
    const startedAt = nowIso();
    const started = Date.now();
    const result = await entry.source.execute(call, {
      ...context,
      caller: this.caller,
      events: { emit: async (event) => (event.type === 'step' ? this.trace.append(event.step) : undefined) },
    });
    if (result.tokens) this.spent(result.tokens.input, result.tokens.output);
    // The sources trace their own `mcp_tool` calls; find_tools is the catalog's, traced here.
    if (entry.offered.stepKind !== 'mcp_tool') {
      await this.trace.append({
        taskId: context.taskId, subtask: context.subtask, kind: entry.offered.stepKind, name: call.function.name, outcome: result.isError ? 'error' : 'ok',
        startedAt, durationMs: Date.now() - started, detail: { arguments: call.function.arguments, outputChars: result.output.length },
      });
    }
    return result;
  }

  async end(run: { taskId: string; sessionId: string }): Promise<void> {
    const sources = new Set([...this.offered.values()].map((entry) => entry.source));
    await Promise.all([...sources].map((source) => source.endRun?.(run)));
  }

  private async target(call: ChatToolCall): Promise<OfferedTool | undefined> {
    const entry = this.offered.get(call.function.name);
    if (!entry) return undefined;
    return entry.source.offeredFor ? await entry.source.offeredFor(call, this.caller) : entry.offered;
  }
}
