import { describe, expect, it } from '@jest/globals';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { commandEnvironment } from '../../src/workspace/sandbox.js';
import { probe } from '../support/database-probe.js';
import { fieldsOf, modernClient, textOf, waitForTerminal } from '../support/mcp-clients.js';
import { ADMIN_TOKEN, calls, EVERYTHING, FILESYSTEM, MEMORY, stdio, toolNames, useMcpStack } from '../support/mcp-servers-stack.js';
import { as, PROXY_AUTH } from '../support/proxy-identity.js';

/**
 * What the configuration decides about other MCP servers' tools: who sees them (allow_groups), what waits
 * for approval, many tools behind find_tools, and a sandboxed server per session. A server's form put to the
 * person is mcp-servers-elicitation.e2e-spec.ts.
 */

describe('allow_groups: a group that is not allowed does not see the tools', () => {
  const h = useMcpStack(
    () => ({
      auth: { ...PROXY_AUTH, admin_token: ADMIN_TOKEN },
      agent: { mcp_servers: { ops: { ...stdio(EVERYTHING, ['stdio']), allow_groups: ['ops'], tools: { allow: ['echo'] } } } },
    }),
    { headers: as('alice@example.com', 'dev') },
  );

  it('offers the server only to callers in allow_groups, and refuses a call of a tool not offered', async () => {
    h.ollama.enqueue(calls(['ops__echo', { message: 'sneak' }]), { content: 'no', promptEvalCount: 10, evalCount: 5 });
    const alice = await h.run('echo as dev');
    expect(fieldsOf(alice.text).status).toBe('completed');
    expect(toolNames(h.ollama.workChats.at(-2)!)).not.toContain('ops__echo');
    expect(h.toolResults()[0].content).toMatch(/^Error: unknown tool "ops__echo"/);
    expect(await h.audit(alice.taskId)).toEqual([]);

    const bob = await modernClient(h.service.url, as('bob@example.com', 'dev, ops'));
    h.ollama.enqueue(calls(['ops__echo', { message: 'ops here' }]), { content: 'yes', promptEvalCount: 10, evalCount: 5 });
    const accepted = fieldsOf(textOf(await bob.callTool({ name: 'agent_run', arguments: { request: 'echo as ops' } })));
    await waitForTerminal(async (id) => textOf(await bob.callTool({ name: 'agent_status', arguments: { task_id: id } })), accepted.task_id);
    await bob.close();
    expect(toolNames(h.ollama.workChats.at(-2)!)).toContain('ops__echo');
    expect(h.toolResults()[0].content).toBe('Echo: ops here');
    const [audit] = await probe<{ actor: string; groups: string }>(h.db, "SELECT actor, groups FROM audit_events WHERE action = 'mcp_tool.call' AND task_id = ?", accepted.task_id);
    expect(audit.actor).toBe('bob@example.com');
    expect(JSON.parse(audit.groups)).toEqual(['dev', 'ops']);
  });
});

describe('approvals in changes mode: a tool that is not read-only waits for the person', () => {
  const h = useMcpStack(() => ({
    agent: {
      approvals: { mode: 'changes' },
      mcp_servers: {
        everything: { ...stdio(EVERYTHING, ['stdio']), tools: { allow: ['echo', 'toggle-simulated-logging'] } },
        trusted: { ...stdio(EVERYTHING, ['stdio']), approval: 'never', tools: { allow: ['toggle-subscriber-updates'] } },
        guarded: { ...stdio(EVERYTHING, ['stdio']), approval: 'always', tools: { allow: ['get-sum'] } },
      },
    },
  }));

  it('runs read-only and approval: never tools at once', async () => {
    h.ollama.enqueue(calls(['everything__echo', { message: 'read' }], ['trusted__toggle-subscriber-updates', {}]), { content: 'ran', promptEvalCount: 10, evalCount: 5 });
    const { text } = await h.run('no approval needed');
    expect(fieldsOf(text).status).toBe('completed');
    expect(h.toolResults().map((result) => result.content)).toEqual(['Echo: read', expect.stringMatching(/simulated resource updated notifications/)]);
  });

  it('asks for a non-read-only tool with the server, the tool and the exact arguments; approved, it runs', async () => {
    h.ollama.enqueue(calls(['everything__toggle-simulated-logging', {}]));
    const paused = await h.run('turn logging on');
    expect(paused.text).toContain('承認が必要です');
    expect(paused.text).toContain('MCP tool: everything__toggle-simulated-logging {}');
    expect(await h.audit(paused.taskId)).toEqual([]);

    h.ollama.enqueue({ content: 'logging toggled', promptEvalCount: 10, evalCount: 5 });
    const approved = await h.run('承認', paused.sessionId);
    expect(fieldsOf(approved.text).status).toBe('completed');
    expect(h.toolResults().at(-1)!.content).toMatch(/logging/i);
    const [audit] = await h.audit(approved.taskId);
    expect(JSON.parse(audit.detail)).toMatchObject({ server: 'everything', tool: 'toggle-simulated-logging', result: 'ok' });
  });

  it('denied, it does not run; approval: always asks even for a read-only tool', async () => {
    h.ollama.enqueue(calls(['guarded__get-sum', { a: 1, b: 2 }]));
    const paused = await h.run('add');
    expect(paused.text).toContain('MCP tool: guarded__get-sum {"a":1,"b":2}');
    h.ollama.enqueue({ content: 'not added', promptEvalCount: 10, evalCount: 5 });
    const denied = await h.run('拒否', paused.sessionId);
    expect(fieldsOf(denied.text).status).toBe('completed');
    expect(h.toolResults().at(-1)!.content).toMatch(/^Not run: the person refused/);
    expect(await h.audit(denied.taskId)).toEqual([]);
  });
});

