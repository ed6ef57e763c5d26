import { Injectable, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import type { CreateMessageRequest, CreateMessageResult } from '@modelcontextprotocol/client';
import { RunToolSources } from '../agent/core/run-tool-sources.js';
import type { ToolCaller, ToolSource } from '../agent/core/tool-source.js';
import { AppConfig } from '../config/app-config.js';
import { OllamaGateway, type ChatMessage } from '../ollama/ollama.gateway.js';
import { ConnectionPool } from './connection-pool.js';
import { Telemetry } from '../telemetry/telemetry.js';
import { McpCallAudit } from './mcp-call-audit.js';
import { McpServerSource } from './mcp-server-source.js';
import { CATALOG_THRESHOLD, ToolCatalog } from './tool-catalog.js';

/** How long the boot waits for the servers' first connects (in parallel) before it goes on without them. */
const BOOT_CONNECT_MS = 15_000;
/** The most tokens one sampling request may generate on the Task's model. */
const MAX_SAMPLING_TOKENS = 1024;

/** One server as `GET /admin/mcp-servers` and the doctor show it. */
export interface McpServerStatus {
  name: string;
  transport: 'stdio' | 'http';
  state: 'connecting' | 'connected' | 'down' | 'stopped' | 'per_caller';
  required: boolean;
  lastError: string | null;
  connectedAt: string | null;
  protocol: string | null;
  tools: string[];
  allowGroups: string[];
}

/**
 * The configured MCP servers (`agent.mcp_servers`) as the agent's tool sources: connects them at boot
 * (an optional server that is down is retried in the background and does not stop the service), stops
 * them on shutdown, and gives a run the sources for its caller. Past CATALOG_THRESHOLD tools the run gets
 * one catalog (`find_tools`, `call_tool`) instead of every schema.
 */
@Injectable()
export class McpToolSources extends RunToolSources implements OnModuleInit, OnApplicationShutdown {
  private readonly pools: ConnectionPool[];
  private readonly sources: McpServerSource[];

  constructor(
    private readonly config: AppConfig,
    audit: McpCallAudit,
    private readonly ollama: OllamaGateway,
    telemetry: Telemetry,
  ) {
    super();
    const servers = Object.entries(config.agent.mcpServers);
    this.pools = servers.map(([name, server]) => new ConnectionPool(name, server, config.workspace, () => telemetry.traceContext()));
    this.sources = servers.map(
      ([name, server], index) =>
        new McpServerSource(
          name,
          server,
          this.pools[index],
          audit,
          { toolOutputChars: config.agent.toolOutputChars },
          server.sampling ? (request, model, signal) => this.sample(request, model ?? config.ollama.model, signal) : undefined,
        ),
    );
  }

  async onModuleInit(): Promise<void> {
    const connects = this.pools.flatMap((pool) => (pool.shared ? [pool.shared.connect()] : []));
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([Promise.all(connects), new Promise((resolve) => (timer = setTimeout(resolve, BOOT_CONNECT_MS)))]);
    clearTimeout(timer);
  }

  async onApplicationShutdown(): Promise<void> {
    await Promise.all(this.pools.map((pool) => pool.stop()));
  }

  /** The tool sources of a run for this caller: one per server it may use, or the catalog over them. */
  async forCaller(caller: ToolCaller): Promise<ToolSource[]> {
    const allowed = this.sources.filter((source) => source.allows(caller));
    const counts = await Promise.all(allowed.map(async (source) => (await source.tools(caller)).length));
    const total = counts.reduce((sum, count) => sum + count, 0);
    return total > CATALOG_THRESHOLD ? [new ToolCatalog(allowed)] : allowed;
  }

  /** Every configured server, for the skills they serve (each filters by its own `allow_groups`). */
  get servers(): readonly McpServerSource[] {
    return this.sources;
  }

  status(): McpServerStatus[] {
    return Object.entries(this.config.agent.mcpServers).map(([name, server], index) => {
      const pool = this.pools[index];
      // A server whose headers name the caller has one connection per caller: the latest connected one speaks for it.
      const connection = pool.shared ?? pool.all().findLast((candidate) => candidate.state === 'connected') ?? pool.all().at(-1);
      return {
        name,
        transport: server.url !== undefined ? 'http' : 'stdio',
        state: pool.shared ? pool.shared.state : 'per_caller',
        required: server.required,
        lastError: connection?.lastError ?? null,
        connectedAt: connection?.connectedAt ?? null,
        protocol: connection?.protocol ?? null,
        tools: connection?.tools.map((tool) => tool.name) ?? [],
        allowGroups: server.allowGroups,
      };
    });
  }

  /** Required servers that are not connected, with why: `/readyz` is not ready while there is one. */
  requiredDown(): string[] {
    return this.status()
      .filter((server) => server.required && server.state !== 'connected' && server.state !== 'per_caller')
      .map((server) => `${server.name}: ${server.lastError ?? server.state}`);
  }

  /** A server's sampling request, on the Task's model; text in, text out, bounded in length. */
  private async sample(
    request: CreateMessageRequest['params'],
    model: string,
    signal: AbortSignal,
  ): Promise<{ result: CreateMessageResult; inputTokens: number; outputTokens: number }> {
    const text = (content: unknown) =>
      [content]
        .flat()
        .map((block) => ((block as { type?: string; text?: string })?.type === 'text' ? (block as { text: string }).text : '[non-text content]'))
        .join('\n');
    const messages: ChatMessage[] = [
      ...(request.systemPrompt ? [{ role: 'system' as const, content: request.systemPrompt }] : []),
      ...request.messages.map((message) => ({ role: message.role, content: text(message.content) })),
    ];
    const reply = await this.ollama.chat({
      model,
      messages,
      temperature: request.temperature ?? this.config.ollama.temperature,
      numPredict: Math.min(request.maxTokens, MAX_SAMPLING_TOKENS),
      signal,
    });
    return {
      result: { model, role: 'assistant', content: { type: 'text', text: reply.content }, stopReason: reply.doneReason === 'length' ? 'maxTokens' : 'endTurn' },
      inputTokens: reply.promptEvalCount,
      outputTokens: reply.evalCount,
    };
  }
}
