import { SdkError, SdkErrorCode, type CreateMessageRequest, type CreateMessageResult, type Tool as McpTool } from '@modelcontextprotocol/client';
import type { Skill, SkillFile } from '@modelcontextprotocol/client/ext/skills';
import { pathToFileURL } from 'node:url';
import type { ChatToolCall } from '../ollama/ollama.gateway.js';
import type { OfferedTool, ToolCallContext, ToolCaller, ToolResult, ToolSource, ToolStep } from '../agent/core/tool-source.js';
import type { McpServerConfig } from './mcp-server-config.js';
import { effectOf, modelToolName, ollamaTool, toolAllowed } from './offered-tools.js';
import type { McpCallAudit } from './mcp-call-audit.js';
import type { ConnectionPool } from './connection-pool.js';
import { readRequestedForm } from './elicitation-form.js';
import { messageOf, type DownKind, type Elicitor, type Sampler, type ServerConnection } from './server-connection.js';
import { toModelResult } from './tool-results.js';

/** A tool of this server as offered, and the name the server knows it by. */
interface Entry {
  offered: OfferedTool;
  tool: McpTool;
}

/** One skill a server serves, and how to read its files through that server. */
export interface ServedSkill {
  entry: Skill;
  read(ref: string | undefined, signal?: AbortSignal): Promise<SkillFile>;
}

/** Answers one sampling request of a server on the Task's model; returns the answer and its tokens. */
export type SampleOnModel = (
  request: CreateMessageRequest['params'],
  model: string | undefined,
  signal: AbortSignal,
) => Promise<{ result: CreateMessageResult; inputTokens: number; outputTokens: number }>;

/**
 * How long a run's start waits for a server that is not connected before it offers what it last listed
 * (or nothing): a hung server must not hold up every Task.
 */
const LISTING_WAIT_MS = 3000;

/** Sampling requests one call may make: a server cannot spend the Task's model on more. */
const MAX_SAMPLES_PER_CALL = 3;
/**
 * What the model is told of a server that is down: a fixed sentence per state. The server's own error
 * text (its to choose: a prompt injection, ESC, U+202E) goes to the log and `/admin/mcp-servers` only.
 */
const DOWN_REASONS: Record<DownKind | 'connecting', string> = {
  cannot_start: 'it cannot be started on this host',
  identity_unsendable: 'your identity cannot be sent to it exactly',
  cannot_connect: 'it could not be connected to',
  timed_out: 'it did not answer in time',
  closed: 'it closed the connection',
  connecting: 'it is still connecting',
};
/** Forms one call may put to the person: a server cannot keep them answering. */
const MAX_FORMS_PER_CALL = 3;

/** What one call's requests back to this client cost: sampling tokens, and forms put to the person. */
interface Spent {
  input: number;
  output: number;
  samples: number;
  forms: number;
}

/**
 * One configured MCP server as a ToolSource (`mcp:<name>`): the tools its `tools` lists let through,
 * for callers in its `allow_groups`, named `<server>__<tool>`; each call bounded by `timeout_ms` and
 * `max_output_chars`, audited (`mcp_tool.call`) and traced (`mcp_tool`).
 */
export class McpServerSource implements ToolSource {
  readonly id: string;

  constructor(
    readonly name: string,
    private readonly config: McpServerConfig,
    private readonly pool: ConnectionPool,
    private readonly audit: McpCallAudit,
    private readonly limits: { toolOutputChars: number },
    /** Present only for a server with `sampling: true`. */
    private readonly sample?: SampleOnModel,
  ) {
    this.id = `mcp:${name}`;
  }

  get allowGroups(): string[] {
    return this.config.allowGroups;
  }

  /** Whether this caller may see the server's tools at all: `allow_groups` empty, or one in common. */
  allows(caller: ToolCaller): boolean {
    return this.config.allowGroups.length === 0 || caller.groups.some((group) => this.config.allowGroups.includes(group));
  }

  async tools(caller: ToolCaller): Promise<OfferedTool[]> {
    if (!this.allows(caller)) return [];
    const connection = this.pool.forCaller(caller);
    await connection.ready(Math.min(LISTING_WAIT_MS, this.config.timeoutMs), { retryRecent: false });
    return this.entries(connection).map((entry) => entry.offered);
  }

