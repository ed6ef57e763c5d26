import { describe, expect, it } from '@jest/globals';
import type { Tool as McpTool } from '@modelcontextprotocol/client';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ToolCallContext, ToolSource } from '../../src/agent/core/tool-source.js';
import { type ConfigError, validateConfig } from '../../src/config/agent-config.js';
import { loadConfig } from '../../src/config/config.loader.js';
import { serverEnvironment } from '../../src/mcp-client/connection-pool.js';
import { effectOf, MAX_DESCRIPTION_CHARS, modelToolName, ollamaTool, toolAllowed } from '../../src/mcp-client/offered-tools.js';
import { ToolCatalog } from '../../src/mcp-client/tool-catalog.js';
import { toModelResult } from '../../src/mcp-client/tool-results.js';
import { ManualClock } from '../support/manual-clock.js';

const mcpTool = (name: string, inputSchema: Record<string, unknown> = { type: 'object' }, extra: Partial<McpTool> = {}): McpTool => ({ name, inputSchema, ...extra }) as McpTool;

const problemsOf = (servers: unknown) => {
  try {
    validateConfig({ agent: { mcp_servers: servers } });
    return [];
  } catch (error) {
    return (error as ConfigError).problems;
  }
};

describe('agent.mcp_servers', () => {
  it('takes stdio and HTTP servers with their defaults, keeping env and header names as written', () => {
    const config = validateConfig({
      agent: {
        mcp_servers: {
          tracker: { command: 'node', args: ['s.js'], env: { api_key: 'k', NODE_ENV: 'x' } },
          wiki: { url: 'https://wiki.example/mcp', headers: { X_Team_Id: '{groups}' } },
        },
      },
    });
    expect(config.agent.mcpServers.tracker).toMatchObject({
      command: 'node',
      args: ['s.js'],
      env: { api_key: 'k', NODE_ENV: 'x' },
      timeoutMs: 60_000,
      approval: 'auto',
      allowGroups: [],
      tools: { allow: [], deny: [] },
    });
    expect(config.agent.mcpServers.wiki.headers).toEqual({ X_Team_Id: '{groups}' });
  });

  it("resolves a stdio server's relative cwd against the config file", () => {
    const dir = mkdtempSync(join(tmpdir(), 'oam-mcp-config-'));
    const file = join(dir, 'agent.yaml');
    writeFileSync(file, 'agent:\n  mcp_servers:\n    tracker: { command: node, cwd: ./servers/tracker }\n    plain: { command: node }\n');
    const config = loadConfig({ AGENT_CONFIG: file }, '/');
    expect(config.agent.mcpServers.tracker.cwd).toBe(join(dir, 'servers/tracker'));
    expect(config.agent.mcpServers.plain.cwd).toBe('');
  });

  it('names every bad key of a server', () => {
    expect(problemsOf({ Bad_Name: { command: 'x' } })).toEqual([
      'agent.mcp_servers.Bad_Name: server names must match ^[a-z0-9][a-z0-9-]{0,23}$ (they prefix tool names as <server>__<tool>)',
    ]);
    expect(problemsOf({ a: {} })).toEqual(['agent.mcp_servers.a.command: required: command (a stdio server) or url (a Streamable HTTP server)']);
    expect(problemsOf({ a: { command: 'x', url: 'http://h/mcp' } })).toEqual(['agent.mcp_servers.a.url: give command (stdio) or url (Streamable HTTP), not both']);
    expect(problemsOf({ a: { url: 'ftp://h' } })).toEqual(['agent.mcp_servers.a.url: must be an http:// or https:// URL']);
    expect(problemsOf({ a: { url: 'http://u:p@h/mcp' } })).toEqual(['agent.mcp_servers.a.url: must not hold credentials (user:password@): send them in headers']);
    expect(problemsOf({ a: { url: 'http://h/mcp', args: ['x'], sandbox: true } })).toEqual([
      'agent.mcp_servers.a.args: only for a stdio server (command)',
      'agent.mcp_servers.a.sandbox: only for a stdio server (command)',
    ]);
    expect(problemsOf({ a: { url: 'http://h/mcp', headers: { 'X-Who': '{token}' } } })).toEqual([
      'agent.mcp_servers.a.headers.X-Who: unknown placeholder {token} (the placeholders are {user}, {email}, {groups})',
    ]);
    expect(problemsOf({ a: { command: 'x', approval: 'sometimes', timeout_ms: 5, colour: 'red' } })).toEqual([
      'agent.mcp_servers.a.colour: unknown key',
      'agent.mcp_servers.a.timeout_ms: must be an integer between 100 and 3600000 (got 5)',
      'agent.mcp_servers.a.approval: must be one of auto, always, never',
    ]);
  });
});

