import { describe, expect, it, beforeAll, afterAll } from '@jest/globals';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { probe } from '../support/database-probe.js';
import { fieldsOf } from '../support/mcp-clients.js';
import { pollUntil } from '../support/poll.js';
import { ADMIN_TOKEN, answer, calls, EVERYTHING, FILESYSTEM, HttpEverything, MEMORY, SERVICE_SECRET, stdio, toolNames, useMcpStack } from '../support/mcp-servers-stack.js';
import { as, PROXY_AUTH } from '../support/proxy-identity.js';
import { ScriptedOllama } from '../support/scripted-ollama.js';
import { ServiceProcess, writeConfig } from '../support/service-process.js';

/**
 * The agent with other MCP servers as its tools, what they do end to end: the reference servers from the
 * npm registry, as they are (server-everything 2026.8.31 over stdio and Streamable HTTP, server-memory and
 * server-filesystem over stdio), and this service as a 2026-07-28 server, behind a scripted model that calls
 * their tools. Policy (groups, approvals, the catalog, the sandbox) is in mcp-servers-policy, a server's forms in
 * mcp-servers-elicitation, failures in mcp-servers-failures.
 */

describe('stdio: server-everything, memory and filesystem as the agent tools', () => {
  const memoryFile = join(mkdtempSync(join(tmpdir(), 'oam-memory-')), 'memory.jsonl');
  const h = useMcpStack(
    () => ({
      agent: {
        mcp_servers: {
          // Allow lists keep the three servers under the catalog threshold (20 tools), so every schema is offered.
          everything: { ...stdio(EVERYTHING, ['stdio']), env: { GREETING: 'hello' }, tools: { allow: ['echo', 'get-*'], deny: ['get-resource-*', 'get-annotated-message'] } },
          memory: { ...stdio(MEMORY), env: { MEMORY_FILE_PATH: memoryFile }, tools: { allow: ['create_entities', 'read_graph'] } },
          files: { ...stdio(FILESYSTEM, [tmpdir()]), tools: { allow: ['write_file', 'list_allowed_directories'] } },
        },
      },
    }),
    // A vision model: an image a tool returns reaches it as an image.
    { ollama: (ollama) => void (ollama.capabilities = ['completion', 'tools', 'vision']) },
  );

  it('lists each server connected with its tools for admins', async () => {
    const { servers } = await h.admin('/admin/mcp-servers');
    const byName = Object.fromEntries(servers.map((server: any) => [server.name, server]));
    expect(byName.everything).toMatchObject({ transport: 'stdio', state: 'connected', last_error: null });
    expect(byName.everything.tools).toEqual(expect.arrayContaining(['echo', 'get-sum', 'get-tiny-image', 'trigger-long-running-operation', 'get-roots-list', 'get-env']));
    expect(byName.memory.tools).toEqual(expect.arrayContaining(['create_entities', 'read_graph']));
    expect(byName.files.tools).toEqual(expect.arrayContaining(['write_file', 'list_allowed_directories']));
    // No secret of the configuration is shown.
    expect(JSON.stringify(servers)).not.toContain('MEMORY_FILE_PATH');
  });

  it('runs a tool of each kind end to end: text, numbers, an image, structured content, the environment and the roots', async () => {
    h.ollama.enqueue(
      calls(
        ['everything__echo', { message: 'ping' }],
        ['everything__get-sum', { a: 2, b: 40 }],
        ['everything__get-tiny-image', {}],
        ['everything__get-structured-content', { location: 'Chicago' }],
        ['everything__get-env', {}],
        ['everything__get-roots-list', {}],
      ),
      { content: 'done', promptEvalCount: 10, evalCount: 5 },
    );
    const { taskId, sessionId, text } = await h.run('use the everything tools');
    expect(fieldsOf(text).status).toBe('completed');
    const first = h.ollama.workChats.at(-2)!;
    expect(toolNames(first)).toEqual([
      ...['list_dir', 'read_file', 'write_file', 'edit_file', 'glob', 'grep', 'run_command', 'plan', 'ask_user'],
      ...['everything__echo', 'everything__get-env', 'everything__get-structured-content', 'everything__get-sum', 'everything__get-tiny-image', 'everything__get-roots-list'],
      ...['memory__create_entities', 'memory__read_graph', 'files__write_file', 'files__list_allowed_directories'],
    ]);
    const echo = first.body.tools!.find((tool) => tool.function.name === 'everything__echo') as any;
    expect(echo.function.parameters).toEqual({ type: 'object', properties: { message: { type: 'string', description: 'Message to echo' } }, required: ['message'] });
    const results = Object.fromEntries(h.toolResults().map((result) => [result.name, result.content]));
    expect(results['everything__echo']).toBe('Echo: ping');
    expect(results['everything__get-sum']).toContain('The sum of 2 and 40 is 42.');
    expect(results['everything__get-tiny-image']).toMatch(/\[image image\/png, \d+ bytes\]/);
    const toolMessages = h.ollama.workChats.at(-1)!.body.messages.filter((message) => message.role === 'tool');
    const image = toolMessages.find((message) => message.tool_name === 'everything__get-tiny-image')!.images!;
    expect(image).toHaveLength(1);
    expect(Buffer.from(image[0], 'base64').subarray(1, 4).toString()).toBe('PNG');
    expect(toolMessages.filter((message) => message.images)).toHaveLength(1);
    expect(JSON.parse(results['everything__get-structured-content'].split('\n')[0])).toHaveProperty('temperature');
    const env = JSON.parse(results['everything__get-env']) as Record<string, string>;
    // Only what the configuration lists, and PATH: nothing of the service's own environment.
    expect(Object.keys(env).sort()).toEqual(['GREETING', 'PATH']);
    expect(results['everything__get-env']).not.toContain(SERVICE_SECRET);
    // The roots are the session's own workspace.
    const workspace = join(h.config.workspace, 'sessions', sessionId);
    expect(results['everything__get-roots-list']).toContain(pathToFileURL(workspace).href);

    const audit = await h.audit(taskId);
    expect(audit).toHaveLength(6);
    expect(JSON.parse(audit[0].detail)).toMatchObject({ server: 'everything', tool: 'echo', arguments: { message: 'ping' }, result: 'ok' });
    const steps = await h.steps(taskId);
    expect(steps.map((step) => step.name)).toEqual([
      'everything__echo',
      'everything__get-sum',
      'everything__get-tiny-image',
      'everything__get-structured-content',
      'everything__get-env',
      'everything__get-roots-list',
    ]);
    expect(steps.every((step) => step.outcome === 'ok')).toBe(true);
  });

  it('uses server-memory, and server-filesystem in the session workspace (its roots)', async () => {
    h.ollama.enqueue(
      calls(['memory__create_entities', { entities: [{ name: 'Ada', entityType: 'person', observations: ['wrote the first program'] }] }]),
      calls(['memory__read_graph', {}], ['files__list_allowed_directories', {}]),
      { content: 'next', promptEvalCount: 10, evalCount: 5 },
    );
    const first = await h.run('remember Ada');
    expect(fieldsOf(first.text).status).toBe('completed');
    const graph = h.toolResults().find((result) => result.name === 'memory__read_graph')!.content;
    expect(graph).toContain('wrote the first program');
    expect(readFileSync(memoryFile, 'utf8')).toContain('Ada');
    const workspace = join(h.config.workspace, 'sessions', first.sessionId);
    expect(h.toolResults().find((result) => result.name === 'files__list_allowed_directories')!.content).toContain(workspace);

    h.ollama.enqueue(calls(['files__write_file', { path: join(workspace, 'note.txt'), content: 'from the filesystem server' }]), {
      content: 'written',
      promptEvalCount: 10,
      evalCount: 5,
    });
    const second = await h.run('write a note', first.sessionId);
    expect(fieldsOf(second.text).status).toBe('completed');
    expect(readFileSync(join(workspace, 'note.txt'), 'utf8')).toBe('from the filesystem server');
    // Outside the session workspace (the server's own argument directory included) it refuses.
    h.ollama.enqueue(calls(['files__write_file', { path: join(tmpdir(), 'outside.txt'), content: 'x' }]), { content: 'refused', promptEvalCount: 10, evalCount: 5 });
    await h.run('write outside', first.sessionId);
    expect(h.toolResults()[0].content).toMatch(/^Error: .*(denied|outside)/i);
    expect(existsSync(join(tmpdir(), 'outside.txt'))).toBe(false);
  });

  it('stops its servers when it shuts down', async () => {
    const pids = h.serverPids('@modelcontextprotocol/server-');
    expect(pids).toHaveLength(3);
    await h.client.close();
    expect(await h.service.signal('SIGTERM')).toBe(0);
    const alive = (pid: number) => {
      try {
        process.kill(pid, 0);
        return true;
      } catch {
        return false;
      }
    };
    expect(pids.filter(alive)).toEqual([]);
  });
});