  /**
   * The skills the server serves (the skills extension), for callers in its `allow_groups`, with how to
   * read each one's files (`ref` relative to the skill's folder; absent: its SKILL.md), checked by the SDK.
   */
  async skills(caller: ToolCaller): Promise<ServedSkill[]> {
    if (!this.allows(caller)) return [];
    const connection = this.pool.forCaller(caller);
    await connection.ready(Math.min(LISTING_WAIT_MS, this.config.timeoutMs), { retryRecent: false });
    return connection.skills.map((entry) => ({
      entry,
      read: (ref: string | undefined, signal?: AbortSignal) => connection.readSkill(entry, ref, { signal, timeoutMs: this.config.timeoutMs }),
    }));
  }

  /**
   * A server that never connected is named to the model with why, so it can say so instead of looking
   * for tools that are not there: the same words for the same state, none of them the server's.
   */
  notices(caller: ToolCaller): string[] {
    if (!this.allows(caller)) return [];
    const connection = this.pool.forCaller(caller);
    if (connection.state === 'connected' || connection.connectedAt !== null) return [];
    return [`The MCP server "${this.name}" is unavailable: ${downReason(connection)}. Its tools are not offered in this task.`];
  }

  async execute(call: ChatToolCall, context: ToolCallContext): Promise<ToolResult> {
    // The audit's duration, on the run's clock (the executor times the trace's step on it too).
    const started = context.clock.now();
    const entry = this.allows(context.caller)
      ? this.entries(this.pool.forCaller(context.caller)).find((candidate) => candidate.offered.definition.function.name === call.function.name)
      : undefined;
    const tool = entry?.tool.name ?? call.function.name;
    const spent: Spent = { input: 0, output: 0, samples: 0, forms: 0 };
    const finish = async (result: ToolResult, outcome: 'ok' | 'error' | 'timeout' | 'cancelled' | 'denied', error?: string) => {
      const durationMs = context.clock.now() - started;
      const step: ToolStep = {
        kind: 'mcp_tool',
        name: call.function.name,
        outcome,
        detail: {
          server: this.name,
          tool,
          arguments: this.audit.boundedArguments(call.function.arguments),
          ...(error ? { error } : {}),
          outputChars: result.output.length,
          ...(result.images ? { images: result.images.length } : {}),
          ...(spent.forms > 0 ? { forms: spent.forms } : {}),
        },
      };
      await this.audit.record({
        caller: context.caller,
        taskId: context.taskId,
        sessionId: context.workspace.sessionId,
        server: this.name,
        tool,
        args: call.function.arguments,
        outcome,
        durationMs,
        error,
      });
      return { ...result, step };
    };
    const connection = this.allows(context.caller) ? this.pool.forSession(context.caller, context.workspace.sessionId, context.workspace.paths.root) : null;
    // A server that is down for this caller (it lists nothing then) is unavailable to it, not a server without the tool.
    if (!connection || (!entry && connection.downKind === null)) {
      return finish({ output: `Error: the MCP server "${this.name}" offers no tool ${call.function.name} to you.`, isError: true }, 'denied');
    }
    if (!entry || !(await connection.ready(this.config.timeoutMs))) {
      return finish(
        { output: `Error: the MCP server "${this.name}" is unavailable (${downReason(connection)}). Go on without it.`, isError: true },
        'error',
        connection.lastError ?? 'not connected',
      );
    }
    const timeoutMs = this.config.timeoutMs;
    const maxChars = this.config.maxOutputChars || this.limits.toolOutputChars;
    try {
      const roots = [{ uri: pathToFileURL(context.workspace.paths.root).href, name: 'session workspace' }];
      const scope = { roots, sampler: this.sampler(context, spent), elicitor: this.elicitor(context, tool, spent) };
      const result = await connection.call(tool, call.function.arguments, scope, { signal: context.signal, timeoutMs });
      const shown = { ...toModelResult(result, maxChars), ...(spent.samples > 0 ? { tokens: { input: spent.input, output: spent.output } } : {}) };
      return finish(shown, shown.isError ? 'error' : 'ok', shown.isError ? shown.output.slice(0, 500) : undefined);
    } catch (error) {
      if (context.signal.aborted) return finish({ output: 'Error: cancelled.', isError: true }, 'cancelled', 'the Task was cancelled');
      if (error instanceof SdkError && error.code === SdkErrorCode.RequestTimeout) {
        const message = `${this.name}__${tool} did not answer within ${timeoutMs} ms; the call was cancelled`;
        return finish({ output: `Error: ${message}. Try something else.`, isError: true }, 'timeout', message);
      }
      if (error instanceof SdkError && (error.code === SdkErrorCode.ConnectionClosed || error.code === SdkErrorCode.NotConnected || error.code === SdkErrorCode.SendFailed)) {
        const message = `the MCP server "${this.name}" stopped during the call (${error.message}); it is being restarted`;
        return finish({ output: `Error: ${message}. The call may or may not have taken effect.`, isError: true }, 'error', message);
      }
      const message = messageOf(error).slice(0, 1000);
      return finish({ output: `Error: ${message}`, isError: true }, 'error', message);
    }
  }

