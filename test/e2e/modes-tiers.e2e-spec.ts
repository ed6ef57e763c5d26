import { beforeAll, describe, expect, it } from '@jest/globals';
import type { Task } from '@a2a-js/sdk';
import { ClientFactory, type Client as A2aClient } from '@a2a-js/sdk/client';
import type { Client } from '@modelcontextprotocol/client';
import OpenAI from 'openai';
import { a2aSend, a2aText } from '../support/a2a-clients.js';
import { probe, type DatabaseTarget } from '../support/database-probe.js';
import { useStack } from '../support/e2e-stack.js';
import { fieldsOf, modernClient, textOf, waitForTerminal } from '../support/mcp-clients.js';
import type { ServiceProcess } from '../support/service-process.js';
import { gate } from '../support/gate.js';

describe('modes (direct: one call, no tools) and tiers (ollama.models) on the Chat API, A2A and MCP', () => {
  const stack = useStack({
    config: { ollama: { models: { high_performance: 'big-model' } }, queue: { progress_poll_ms: 20 } },
    ollama: (ollama) => void (ollama.models = ['test-model:latest', 'big-model:latest']),
  });
  const { ollama } = stack;
  let service: ServiceProcess;
  let openai: OpenAI;
  let a2a: A2aClient;
  let mcp: Client;
  let db: DatabaseTarget;
  let base: string;

  const lastChat = () => ollama.chats.at(-1)!.body;
  const tasksOf = () => probe<{ id: string; mode: string; tier: string }>(db, 'SELECT id, mode, tier FROM tasks ORDER BY seq DESC LIMIT 1');

  beforeAll(async () => {
    ({ service, base, database: db } = stack);
    openai = new OpenAI({ baseURL: `${base}/v1`, apiKey: 'unused', maxRetries: 0 });
    a2a = await new ClientFactory().createFromUrl(base);
    mcp = stack.closeOnStop(await modernClient(service.url));
  });

  it("checks every tier's model at start, each line named by its tier", async () => {
    // The boot checks end with the last tier's context line.
    await service.waitForOutput(/context \(tier high_performance\)/);
    expect(service.stderr).toContain('model: test-model is pulled');
    expect(service.stderr).toContain('model (tier high_performance): big-model is pulled');
    expect(service.stderr).toMatch(/capabilities \(tier high_performance\): tools yes/);
  });

  it('lists the agent, its direct mode and each tier as Chat models', async () => {
    const ids = [];
    for await (const model of openai.models.list()) ids.push(model.id);
    expect(ids).toEqual(['ollama-agent', 'ollama-agent-direct', 'ollama-agent-high_performance']);
  });

  it('answers ollama-agent-direct and agent_mode: false in one model call without tools, as a queued Task of the same session', async () => {
    ollama.enqueue({ content: 'A mutex lets one thread in at a time.' });
    const direct = await openai.chat.completions.create({ model: 'ollama-agent-direct', messages: [{ role: 'user', content: 'What is a mutex?' }] });
    expect(direct.choices[0].message.content).toBe('A mutex lets one thread in at a time.');
    expect(direct.model).toBe('ollama-agent-direct');
    expect(lastChat().tools).toBeUndefined();
    expect(lastChat().messages[0].content).toMatch(/^You are a helpful assistant\. Answer the user's request directly/);
    expect(lastChat().model).toBe('test-model');
    // ollama.num_predict 0: num_ctx / 8, the same on every request.
    expect(lastChat().options).toMatchObject({ num_ctx: 32768, num_predict: 4096 });
    expect((await tasksOf())[0]).toMatchObject({ mode: 'direct', tier: 'default' });

    ollama.enqueue({ content: 'Yes, a lock.' });
    const before = ollama.chats.length;
    const sessionId = (direct as unknown as { session_id: string }).session_id;
    const again = await openai.chat.completions.create({
      model: 'ollama-agent',
      messages: [{ role: 'user', content: 'So it is a lock?' }],
      agent_mode: false,
      session_id: sessionId,
    } as never);
    expect(again.choices[0].message.content).toBe('Yes, a lock.');
    expect(ollama.chats.length).toBe(before + 1);
    expect(
      lastChat()
        .messages.map((message) => message.content)
        .slice(1),
    ).toEqual(['What is a mutex?', 'A mutex lets one thread in at a time.', 'So it is a lock?']);
  });

  it('runs a tier on its own model, by model id or agent_level, with the tier in current_task', async () => {
    // The model answers once the stream has shown the running step: a timed delay could end the Task before the
    // stream first read it, and an ended Task has no current step to show.
    const shown = gate();
    ollama.enqueue({ content: 'big answer', heldUntil: shown.opened });
    const subtasks: string[] = [];
    try {
      const stream = await openai.chat.completions.create({ model: 'ollama-agent-high_performance', messages: [{ role: 'user', content: 'Think hard.' }], stream: true });
      for await (const chunk of stream) {
        const steps = (chunk.choices[0]?.delta as { agent_steps?: { type: string; name: string }[] } | undefined)?.agent_steps ?? [];
        subtasks.push(...steps.filter((step) => step.type === 'subtask').map((step) => step.name));
        if (subtasks.includes('ollama chat [high_performance]')) shown.open();
      }
    } finally {
      shown.open();
    }
    expect(lastChat().model).toBe('big-model');
    expect(lastChat().tools?.map((tool) => tool.function.name)).toContain('plan');
    expect(subtasks).toContain('ollama chat [high_performance]');
    ollama.enqueue({ content: 'by level' });
    await openai.chat.completions.create({ model: 'ollama-agent', messages: [{ role: 'user', content: 'Level?' }], agent_level: 'high_performance' } as never);
    expect(lastChat().model).toBe('big-model');
    expect((await tasksOf())[0]).toMatchObject({ mode: 'agent', tier: 'high_performance' });
  });

  it('refuses an unknown model id, an unknown tier and contradicting fields with 400, storing nothing', async () => {
    const [{ n }] = await probe<{ n: number }>(db, 'SELECT COUNT(*) AS n FROM tasks');
    const refused = async (body: Record<string, unknown>) => {
      const res = await fetch(`${base}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ messages: [{ role: 'user', content: 'hi' }], ...body }),
      });
      return { status: res.status, error: ((await res.json()) as { error: { message: string; param: string } }).error };
    };
    expect(await refused({ model: 'ollama-agent-huge' })).toMatchObject({
      status: 400,
      error: { param: 'model', message: expect.stringContaining('"ollama-agent-high_performance"') },
    });
    expect(await refused({ model: 'ollama-agent', agent_level: 'huge' })).toMatchObject({
      status: 400,
      error: { param: 'agent_level', message: 'agent_level: unknown tier "huge"; the tiers are default, high_performance.' },
    });
    expect(await refused({ model: 'ollama-agent-direct', agent_mode: true })).toMatchObject({ status: 400, error: { param: 'agent_mode' } });
    expect(await refused({ model: 'ollama-agent', agent_mode: 'no' })).toMatchObject({ status: 400, error: { param: 'agent_mode', message: 'agent_mode: must be a boolean.' } });
    expect((await probe<{ n: number }>(db, 'SELECT COUNT(*) AS n FROM tasks'))[0].n).toBe(n);
  });

  it('offers the direct_llm skill on A2A, chosen by message metadata, and agentLevel picks the tier', async () => {
    const card = await (await fetch(`${base}/.well-known/agent-card.json`, { headers: { 'A2A-Version': '1.0' } })).json();
    expect(card.skills.map((skill: { id: string }) => skill.id)).toEqual(['execute_task', 'direct_llm']);
    ollama.enqueue({ content: 'direct over A2A' });
    const message = a2aSend([a2aText('Say hi.')]);
    const direct = (await a2a.sendMessage({ ...message, message: { ...message.message, metadata: { skill: 'direct_llm', agentLevel: 'high_performance' } } })) as Task;
    expect(direct.artifacts.find((artifact) => artifact.name === 'answer')?.parts[0]?.content).toEqual({ $case: 'text', value: 'direct over A2A' });
    expect(lastChat().tools).toBeUndefined();
    expect(lastChat().model).toBe('big-model');
    expect((await tasksOf())[0]).toMatchObject({ mode: 'direct', tier: 'high_performance' });
    await expect(a2a.sendMessage({ ...message, message: { ...message.message, messageId: 'm-2', metadata: { agentLevel: 'huge' } } })).rejects.toThrow(
      /agentLevel: must be one of default, high_performance/,
    );
  });

  it('runs MCP agent_run on the default tier and model, its schema unchanged', async () => {
    ollama.enqueue({ content: 'mcp answer' });
    const taskId = fieldsOf(textOf(await mcp.callTool({ name: 'agent_run', arguments: { request: 'Hi.' } }))).task_id;
    await waitForTerminal(async (id) => textOf(await mcp.callTool({ name: 'agent_status', arguments: { task_id: id } })), taskId);
    expect(lastChat().model).toBe('test-model');
    expect((await tasksOf())[0]).toMatchObject({ id: taskId, mode: 'agent', tier: 'default' });
    const tools = await mcp.listTools();
    expect(Object.keys(tools.tools.find((tool) => tool.name === 'agent_run')!.inputSchema.properties ?? {})).not.toContain('agent_level');
  });
});