describe('many tools: 60+ behind find_tools, the prompt prefix byte-stable', () => {
  const h = useMcpStack(() => ({
    agent: {
      approvals: { mode: 'changes' },
      mcp_servers: {
        alpha: stdio(EVERYTHING, ['stdio']),
        beta: stdio(EVERYTHING, ['stdio']),
        gamma: stdio(EVERYTHING, ['stdio']),
        delta: stdio(EVERYTHING, ['stdio']),
        memory: { ...stdio(MEMORY), env: { MEMORY_FILE_PATH: join(mkdtempSync(join(tmpdir(), 'oam-memory-')), 'memory.jsonl') } },
      },
    },
  }));

  it('offers find_tools and call_tool instead of every schema, the same bytes for every Task', async () => {
    const { servers } = await h.admin('/admin/mcp-servers');
    expect(servers.reduce((sum: number, server: any) => sum + server.tools.length, 0)).toBeGreaterThanOrEqual(60);

    h.ollama.enqueue(calls(['find_tools', { query: 'echo message' }]), calls(['call_tool', { name: 'beta__echo', arguments: { message: 'found' } }]), {
      content: 'done',
      promptEvalCount: 10,
      evalCount: 5,
    });
    const first = await h.run('find and echo');
    expect(fieldsOf(first.text).status).toBe('completed');
    const [found, echoed] = h.toolResults();
    expect(found.content).toContain('- alpha__echo: Echoes back the input string');
    expect(found.content).toContain('arguments schema: {"type":"object","properties":{"message":{"type":"string","description":"Message to echo"}},"required":["message"]}');
    expect(echoed).toEqual({ name: 'call_tool', content: 'Echo: found' });
    const [audit] = await h.audit(first.taskId);
    expect(JSON.parse(audit.detail)).toMatchObject({ server: 'beta', tool: 'echo', result: 'ok' });

    const chats = h.ollama.workChats.length;
    h.ollama.enqueue({ content: 'second', promptEvalCount: 10, evalCount: 5 });
    await h.run('another task');
    const [a, b] = [h.ollama.workChats[chats - 3], h.ollama.workChats[chats]];
    expect(toolNames(a)).toEqual(['list_dir', 'read_file', 'write_file', 'edit_file', 'glob', 'grep', 'run_command', 'plan', 'ask_user', 'find_tools', 'call_tool']);
    // The tool block and the system prompt are the same bytes: Ollama reuses the cached prefix.
    expect(JSON.stringify(b.body.tools)).toBe(JSON.stringify(a.body.tools));
    expect(b.body.messages[0]).toEqual(a.body.messages[0]);
  });

  it('approves a call_tool call as the tool it reaches, with its arguments', async () => {
    h.ollama.enqueue(calls(['call_tool', { name: 'gamma__toggle-simulated-logging', arguments: {} }]));
    const paused = await h.run('toggle through the catalog');
    expect(paused.text).toContain('MCP tool: gamma__toggle-simulated-logging {}');
    h.ollama.enqueue({ content: 'toggled', promptEvalCount: 10, evalCount: 5 });
    await h.run('承認', paused.sessionId);
    expect(h.toolResults().at(-1)).toEqual({ name: 'call_tool', content: expect.stringMatching(/logging/i) });
  });
});

describe('sandbox: true: one sandboxed process per session, bound to its workspace, stopped when the Task ends', () => {
  const repository = join(import.meta.dirname, '../..');
  const h = useMcpStack(() => ({
    agent: {
      mcp_servers: {
        // The servers' code is in the repository: their cwd, bound read-only into the sandbox.
        boxed: { command: '/usr/bin/node', args: [FILESYSTEM], cwd: repository, sandbox: true, tools: { allow: ['write_file', 'read_text_file', 'list_allowed_directories'] } },
        boxenv: { command: '/usr/bin/node', args: [EVERYTHING, 'stdio'], cwd: repository, sandbox: true, env: { LISTED: 'yes' }, tools: { allow: ['get-env'] } },
      },
    },
  }));

  it('works in the session workspace only, sees only the sandbox environment, and ends with the Task', async () => {
    const { servers } = await h.admin('/admin/mcp-servers');
    expect(servers.map((server: any) => [server.name, server.state, server.last_error])).toEqual([
      ['boxed', 'connected', null],
      ['boxenv', 'connected', null],
    ]);
    const before = h.serverPids('bwrap').length;
    h.ollama.enqueue(calls(['boxed__list_allowed_directories', {}], ['boxenv__get-env', {}]));
    h.ollama.enqueue({ content: 'listed', promptEvalCount: 10, evalCount: 5 });
    const first = await h.run('where can you write');
    const workspace = join(h.config.workspace, 'sessions', first.sessionId);
    const [allowed, env] = h.toolResults().map((result) => result.content);
    expect(allowed).toBe(`Allowed directories:\n${workspace}`);
    // The commands' environment (the shell adds PWD), plus what the server's env lists.
    expect(JSON.parse(env)).toEqual({ ...commandEnvironment(workspace), PWD: workspace, LISTED: 'yes' });
    // The session's processes are gone with its Task; the listing ones stay.
    expect(h.serverPids('bwrap').length).toBe(before);

    h.ollama.enqueue(calls(['boxed__write_file', { path: join(workspace, 'boxed.txt'), content: 'inside' }], ['boxed__read_text_file', { path: h.config.file }]), {
      content: 'wrote',
      promptEvalCount: 10,
      evalCount: 5,
    });
    await h.run('write', first.sessionId);
    expect(readFileSync(join(workspace, 'boxed.txt'), 'utf8')).toBe('inside');
    expect(h.toolResults()[1].content).toMatch(/^Error: /);
  });
});
