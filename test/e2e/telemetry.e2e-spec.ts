import { afterAll, describe, expect, it } from '@jest/globals';
import { ClientFactory, ClientFactoryOptions, DefaultAgentCardResolver, JsonRpcTransportFactory } from '@a2a-js/sdk/client';
import OpenAI from 'openai';
import { openBrowser } from '../support/browser.js';
import { randomBytes } from 'node:crypto';
import { a2aSend, a2aText } from '../support/a2a-clients.js';
import { useStack } from '../support/e2e-stack.js';
import { fieldsOf, textOf, waitForTerminal } from '../support/mcp-clients.js';
import { OtlpReceiver, type ReceivedSpan } from '../support/otlp-receiver.js';
import { TracedMcpServer } from '../support/traced-mcp-server.js';

/**
 * Issue 39: one trace per Task, exported over OTLP/HTTP (protobuf) to a receiver in the test, continuing the
 * caller's `traceparent` on MCP (`_meta`), the Chat API and A2A (the header); the downstream MCP server the
 * agent calls (a real SDK server) gets the context and its span joins; nothing of the request's text is
 * exported by default; the GenAI metrics have bounded labels.
 */

const ADMIN_TOKEN = 'telemetry-admin-token-0123456789';
/** Text that must never leave the service in a span (capture_content is off). */
const SECRET = `request-text-${randomBytes(6).toString('hex')}`;
const ANSWER = `answer-text-${randomBytes(6).toString('hex')}`;

const callerContext = () => {
  const traceId = randomBytes(16).toString('hex');
  const spanId = randomBytes(8).toString('hex');
  return { traceId, spanId, traceparent: `00-${traceId}-${spanId}-01` };
};

const turn = (content: string) => ({ content, promptEvalCount: 10, evalCount: 5 });
const callsTraced = { toolCalls: [{ name: 'down__traced', arguments: {} }], promptEvalCount: 10, evalCount: 5 };