describe("another server's tools as the model sees them", () => {
  it('names them <server>__<tool> within Ollama rules, collision-free', () => {
    expect(modelToolName('wiki', 'get-page', new Set())).toBe('wiki__get-page');
    expect(modelToolName('wiki', 'pages/get.v2', new Set())).toBe('wiki__pages_get_v2');
    const taken = new Set(['wiki__a_b']);
    const second = modelToolName('wiki', 'a.b', taken);
    expect(second).toMatch(/^wiki__a_b_[0-9a-f]{8}$/);
    const long = modelToolName('wiki', 'x'.repeat(100), new Set());
    expect(long).toHaveLength(64);
    expect(long).toMatch(/^[A-Za-z0-9_-]+$/);
  });

  it('filters by allow and deny globs on the tool name', () => {
    const filter = { allow: ['get-*', 'echo'], deny: ['get-secret*'] };
    expect(['echo', 'get-sum', 'get-secret-key', 'delete-all'].filter((name) => toolAllowed(name, filter))).toEqual(['echo', 'get-sum']);
    expect(toolAllowed('anything', { allow: [], deny: [] })).toBe(true);
  });

  it("reduces the schema to what Ollama's tool format takes and bounds the description", () => {
    const tool = ollamaTool(
      'x__t',
      mcpTool(
        't',
        {
          $schema: 'http://json-schema.org/draft-07/schema#',
          type: 'object',
          additionalProperties: false,
          properties: {
            n: { type: 'number', default: 3, minimum: 1, description: ' count ' },
            kind: { type: 'string', enum: ['a', 'b', { bad: 1 }] },
            maybe: { anyOf: [{ type: 'string' }, { type: 'null' }] },
            list: { type: 'array', items: { type: 'object', properties: { id: { type: 'integer' } }, required: ['id', 'gone'] } },
          },
          required: ['n', 'missing'],
        },
        { description: 'd'.repeat(1000) },
      ),
    );
    expect(tool.function.description).toHaveLength(MAX_DESCRIPTION_CHARS + 1);
    expect(tool.function.parameters).toEqual({
      type: 'object',
      properties: {
        n: { type: 'number', description: 'count' },
        kind: { type: 'string', enum: ['a', 'b'] },
        maybe: { type: ['string', 'null'] },
        list: { type: 'array', items: { type: 'object', properties: { id: { type: 'integer' } }, required: ['id'] } },
      },
      required: ['n'],
    });
  });

  it('bounds the properties of a schema: at most 50 per object, names of at most 64 characters (issue 37)', () => {
    const wide = Object.fromEntries(Array.from({ length: 10_000 }, (_, index) => [`p${index}`, { type: 'string' }]));
    const long = 'n'.repeat(100_000);
    const tool = ollamaTool(
      'x__t',
      mcpTool('t', { type: 'object', properties: { [long]: { type: 'string' }, ok: { type: 'object', properties: wide }, ...wide }, required: [long, 'ok', 'p0', 'p9999'] }),
    );
    const { properties, required } = tool.function.parameters as { properties: Record<string, { properties?: Record<string, unknown> }>; required: string[] };
    expect(Object.keys(properties)).toHaveLength(50);
    expect(Object.keys(properties).slice(0, 3)).toEqual(['ok', 'p0', 'p1']);
    expect(Object.keys(properties).some((name) => name.length > 64)).toBe(false);
    expect(Object.keys(properties.ok.properties!)).toHaveLength(50);
    expect(required).toEqual(['ok', 'p0']);
    expect(JSON.stringify(tool).length).toBeLessThan(20_000);
  });

  it('believes only readOnlyHint: true as a read', () => {
    expect(effectOf(mcpTool('a', {}, { annotations: { readOnlyHint: true } }))).toBe('read');
    expect(effectOf(mcpTool('a', {}, { annotations: { readOnlyHint: false, destructiveHint: false } }))).toBe('command');
    expect(effectOf(mcpTool('a'))).toBe('command');
  });
});

