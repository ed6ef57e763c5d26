import { beforeAll, describe, expect, it } from '@jest/globals';
import type { Client as LegacyClient } from '@modelcontextprotocol/sdk/client/index.js';
import { AGENT_RUN_INPUT_SCHEMA } from '../../src/tools/tool-schemas.js';
import { fieldsOf, legacyClient, textOf, waitForTerminal } from '../support/mcp-clients.js';
import { useStack } from '../support/e2e-stack.js';
import type { ServiceProcess } from '../support/service-process.js';

describe('legacy 2025-11-25 client (v1 SDK) over stateless HTTP', () => {
  const stack = useStack();
  const ollama = stack.ollama;
  let service: ServiceProcess;
  let client: LegacyClient;

  beforeAll(async () => {
    service = stack.service;
    client = stack.closeOnStop(await legacyClient(service.url));
  });

  it('initializes on 2025-11-25 and lists the same tools and schemas', async () => {
    expect(client.getServerVersion()?.name).toBe('ollama-agent-mcp');
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).toEqual(['agent_run', 'agent_status']);
    expect(JSON.stringify(tools[0].inputSchema)).toBe(JSON.stringify(AGENT_RUN_INPUT_SCHEMA));
  });

  it('queues a Task and polls it to completion with agent_status', async () => {
    ollama.enqueue({ content: 'legacy answer', promptEvalCount: 3, evalCount: 4 });
    const accepted = fieldsOf(textOf(await client.callTool({ name: 'agent_run', arguments: { request: 'hello from 2025' } })));
    expect(accepted.status).toBe('queued');
    const final = await waitForTerminal(async (taskId) => textOf(await client.callTool({ name: 'agent_status', arguments: { task_id: taskId } })), accepted.task_id);
    expect(final).toMatchObject({ status: 'completed', result: 'legacy answer', token_usage: 'input=3 output=4 total=7' });
  });

  it("reads a Task's deliverables as resources, with the same not-found error as 2026-07-28", async () => {
    expect(client.getServerCapabilities()?.resources).toEqual({ listChanged: false, subscribe: false });
    ollama.enqueue({ toolCalls: [{ name: 'write_file', arguments: { path: 'notes.md', content: '# legacy\n' } }] }, { content: 'noted' });
    const accepted = fieldsOf(textOf(await client.callTool({ name: 'agent_run', arguments: { request: 'take a note' } })));
    await waitForTerminal(async (taskId) => textOf(await client.callTool({ name: 'agent_status', arguments: { task_id: taskId } })), accepted.task_id);
    const uri = `agent-session://${accepted.session_id}/files/notes.md`;
    const title = `notes.md (session ${accepted.session_id.slice(0, 8)})`;
    const description = `notes.md in the workspace of session ${accepted.session_id}`;
    expect((await client.listResources()).resources).toEqual([{ uri, name: 'notes.md', title, description, mimeType: 'text/markdown', size: 9 }]);
    expect((await client.readResource({ uri })).contents).toEqual([{ uri, mimeType: 'text/markdown', text: '# legacy\n' }]);
    const unknown = `agent-session://00000000-0000-4000-8000-000000000000/files/notes.md`;
    await expect(client.readResource({ uri: unknown })).rejects.toMatchObject({ code: -32602, data: { uri: unknown } });
  });

  it('gets the same Tool errors for bad input', async () => {
    const result = await client.callTool({ name: 'agent_run', arguments: { request: '   ' } });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/request: must not be empty/);
  });
});