describe('traces over OTLP/HTTP', () => {
  const receiver = new OtlpReceiver();
  let downstream: TracedMcpServer | null = null;
  const stack = useStack({
    config: async () => {
      if (!downstream) {
        await receiver.start();
        downstream = await new TracedMcpServer(receiver.url).start();
      }
      return {
        auth: { admin_token: ADMIN_TOKEN },
        telemetry: { otlp_endpoint: receiver.url },
        // Commands wait for a person, and the Task ends with the question at once: the next request answers it.
        agent: { approvals: { mode: 'commands', wait_ms: 0 }, mcp_servers: { down: { url: downstream.url, approval: 'never' } } },
      };
    },
  });
  afterAll(async () => {
    await downstream?.stop();
    await receiver.stop();
  });

  const admin = async (path: string) => (await fetch(`${stack.base}${path}`, { headers: { Authorization: `Bearer ${ADMIN_TOKEN}` } })).json();
  const children = (spans: ReceivedSpan[], parent: ReceivedSpan) => spans.filter((span) => span.parentSpanId === parent.spanId && span.service === 'ollama-agent-mcp');
  const taskSpan = (spans: ReceivedSpan[]) => spans.find((span) => span.name === 'invoke_agent ollama-agent-mcp')!;

  it('MCP: the Task is one trace under the _meta traceparent, with the accept, queue wait, model calls, tool call and checkpoints; the downstream server joins it', async () => {
    const caller = callerContext();
    const client = await stack.mcpClient();
    stack.ollama.enqueue(callsTraced, turn(ANSWER));
    const accepted = fieldsOf(
      textOf(await client.callTool({ name: 'agent_run', arguments: { request: SECRET }, _meta: { traceparent: caller.traceparent, tracestate: 'vendor=abc' } })),
    );
    await waitForTerminal(async (id) => textOf(await client.callTool({ name: 'agent_status', arguments: { task_id: id } })), accepted.task_id);

    const spans = await receiver.traceWith(caller.traceId, 'invoke_agent ollama-agent-mcp');
    const root = taskSpan(spans);
    expect(root.parentSpanId).toBe(caller.spanId);
    expect(root.attributes).toMatchObject({
      'gen_ai.operation.name': 'invoke_agent',
      'agent.task.id': accepted.task_id,
      'agent.task.surface': 'mcp-http',
      'agent.task.status': 'completed',
      'gen_ai.usage.input_tokens': 20,
      'gen_ai.usage.output_tokens': 10,
    });
    const under = children(spans, root);
    expect(under.map((span) => span.name).sort()).toEqual(
      ['accept', 'chat test-model', 'chat test-model', 'checkpoint after', 'checkpoint before', 'execute_tool down__traced', 'queue wait'].sort(),
    );
    const chat = under.find((span) => span.name === 'chat test-model')!;
    expect(chat.attributes).toMatchObject({
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': 'ollama',
      'gen_ai.request.model': 'test-model',
      'gen_ai.usage.input_tokens': 10,
      'gen_ai.usage.output_tokens': 5,
      'gen_ai.response.finish_reasons': ['stop'],
    });
    expect(typeof chat.attributes['gen_ai.response.time_to_first_chunk']).toBe('number');
    expect(under.find((span) => span.name === 'execute_tool down__traced')!.attributes).toMatchObject({
      'gen_ai.tool.name': 'down__traced',
      'agent.tool.source': 'mcp_tool',
      'agent.tool.outcome': 'ok',
    });
    // Children lie within the Task's span.
    for (const span of under) expect(span.startMs).toBeGreaterThanOrEqual(root.startMs - 1);

    // The downstream server got the Task's context in _meta and in the HTTP header, and its span joined the trace.
    expect(downstream!.calls).toHaveLength(1);
    expect(downstream!.calls[0]).toEqual({ metaTraceparent: `00-${caller.traceId}-${root.spanId}-01`, headerTraceparent: `00-${caller.traceId}-${root.spanId}-01` });
    const joined = (await receiver.traceWith(caller.traceId, 'downstream traced')).find((span) => span.name === 'downstream traced')!;
    expect(joined).toMatchObject({ service: 'downstream-mcp', parentSpanId: root.spanId });

    // Nothing of the request, the answer or the tool's output was exported (capture_content is off).
    const exported = Buffer.concat(receiver.bodies).toString('latin1');
    expect(exported).not.toContain(SECRET);
    expect(exported).not.toContain(ANSWER);
    expect(exported).not.toContain('traced ok');

    // The owner sees the trace id in the admin API and on the console's Task page (Chromium); agent_status's text stays as specified.
    expect((await admin(`/admin/tasks/${accepted.task_id}`)).trace_id).toBe(caller.traceId);
    const browser = stack.closeOnStop(await openBrowser());
    const page = await browser.newPage();
    page.setDefaultTimeout(10_000);
    await page.goto(`${stack.base}/admin#token=${ADMIN_TOKEN}`);
    await page.waitForSelector('#tasks');
    await page.goto(`${stack.base}/admin#/tasks/${accepted.task_id}`);
    await page.waitForSelector('#task-trace');
    expect(await page.textContent('#task-trace')).toBe(caller.traceId);
    expect(textOf(await client.callTool({ name: 'agent_status', arguments: { task_id: accepted.task_id } }))).not.toContain(caller.traceId);
  });

  it('MCP without a traceparent: the Task starts a trace of its own', async () => {
    const client = await stack.mcpClient();
    stack.ollama.enqueue(turn('done'));
    const accepted = fieldsOf(textOf(await client.callTool({ name: 'agent_run', arguments: { request: 'no caller trace' } })));
    await waitForTerminal(async (id) => textOf(await client.callTool({ name: 'agent_status', arguments: { task_id: id } })), accepted.task_id);
    const traceId = (await admin(`/admin/tasks/${accepted.task_id}`)).trace_id as string;
    expect(traceId).toMatch(/^[0-9a-f]{32}$/);
    const root = taskSpan(await receiver.traceWith(traceId, 'invoke_agent ollama-agent-mcp'));
    expect(root.parentSpanId).toBe('');
  });

  it('Chat API: the traceparent header parents the Task, and the completion names the trace (agent_trace_id)', async () => {
    const caller = callerContext();
    stack.ollama.enqueue(turn(ANSWER));
    const openai = new OpenAI({ baseURL: `${stack.base}/v1`, apiKey: 'unused', maxRetries: 0, defaultHeaders: { traceparent: caller.traceparent } });
    const completion = (await openai.chat.completions.create({ model: 'ollama-agent', messages: [{ role: 'user', content: SECRET }] })) as unknown as {
      agent_trace_id: string;
      task_id: string;
    };
    expect(completion.agent_trace_id).toBe(caller.traceId);
    const root = taskSpan(await receiver.traceWith(caller.traceId, 'invoke_agent ollama-agent-mcp'));
    expect(root.parentSpanId).toBe(caller.spanId);
    expect(root.attributes['agent.task.surface']).toBe('chat');
    expect(Buffer.concat(receiver.bodies).toString('latin1')).not.toContain(SECRET);
  });

  it('A2A: the traceparent header parents the Task, and the task metadata names the trace', async () => {
    const caller = callerContext();
    stack.ollama.enqueue(turn(ANSWER));
    const fetchImpl: typeof fetch = (input, init) => {
      const headers = new Headers(init?.headers);
      headers.set('traceparent', caller.traceparent);
      return fetch(input, { ...init, headers });
    };
    const client = await new ClientFactory(
      ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
        transports: [new JsonRpcTransportFactory({ fetchImpl })],
        cardResolver: new DefaultAgentCardResolver({ fetchImpl }),
      }),
    ).createFromUrl(stack.base);
    const task = (await client.sendMessage(a2aSend([a2aText(SECRET)]))) as { metadata?: Record<string, unknown> };
    expect(task.metadata?.agent_trace_id).toBe(caller.traceId);
    const root = taskSpan(await receiver.traceWith(caller.traceId, 'invoke_agent ollama-agent-mcp'));
    expect(root.parentSpanId).toBe(caller.spanId);
    expect(root.attributes['agent.task.surface']).toBe('a2a');
  });

  it('a malformed traceparent is ignored (a new trace), never an error', async () => {
    const client = await stack.mcpClient();
    stack.ollama.enqueue(turn('done'));
    const bad = `00-${'0'.repeat(32)}-${'1'.repeat(16)}-01`;
    const accepted = fieldsOf(textOf(await client.callTool({ name: 'agent_run', arguments: { request: 'bad trace' }, _meta: { traceparent: bad, tracestate: 'x'.repeat(5000) } })));
    expect(accepted.task_id).toMatch(/^[0-9a-f-]{36}$/);
    await waitForTerminal(async (id) => textOf(await client.callTool({ name: 'agent_status', arguments: { task_id: id } })), accepted.task_id);
    const traceId = (await admin(`/admin/tasks/${accepted.task_id}`)).trace_id as string;
    expect(traceId).not.toBe('0'.repeat(32));
    expect(taskSpan(await receiver.traceWith(traceId, 'invoke_agent ollama-agent-mcp')).parentSpanId).toBe('');
  });

  it('a wait for a person is a span, and the Task that answers it links to the paused Task', async () => {
    const client = await stack.mcpClient();
    const status = async (id: string) => textOf(await client.callTool({ name: 'agent_status', arguments: { task_id: id } }));
    stack.ollama.enqueue({ toolCalls: [{ name: 'run_command', arguments: { command: 'echo hi' } }], promptEvalCount: 10, evalCount: 5 });
    const paused = fieldsOf(textOf(await client.callTool({ name: 'agent_run', arguments: { request: 'run it' } })));
    await waitForTerminal(status, paused.task_id);
    stack.ollama.enqueue(turn('not run'));
    const answer = fieldsOf(textOf(await client.callTool({ name: 'agent_run', arguments: { request: 'deny', session_id: paused.session_id } })));
    await waitForTerminal(status, answer.task_id);
    const [pausedTrace, answerTrace] = [(await admin(`/admin/tasks/${paused.task_id}`)).trace_id as string, (await admin(`/admin/tasks/${answer.task_id}`)).trace_id as string];
    const pausedSpans = await receiver.traceWith(pausedTrace, 'invoke_agent ollama-agent-mcp');
    const pausedRoot = taskSpan(pausedSpans);
    expect(children(pausedSpans, pausedRoot).map((span) => span.name)).toContain('wait approval');
    const answerRoot = taskSpan(await receiver.traceWith(answerTrace, 'invoke_agent ollama-agent-mcp'));
    expect(answerRoot.links).toEqual([{ traceId: pausedTrace, spanId: pausedRoot.spanId }]);
  });

  it('GenAI metrics on the Prometheus endpoint, with bounded labels only', async () => {
    const text = await (await fetch(`${stack.base}/admin/metrics`, { headers: { Authorization: `Bearer ${ADMIN_TOKEN}` } })).text();
    expect(text).toMatch(/^gen_ai_tokens_total\{model="test-model",tier="default",direction="input"\} [1-9]\d*$/m);
    expect(text).toMatch(/^gen_ai_tokens_total\{model="test-model",tier="default",direction="output"\} [1-9]\d*$/m);
    expect(text).toMatch(/^gen_ai_client_operation_duration_seconds_count\{model="test-model",tier="default",outcome="ok"\} [1-9]\d*$/m);
    expect(text).toMatch(/^gen_ai_server_time_to_first_token_seconds_count\{model="test-model",tier="default"\} [1-9]\d*$/m);
    expect(text).toMatch(/^agent_tool_call_duration_seconds_count\{source="mcp_tool"\} 1$/m);
    expect(text).toMatch(/^agent_task_queue_wait_seconds_count [1-9]\d*$/m);
    expect(text).toMatch(/^agent_tasks_ended_total\{surface="mcp-http",status="completed"\} [1-9]\d*$/m);
    expect(text).toMatch(/^agent_tasks_ended_total\{surface="chat",status="completed"\} 1$/m);
    // No user, Task id or request in any label.
    const labels = text.split('\n').filter((line) => !line.startsWith('#') && line.includes('{'));
    for (const line of labels) expect(line).not.toMatch(/[0-9a-f]{8}-[0-9a-f]{4}-|anonymous|request-text/);
  });
});