  async endRun(run: { taskId: string; sessionId: string }): Promise<void> {
    await this.pool.release(run.sessionId);
  }

  /**
   * The server's forms during one call (elicitation), put to the Task's person in place, at most
   * MAX_FORMS_PER_CALL; without a person to ask (a client without the Tasks extension), or for a form a
   * person cannot be shown, the server is told `decline`, and that is audited.
   */
  private elicitor(context: ToolCallContext, tool: string, spent: Spent): Elicitor {
    return async (request) => {
      const refuse = async (reason: string) => {
        const message = typeof request.message === 'string' ? request.message : '';
        await this.audit.recordDeclinedForm({ caller: context.caller, taskId: context.taskId, sessionId: context.workspace.sessionId, server: this.name, tool, message, reason });
        return { action: 'decline' as const };
      };
      const form = readRequestedForm(request);
      if ('problem' in form) return refuse(`the form cannot be shown: ${form.problem}`);
      const ask = context.askPerson;
      if (!ask) return refuse('nobody can answer in place (the Task was not submitted with the Tasks extension)');
      if (++spent.forms > MAX_FORMS_PER_CALL) return refuse(`at most ${MAX_FORMS_PER_CALL} forms per tool call`);
      return ask({ server: this.name, tool, message: form.message, schema: form.schema }, context.signal);
    };
  }

  /** The server's sampling requests during one call, answered on the Task's model and counted in `spent`. */
  private sampler({ signal, model }: ToolCallContext, spent: Spent): Sampler | undefined {
    const sample = this.sample;
    if (!sample) return undefined;
    return async (request) => {
      if (++spent.samples > MAX_SAMPLES_PER_CALL) throw new Error(`at most ${MAX_SAMPLES_PER_CALL} sampling requests per tool call`);
      const { result, inputTokens, outputTokens } = await sample(request, model, signal);
      spent.input += inputTokens;
      spent.output += outputTokens;
      return result;
    };
  }

  /** The offered tools in the server's order, named once per listing (the same list gives the same names). */
  private entries(connection: ServerConnection): Entry[] {
    const cached = this.cache.get(connection);
    if (cached?.tools === connection.tools) return cached.entries;
    const taken = new Set<string>();
    const entries: Entry[] = [];
    for (const tool of connection.tools) {
      if (!toolAllowed(tool.name, this.config.tools)) continue;
      const name = modelToolName(this.name, tool.name, taken);
      taken.add(name);
      const effect = effectOf(tool);
      const approval = this.config.approval === 'auto' ? undefined : this.config.approval;
      entries.push({ tool, offered: { definition: ollamaTool(name, tool), effect, ...(approval ? { approval } : {}), stepKind: 'mcp_tool' } });
    }
    this.cache.set(connection, { tools: connection.tools, entries });
    return entries;
  }

  private readonly cache = new WeakMap<ServerConnection, { tools: McpTool[]; entries: Entry[] }>();
}

const downReason = (connection: ServerConnection) => DOWN_REASONS[connection.downKind ?? 'connecting'];