describe('results of another server', () => {
  it('keeps text, passes images as bytes, describes the rest, and bounds the whole', () => {
    const png = Buffer.from('fake png bytes');
    const result = toModelResult(
      {
        content: [
          { type: 'text', text: 'hello' },
          { type: 'image', data: png.toString('base64'), mimeType: 'image/png' },
          { type: 'resource_link', uri: 'file:///x', name: 'x' },
          { type: 'resource', resource: { uri: 'mem://a', text: 'inline' } },
          { type: 'audio', data: 'AAAA', mimeType: 'audio/wav' },
        ],
      },
      1000,
    );
    expect(result.output).toBe('hello\n[image image/png, 14 bytes]\n[resource link: file:///x (x)]\n[resource mem://a]\ninline\n[audio audio/wav, 3 bytes, not passed on]');
    expect(result.images).toEqual([png]);
    expect(result.isError).toBeUndefined();
    const long = toModelResult({ content: [{ type: 'text', text: 'y'.repeat(50_000) }] }, 1000);
    expect(long.output.length).toBeLessThanOrEqual(1000);
    expect(long.output).toContain('characters omitted');
  });

  it('shows isError as a tool error and structured content as JSON when there is no text', () => {
    expect(toModelResult({ content: [{ type: 'text', text: 'no such page' }], isError: true }, 1000)).toEqual({ output: 'Error: no such page', isError: true });
    expect(toModelResult({ content: [], structuredContent: { a: 1 } }, 1000).output).toBe('{"a":1}');
    expect(toModelResult({ content: [{ type: 'text', text: 'a is 1' }], structuredContent: { a: 1 } }, 1000).output).toBe('a is 1');
    expect(toModelResult({ content: [] }, 1000).output).toBe('(no output)');
  });
});

describe('what a stdio server gets and what an HTTP server is told', () => {
  it('gives a stdio server only its env and PATH, never the service environment', () => {
    const env = serverEnvironment({ API_KEY: 'k' });
    const given = Object.fromEntries(Object.entries(env).filter(([, value]) => value !== undefined));
    expect(given).toEqual({ PATH: '/usr/local/bin:/usr/bin:/bin', API_KEY: 'k' });
    // The SDK's inherited variables are present but undefined, which spawn leaves out.
    expect(Object.keys(env)).toEqual(expect.arrayContaining(['HOME', 'USER', 'SHELL']));
    expect(serverEnvironment({ PATH: '/opt/bin' }).PATH).toBe('/opt/bin');
  });
});

describe('the catalog past 20 tools', () => {
  const source = (names: string[]): ToolSource & { calls: string[] } => {
    const calls: string[] = [];
    return {
      id: 'mcp:s',
      calls,
      tools: async () =>
        names.map((name) => ({
          definition: ollamaTool(name, mcpTool(name, { type: 'object' }, { description: `does ${name.replace(/_/g, ' ')}` })),
          effect: 'read',
          stepKind: 'mcp_tool',
        })),
      execute: async (call) => {
        calls.push(call.function.name);
        return { output: `ran ${call.function.name} ${JSON.stringify(call.function.arguments)}` };
      },
    };
  };
  const context = {
    taskId: 't',
    subtask: '',
    caller: { user: 'u', email: null, groups: [] },
    events: { emit: async () => undefined },
    clock: new ManualClock(),
  } as unknown as ToolCallContext;

  it('finds tools by words, returns their schemas, and calls the one named through its source', async () => {
    const a = source(['s__create_issue', 's__list_issues', 's__read_page']);
    const catalog = new ToolCatalog([a]);
    expect((await catalog.tools(context.caller)).map((tool) => tool.definition.function.name)).toEqual(['find_tools', 'call_tool']);
    const found = await catalog.execute({ function: { name: 'find_tools', arguments: { query: 'create issue' } } }, context);
    expect(found.output.split('\n')[1]).toBe('- s__create_issue: does s create issue');
    expect(found.output).toContain('arguments schema: {"type":"object","properties":{},"required":[]}');
    expect(found.output).not.toContain('s__read_page');
    const ran = await catalog.execute({ function: { name: 'call_tool', arguments: { name: 's__list_issues', arguments: { state: 'open' } } } }, context);
    expect(ran.output).toBe('ran s__list_issues {"state":"open"}');
    expect((await catalog.execute({ function: { name: 'call_tool', arguments: { name: 'nope' } } }, context)).isError).toBe(true);
    expect((await catalog.execute({ function: { name: 'call_tool', arguments: { name: 's__read_page', arguments: [1] } } }, context)).isError).toBe(true);
    expect(a.calls).toEqual(['s__list_issues']);
    const resolved = await catalog.resolve({ function: { name: 'call_tool', arguments: { name: 's__read_page', arguments: { id: 7 } } } }, context.caller);
    expect(resolved?.offered.effect).toBe('read');
    expect(resolved?.call.function).toEqual({ name: 's__read_page', arguments: { id: 7 } });
    expect((await catalog.resolve({ function: { name: 'call_tool', arguments: { name: 'nope' } } }, context.caller))?.offered.effect).toBe('read');
  });
});
