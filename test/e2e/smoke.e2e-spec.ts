import { describe, expect, it } from '@jest/globals';
import { resolve } from 'node:path';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { useStack } from '../support/e2e-stack.js';
import { CLIENT_INFO, fieldsOf, MODERN, modernClient, textOf, waitForTerminal } from '../support/mcp-clients.js';

const ROOT = resolve(import.meta.dirname, '../..');

/**
 * The smallest proof that the service works on a Node.js release: it starts, serves agent_run and agent_status over
 * HTTP and over stdio, and a Task runs to its answer. scripts/ci-node.sh runs this file (and the unit layer) on each
 * further supported Node.js major; npm test runs it on the machine's.
 */
describe('smoke: start, agent_run and agent_status over HTTP and stdio', () => {
  const stack = useStack();
  const { ollama } = stack;

  const runToEnd = async (client: Client, request: string) => {
    const accepted = fieldsOf(textOf(await client.callTool({ name: 'agent_run', arguments: { request } })));
    expect(accepted.status).toBe('queued');
    return waitForTerminal(async (taskId) => textOf(await client.callTool({ name: 'agent_status', arguments: { task_id: taskId } })), accepted.task_id);
  };

  it('runs a Task to its answer over Streamable HTTP', async () => {
    const client = stack.closeOnStop(await modernClient(stack.service.url));
    ollama.enqueue({ content: 'http answer', promptEvalCount: 5, evalCount: 6 });
    expect(await runToEnd(client, 'over http')).toMatchObject({ status: 'completed', result: 'http answer' });
  });

  // A process of its own to start: the deadline is for a hang, not a measure, on a loaded machine.
  it('runs a Task to its answer over stdio, on the same database', async () => {
    const client = new Client(CLIENT_INFO, { versionNegotiation: { mode: { pin: MODERN } } });
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: ['dist/stdio.js'],
        cwd: ROOT,
        env: { PATH: process.env.PATH ?? '', AGENT_CONFIG: stack.config.file },
        stderr: 'pipe',
      }),
    );
    try {
      ollama.enqueue({ content: 'stdio answer', promptEvalCount: 5, evalCount: 6 });
      expect(await runToEnd(client, 'over stdio')).toMatchObject({ status: 'completed', result: 'stdio answer' });
    } finally {
      await client.close();
    }
  }, 90_000);
});
