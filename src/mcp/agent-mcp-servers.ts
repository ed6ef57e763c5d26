import { Injectable } from '@nestjs/common';
import {
  fromJsonSchema,
  McpServer,
  type JsonSchemaType,
  type CallToolResult,
  type McpRequestContext,
  type ServerContext,
  type jsonSchemaValidator,
} from '@modelcontextprotocol/server';
import { AppConfig } from '../config/app-config.js';
import { SERVER_INFO } from '../common/server-info.js';
import type { Caller } from '../identity/caller.js';
import { AgentRunTool } from '../tools/agent-run.tool.js';
import { AgentStatusTool } from '../tools/agent-status.tool.js';
import { formatAcceptedText, formatSteeredText, formatNotFoundText, formatStatusText } from '../tools/status-text.js';
import { ToolPipeline } from '../tools/tool-pipeline.js';
import { AGENT_RUN_INPUT_SCHEMA, AGENT_RUN_TOOL, AGENT_STATUS_INPUT_SCHEMA, AGENT_STATUS_TOOL } from '../tools/tool-schemas.js';
import { createTaskResult } from './task-mapping.js';
import { declaresTasks, envelopeClientInfo, requestTraceContext } from './envelope.js';
import { McpResources } from './resources.js';
import { McpSkills } from './mcp-skills.js';
import { TasksExtension } from './tasks-extension.js';

/**
 * The SDK validates arguments before a handler runs, which would bypass our pipeline (no audit of
 * rejected calls, SDK wording). This validator lets everything through; ToolPipeline validates.
 */
const PIPELINE_VALIDATES: jsonSchemaValidator = {
  getValidator: () => (input: unknown) => ({ valid: true, data: input as never, errorMessage: undefined }),
};
const AGENT_RUN_SCHEMA = fromJsonSchema(AGENT_RUN_INPUT_SCHEMA as unknown as JsonSchemaType, PIPELINE_VALIDATES);
const AGENT_STATUS_SCHEMA = fromJsonSchema(AGENT_STATUS_INPUT_SCHEMA as unknown as JsonSchemaType, PIPELINE_VALIDATES);

const text = (value: string): CallToolResult => ({ content: [{ type: 'text', text: value }] });

/** Builds the SDK McpServer serving the agent's tools: one per request (HTTP) or connection (stdio); all state lives in Nest singletons. */
@Injectable()
export class AgentMcpServers {
  constructor(
    private readonly pipeline: ToolPipeline,
    private readonly agentRun: AgentRunTool,
    private readonly agentStatus: AgentStatusTool,
    private readonly tasks: TasksExtension,
    private readonly resources: McpResources,
    private readonly skills: McpSkills,
    private readonly config: AppConfig,
  ) {}

  /** `pushes`: the transport serves subscriptions/listen with resource notifications (HTTP), so the capability says so. */
  create(context: McpRequestContext, caller: Caller, pushes = false): McpServer {
    const server = new McpServer(SERVER_INFO, {
      // The two tools never change, so no list_changed notification will ever come: do not promise one.
      capabilities: { tools: { listChanged: false } },
      cacheHints: {
        'tools/list': { ttlMs: 3_600_000, cacheScope: 'public' },
        'server/discover': { ttlMs: 3_600_000, cacheScope: 'public' },
        'resources/templates/list': { ttlMs: 3_600_000, cacheScope: 'public' },
        // Per user and changed by every Task: never reuse.
        'resources/list': { ttlMs: 0, cacheScope: 'private' },
        'resources/read': { ttlMs: 0, cacheScope: 'private' },
      },
    });
    const callerOf = (ctx: ServerContext): Caller => ({ ...caller, client: clientName(ctx, server) ?? caller.client });

    server.registerTool(
      AGENT_RUN_TOOL.name,
      { ...AGENT_RUN_TOOL, inputSchema: AGENT_RUN_SCHEMA },
      async (args, ctx) => <CallToolResult>await this.pipeline.execute(AGENT_RUN_TOOL.name, callerOf(ctx), args, async (accepted) => {
          // Only a request that declared the extension may get a task (legacy requests have no envelope).
          const tasksAware = context.era === 'modern' && declaresTasks(ctx);
          const { view, steered } = await this.agentRun.call(callerOf(ctx), args, accepted, tasksAware, requestTraceContext(ctx));
          // The SDK passes a handler's `resultType: 'task'` through for tools/call.
          if (tasksAware) return createTaskResult(view, this.config.mcp.tasks, this.config.mcp.locale) as unknown as CallToolResult;
          return text(steered ? formatSteeredText(view.taskId, view.sessionId, this.config.mcp.locale) : formatAcceptedText(view.taskId, view.sessionId, this.config.mcp.locale));
        }),
    );
    server.registerTool(
      AGENT_STATUS_TOOL.name,
      { ...AGENT_STATUS_TOOL, inputSchema: AGENT_STATUS_SCHEMA },
      async (args, ctx) => <CallToolResult>await this.pipeline.execute(AGENT_STATUS_TOOL.name, callerOf(ctx), args, async (accepted) => {
          const { taskId, view } = await this.agentStatus.call(callerOf(ctx), args, accepted);
          return text(view ? formatStatusText(view, this.config.mcp.locale) : formatNotFoundText(taskId, this.config.mcp.locale));
        }),
    );
    this.resources.register(server, callerOf);
    this.skills.register(server, callerOf);
    if (pushes && context.era === 'modern') server.server.registerCapabilities({ resources: { listChanged: true, subscribe: true } });
    if (context.era === 'modern') this.tasks.register(server, callerOf);
    return server;
  }
}

function clientName(ctx: ServerContext, server: McpServer): string | null {
  const info = envelopeClientInfo(ctx) ?? server.server.getClientVersion();
  return info ? `${info.name}/${info.version}` : null;
}
