import { describe, expect, it } from '@jest/globals';
import { statusText } from '../support/agent-tasks.js';
import { useStack, type E2eStack } from '../support/e2e-stack.js';
import { fieldsOf, textOf, waitForTerminal } from '../support/mcp-clients.js';
import { freePort } from '../support/service-process.js';

/** A loopback port nothing listens on (it was free a moment ago): connections to it are refused. */
const CLOSED_PORT = await freePort();

describe('Ollama failures end the Task with a clear reason, and the worker goes on', () => {
  const stack = useStack({ config: { ollama: { request_timeout_ms: 600 } } });
  const unreachable = useStack({ config: { ollama: { host: `http://127.0.0.1:${CLOSED_PORT}`, request_timeout_ms: 600 } } });
  const { ollama } = stack;

  async function clientOf(of: E2eStack) {
    const client = await of.mcpClient();
    const submit = async (request: string) => fieldsOf(textOf(await client.callTool({ name: 'agent_run', arguments: { request } }))).task_id;
    const finish = (taskId: string) => waitForTerminal((id) => statusText(client, id), taskId);
    return { submit, finish };
  }

  it('times out a silent Ollama, fails an unknown model, then completes the next Task', async () => {
    const { submit, finish } = await clientOf(stack);
    ollama.enqueue({ hang: true });
    const silent = await submit('silent');
    const timedOut = await finish(silent);
    expect(timedOut).toMatchObject({ status: 'failed' });
    expect(timedOut.result).toMatch(/Ollama did not answer within 600 ms/);

    ollama.models = [];
    const unknownModel = await finish(await submit('unknown model'));
    expect(unknownModel.status).toBe('failed');
    expect(unknownModel.result).toMatch(/Ollama model "test-model" was not found/);

    ollama.models = ['test-model:latest'];
    ollama.enqueue({ content: 'back to normal' });
    expect(await finish(await submit('fine'))).toMatchObject({ status: 'completed', result: 'back to normal' });
  });

  it('fails a Task on a persistent 503 (overloaded queue) and on a garbage answer, each with a clear reason', async () => {
    const { submit, finish } = await clientOf(stack);
    const busy = { status: 503, error: 'server busy, please try again. maximum pending requests exceeded' };
    ollama.enqueue(busy, busy, busy);
    const overloaded = await finish(await submit('overloaded'));
    expect(overloaded.status).toBe('failed');
    expect(overloaded.result).toMatch(/Ollama returned HTTP 503: server busy/);
    ollama.enqueue({ garbage: true });
    const garbled = await finish(await submit('garbled'));
    expect(garbled.status).toBe('failed');
    expect(garbled.result).toMatch(/Unexpected response from Ollama/);
    ollama.enqueue({ content: 'fine again' });
    expect(await finish(await submit('recovered'))).toMatchObject({ status: 'completed', result: 'fine again' });
  });

  it('fails every Task against an unreachable Ollama without stalling the queue', async () => {
    const { submit, finish } = await clientOf(unreachable);
    const ids = [await submit('one'), await submit('two')];
    for (const id of ids) {
      const final = await finish(id);
      expect(final.status).toBe('failed');
      expect(final.result).toMatch(/Ollama is not reachable at http:\/\/127\.0\.0\.1:\d+: ECONNREFUSED/);
    }
  });
});