describe('Streamable HTTP: server-everything with caller headers, sampling on the Task model, elicitation declined', () => {
  const remote = new HttpEverything();
  beforeAll(() => remote.start());
  const h = useMcpStack(
    () => ({
      agent: {
        mcp_servers: {
          remote: {
            url: remote.url,
            headers: { 'X-Api-Key': 'configured-api-key-0123456789', 'X-Caller': 'user={user}' },
            sampling: true,
            tools: { allow: ['echo', 'trigger-sampling-request', 'trigger-elicitation-request', 'trigger-long-running-operation'] },
          },
        },
      },
    }),
    // The caller's own credentials, which must never reach the other server.
    { headers: { Authorization: 'Bearer caller-own-token-0123456789' } },
  );
  afterAll(() => remote.stop());

  it('calls a tool with the configured headers and the caller named, never the caller credentials', async () => {
    h.ollama.enqueue(calls(['remote__echo', { message: 'over http' }]), { content: 'ok', promptEvalCount: 10, evalCount: 5 });
    const { taskId, text } = await h.run('echo over http');
    expect(fieldsOf(text).status).toBe('completed');
    expect(h.toolResults()[0]).toEqual({ name: 'remote__echo', content: 'Echo: over http' });
    const owner = (await probe<{ owner: string }>(h.db, 'SELECT owner FROM tasks WHERE id = ?', taskId))[0].owner;
    expect(remote.seenHeaders.length).toBeGreaterThan(0);
    for (const headers of remote.seenHeaders) {
      expect(headers['x-api-key']).toBe('configured-api-key-0123456789');
      expect(headers['x-caller']).toBe(`user=${owner}`);
      expect(headers.authorization).toBeUndefined();
    }
    // One connection per caller (the headers name them): admins see the latest connected one.
    const { servers } = await h.admin('/admin/mcp-servers');
    expect(servers[0]).toMatchObject({ name: 'remote', transport: 'http', state: 'per_caller', tools: expect.arrayContaining(['echo']) });
    // Header values are secrets: not in the audit, the trace or the log.
    const audit = JSON.stringify(await probe(h.db, 'SELECT detail FROM audit_events'));
    expect(audit).not.toContain('configured-api-key-0123456789');
    expect(h.service.stderr).not.toContain('configured-api-key-0123456789');
  });

  it('answers a sampling request with the Task model and counts its tokens in the Task', async () => {
    h.ollama.enqueue(
      calls(['remote__trigger-sampling-request', { prompt: 'say hi', maxTokens: 50 }]),
      { content: 'hi from the task model', promptEvalCount: 100, evalCount: 50 },
      { content: 'sampled', promptEvalCount: 10, evalCount: 5 },
    );
    const { taskId, text } = await h.run('sample');
    expect(fieldsOf(text).status).toBe('completed');
    expect(h.toolResults()[0].content).toContain('hi from the task model');
    const sampling = h.ollama.workChats.at(-2)!;
    expect(sampling.body.messages.at(-1)!.content).toContain('say hi');
    expect(sampling.body.options).toMatchObject({ num_predict: 50 });
    expect(sampling.body.tools ?? []).toEqual([]);
    const [row] = await probe<{ input_tokens: number; output_tokens: number }>(h.db, 'SELECT input_tokens, output_tokens FROM tasks WHERE id = ?', taskId);
    expect(row).toEqual({ input_tokens: 120, output_tokens: 60 });
  });

  it('cancelling the Task sends notifications/cancelled for the call in flight', async () => {
    h.ollama.enqueue(calls(['remote__trigger-long-running-operation', { duration: 60, steps: 60 }]));
    const accepted = await h.submit('hang over http');
    const deadline = Date.now() + 10_000;
    while (!remote.seenBodies.some((body) => body.includes('trigger-long-running-operation'))) {
      if (Date.now() > deadline) throw new Error('the call never reached the server');
      await new Promise((done) => setTimeout(done, 50));
    }
    const response = await fetch(`${h.stack.base}/admin/tasks/${accepted.task_id}/cancel`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${ADMIN_TOKEN}` },
    });
    expect(response.status).toBe(200);
    expect(fieldsOf(await h.finished(accepted.task_id)).status).toBe('cancelled');
    const call = JSON.parse(remote.seenBodies.find((body) => body.includes('trigger-long-running-operation'))!) as { id: number };
    // The notification travels on a request of its own, which may reach the server after the Task shows cancelled:
    // wait for it (a fixed 200 ms could be too short on a loaded machine).
    const cancelled = await pollUntil(
      async () => remote.seenBodies.map((body) => JSON.parse(body)).find((message) => message.method === 'notifications/cancelled'),
      'notifications/cancelled reaching the server',
      { timeoutMs: 10_000, everyMs: 50 },
    );
    expect(cancelled).toMatchObject({ params: { requestId: call.id } });
  });

  it('declines an elicitation request: the person is not asked behind their back', async () => {
    h.ollama.enqueue(calls(['remote__trigger-elicitation-request', {}]), { content: 'declined', promptEvalCount: 10, evalCount: 5 });
    const { taskId } = await h.run('elicit');
    expect(h.toolResults()[0].content).toContain('declined');
    // This client did not declare the Tasks extension: nobody can answer while the Task runs.
    const [declined] = await h.audit(taskId, 'elicitation.declined');
    expect(JSON.parse(declined.detail)).toMatchObject({
      server: 'remote',
      mcp_tool: 'trigger-elicitation-request',
      in_place: false,
      reason: expect.stringContaining('nobody can answer in place'),
    });
  });
});

describe("{email}: the caller's email, as the identity gave it at submission, in a header", () => {
  const remote = new HttpEverything();
  beforeAll(() => remote.start());
  const h = useMcpStack(
    () => ({
      auth: { ...PROXY_AUTH, admin_token: ADMIN_TOKEN },
      agent: { mcp_servers: { remote: { url: remote.url, headers: { 'X-Caller': '{user} <{email}> {groups}' }, tools: { allow: ['echo'] } } } },
    }),
    { headers: { ...as('alice', 'dev, ops'), 'X-Forwarded-Email': 'alice@example.com' } },
  );
  afterAll(() => remote.stop());

  it('renders {email} from the proxy header the Task was submitted with', async () => {
    h.ollama.enqueue(calls(['remote__echo', { message: 'who am i' }]), answer('ok'));
    const { taskId } = await h.run('echo with my email');
    expect(h.toolResults()[0]).toEqual({ name: 'remote__echo', content: 'Echo: who am i' });
    expect(await probe(h.db, 'SELECT owner, owner_email FROM tasks WHERE id = ?', taskId)).toEqual([{ owner: 'alice', owner_email: 'alice@example.com' }]);
    expect(remote.seenHeaders.length).toBeGreaterThan(0);
    for (const headers of remote.seenHeaders) expect(headers['x-caller']).toBe('alice <alice@example.com> dev,ops');
  });
});

describe('a 2026-07-28 server: another instance of this service as the agent tools', () => {
  const peerOllama = new ScriptedOllama();
  let peer: ServiceProcess;
  beforeAll(async () => {
    await peerOllama.start();
    peer = await new ServiceProcess((await writeConfig(peerOllama.url)).file).start();
  }, 90_000);
  const h = useMcpStack(() => ({ agent: { mcp_servers: { peer: { url: peer.url } } } }));
  afterAll(async () => {
    await peer.stop();
    await peerOllama.stop();
  });

  it('connects in the modern era and calls its tools', async () => {
    const { servers } = await h.admin('/admin/mcp-servers');
    expect(servers[0]).toMatchObject({ name: 'peer', state: 'connected', protocol: '2026-07-28', tools: ['agent_run', 'agent_status'] });
    h.ollama.enqueue(calls(['peer__agent_run', { request: 'hello peer' }]), { content: 'delegated', promptEvalCount: 10, evalCount: 5 });
    await h.run('delegate');
    expect(h.toolResults()[0].content).toContain('task_id:');
    // The peer queued and ran the Task the agent gave it.
    await peerOllama.waitForChats(1);
  });
});
