import type { Tool } from 'ollama';
import type { ChatToolCall } from '../ollama/ollama.gateway.js';
import type { OfferedTool, ToolCallContext, ToolCaller, ToolResult, ToolSource } from '../agent/core/tool-source.js';

/** Above this many MCP tools for one caller, the model gets `find_tools` instead of every schema. */
export const CATALOG_THRESHOLD = 20;
const MAX_MATCHES = 8;

/**
 * Module constants: with many servers the prompt's tool block holds these two, the same bytes for every
 * Task and every call whatever the servers offer, so Ollama's prefix cache holds across Tasks.
 */
export const FIND_TOOLS: Tool = {
  type: 'function',
  function: {
    name: 'find_tools',
    description: 'Search the tools of the connected MCP servers (issue trackers, wikis, databases...). Returns matching tools with their argument schemas; then use call_tool.',
    parameters: { type: 'object', properties: { query: { type: 'string', description: 'Words describing what you need, e.g. "create issue"' } }, required: ['query'] },
  },
};

export const CALL_TOOL: Tool = {
  type: 'function',
  function: {
    name: 'call_tool',
    description: 'Call a tool found with find_tools, by its exact name, with arguments matching its schema.',
    parameters: {
      type: 'object',
      properties: { name: { type: 'string', description: 'The tool name from find_tools' }, arguments: { type: 'object', description: 'The arguments, as an object' } },
      required: ['name'],
    },
  },
};

/**
 * Many MCP servers' tools behind two: `find_tools` searches them (names and descriptions) and returns
 * the chosen tools' schemas as its result, and `call_tool` runs one through the server that offers it.
 * A call through `call_tool` is approved and audited as the tool it reaches (see `offeredFor`).
 */
export class ToolCatalog implements ToolSource {
  readonly id = 'mcp';

  /** This run's listing, taken when the run lists its tools: a server's new tools are found from the next run on. */
  private listing: Promise<{ source: ToolSource; offered: OfferedTool }[]> | null = null;

  /** One catalog per run (see McpToolSources.forCaller). */
  constructor(private readonly sources: ToolSource[]) {}

  async tools(caller: ToolCaller): Promise<OfferedTool[]> {
    await this.all(caller);
    return [
      { definition: FIND_TOOLS, effect: 'read', stepKind: 'tool_call' },
      { definition: CALL_TOOL, effect: 'command', stepKind: 'mcp_tool' },
    ];
  }

  /**
   * The tool a `call_tool` call reaches and its arguments, for approvals. A name that is no tool of this
   * caller reaches nothing (it runs like a read: nobody is asked to approve a call that only fails).
   */
  async resolve(call: ChatToolCall, caller: ToolCaller): Promise<{ offered: OfferedTool; call: ChatToolCall } | undefined> {
    if (call.function.name !== 'call_tool') return undefined;
    const target = await this.find(textArgument(call.function.arguments.name), caller);
    if (!target) return { offered: { definition: CALL_TOOL, effect: 'read', stepKind: 'tool_call' }, call };
    return { offered: target.offered, call: this.targetCall(call, target.offered) };
  }

  async execute(call: ChatToolCall, context: ToolCallContext): Promise<ToolResult> {
    if (call.function.name === 'find_tools') {
      const output = await this.search(textArgument(call.function.arguments.query), context.caller);
      return { output, step: { kind: 'tool_call', outcome: 'ok', detail: { arguments: call.function.arguments } } };
    }
    const name = textArgument(call.function.arguments.name);
    const args = call.function.arguments.arguments;
    const target = await this.find(name, context.caller);
    if (!target) return { output: `Error: no tool named "${name}". Use find_tools to find the exact name.`, isError: true };
    if (args !== undefined && (typeof args !== 'object' || args === null || Array.isArray(args))) {
      return { output: 'Error: call_tool.arguments must be an object.', isError: true };
    }
    return target.source.execute(this.targetCall(call, target.offered), context);
  }

  private targetCall(call: ChatToolCall, target: OfferedTool): ChatToolCall {
    const args = call.function.arguments.arguments;
    return { ...call, function: { name: target.definition.function.name!, arguments: (args ?? {}) as Record<string, unknown> } };
  }

  private all(caller: ToolCaller): Promise<{ source: ToolSource; offered: OfferedTool }[]> {
    this.listing ??= Promise.all(this.sources.map(async (source) => (await source.tools(caller)).map((offered) => ({ source, offered })))).then((lists) => lists.flat());
    return this.listing;
  }

  /** What the model is told of the servers behind the catalog (one that never connected). */
  notices(caller: ToolCaller): string[] {
    return this.sources.flatMap((source) => source.notices?.(caller) ?? []);
  }

  private async find(name: string, caller: ToolCaller) {
    return (await this.all(caller)).find((entry) => entry.offered.definition.function.name === name);
  }

  /** The best matches by words in common with the name and description; an empty query lists the first ones. */
  private async search(query: string, caller: ToolCaller): Promise<string> {
    const words = query
      .toLowerCase()
      .split(/[^a-z0-9]+/)
      .filter((word) => word.length > 1);
    const scored = (await this.all(caller)).map(({ offered }, index) => {
      const { name, description } = offered.definition.function;
      const text = `${name} ${description ?? ''}`.toLowerCase();
      const score = words.reduce((sum, word) => sum + (name!.toLowerCase().includes(word) ? 3 : text.includes(word) ? 1 : 0), 0);
      return { offered, score, index };
    });
    const matches = scored
      .filter((entry) => entry.score > 0 || words.length === 0)
      .sort((a, b) => b.score - a.score || a.index - b.index)
      .slice(0, MAX_MATCHES);
    if (matches.length === 0) return `No tool matches "${query}". Try other words.`;
    const lines = matches.map(({ offered }) => {
      const { name, description, parameters } = offered.definition.function;
      return `- ${name}: ${description ?? ''}\n  arguments schema: ${JSON.stringify(parameters)}`;
    });
    return `${matches.length} tool(s); call one with call_tool {"name": ..., "arguments": {...}}:\n${lines.join('\n')}`;
  }
}

/** A string argument of the model's call; anything else (absent, a number, an object) is no name at all. */
const textArgument = (value: unknown): string => (typeof value === 'string' ? value : '');
