import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Part } from '@a2a-js/sdk';
import { ClientFactory, type Client as A2aClient } from '@a2a-js/sdk/client';
import type { Client } from '@modelcontextprotocol/client';
import { a2aSend, a2aText } from '../support/a2a-clients.js';
import { fieldsOf, modernClient, textOf } from '../support/mcp-clients.js';
import { ScriptedOllama } from '../support/scripted-ollama.js';
import { ServiceProcess, writeConfig } from '../support/service-process.js';

const MODEL = 'ollama-agent';
type Chunk = { choices: { delta: { content?: string; agent_answer_offset?: number }; finish_reason: string | null }[]; status?: string };

/** The chunks of a streamed Chat API answer, parsed, until [DONE]. */
export async function streamChat(base: string, content: string): Promise<Chunk[]> {
  const res = await fetch(`${base}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ model: MODEL, stream: true, messages: [{ role: 'user', content }] }),
  });
  const text = await res.text();
  return text
    .split('\n\n')
    .filter((frame) => frame.startsWith('data: ') && frame !== 'data: [DONE]')
    .map((frame) => JSON.parse(frame.slice('data: '.length)) as Chunk);
}

/** The content deltas before the finish chunk, and the text a client shows once it applied them all. */
export function contentOf(chunks: Chunk[]) {
  const finish = chunks.findIndex((chunk) => chunk.choices[0].finish_reason !== null);
  const deltas = chunks.slice(0, finish).map((chunk) => chunk.choices[0].delta).filter((delta) => delta.content);
  let shown = '';
  for (const delta of deltas) shown = (delta.agent_answer_offset !== undefined ? shown.slice(0, delta.agent_answer_offset) : shown) + delta.content;
  return { deltas, shown, finish: chunks[finish] };
}

const WORDS = ['The', ' answer', ' streams', ' as', ' the', ' model', ' writes', ' it', '.'];

describe('push, not poll: the answer streams as the model writes it (issue 23)', () => {
  const ollama = new ScriptedOllama();
  let service: ServiceProcess;
  let base: string;
  let mcp: Client;
  let a2a: A2aClient;

  beforeAll(async () => {
    await ollama.start();
    // The fallback read is slow on purpose: what arrives in time arrives pushed.
    const config = await writeConfig(ollama.url, { queue: { progress_poll_ms: 5000 }, ollama: { stall_timeout_ms: 400 } });
    service = await new ServiceProcess(config.file).start();
    base = `http://127.0.0.1:${service.port}`;
    mcp = await modernClient(service.url);
    a2a = await new ClientFactory().createFromUrl(base);
  });

  afterAll(async () => {
    await mcp?.close();
    await service?.stop();
    await ollama.stop();
  });

  it('Chat: content deltas as the chunks arrive, at least three before the finish chunk, together the result', async () => {
    ollama.enqueue({ chunks: WORDS, chunkDelayMs: 40, promptEvalCount: 10, evalCount: 9 });
    const { deltas, shown, finish } = contentOf(await streamChat(base, 'stream it'));
    expect(deltas.length).toBeGreaterThanOrEqual(3);
    expect(deltas.every((delta) => delta.agent_answer_offset === undefined)).toBe(true);
    expect(shown).toBe(WORDS.join(''));
    expect(finish.choices[0].finish_reason).toBe('stop');
  });

  it('Chat: thinking never reaches content, neither Ollama’s thinking field nor <think> in content', async () => {
    ollama.enqueue({ chunks: ['<think>', 'secret plan', '</think>', '\n\nVisible', ' answer'], chunkDelayMs: 20, thinking: 'more secret' });
    const { deltas, shown } = contentOf(await streamChat(base, 'think first'));
    expect(shown).toBe('Visible answer');
    expect(JSON.stringify(deltas)).not.toMatch(/secret|think/);
  });

  it('Chat: a stalled call retried shows the answer once (no duplicated or dropped text)', async () => {
    ollama.enqueue({ chunks: ['Once', ' upon', ' a time'], stall: true }, { chunks: ['Once', ' upon', ' a time.'], chunkDelayMs: 20 });
    const { shown, deltas } = contentOf(await streamChat(base, 'retry me'));
    expect(shown).toBe('Once upon a time.');
    expect(deltas.map((delta) => delta.content).join('')).toBe('Once upon a time.');
  });

  it('Chat: a call that turns to tools drops what it wrote; the restart is marked with agent_answer_offset', async () => {
    ollama.enqueue(
      { chunks: ['Let me', ' look', ' first'], chunkDelayMs: 30, toolCalls: [{ name: 'list_files', arguments: { path: '.' } }] },
      { chunks: ['Nothing', ' here', '.'], chunkDelayMs: 30 },
    );
    const { shown, deltas } = contentOf(await streamChat(base, 'look around'));
    expect(shown).toBe('Nothing here.');
    expect(deltas.some((delta) => delta.agent_answer_offset === 0)).toBe(true);
  });

  it('agent_status: result grows while running, with a message that it is being written', async () => {
    ollama.enqueue({ chunks: ['Partial', ' answer', ' still', ' coming'], chunkDelayMs: 250 });
    const taskId = fieldsOf(textOf(await mcp.callTool({ name: 'agent_run', arguments: { request: 'slow writer' } }))).task_id;
    let seen: Record<string, string> = {};
    for (let n = 0; n < 100 && !(seen.result ?? '').startsWith('Partial answer'); n++) {
      seen = fieldsOf(textOf(await mcp.callTool({ name: 'agent_status', arguments: { task_id: taskId } })));
      await new Promise((done) => setTimeout(done, 50));
    }
    expect(seen).toMatchObject({ status: 'running', message: 'タスクを実行しています。回答を書いています。' });
    expect(seen.result).toMatch(/^Partial answer/);
    for (let n = 0; n < 100 && seen.status !== 'completed'; n++) {
      seen = fieldsOf(textOf(await mcp.callTool({ name: 'agent_status', arguments: { task_id: taskId } })));
      await new Promise((done) => setTimeout(done, 50));
    }
    expect(seen).toMatchObject({ status: 'completed', message: 'タスクが完了しました。', result: 'Partial answer still coming' });
  });

  it('A2A: SendStreamingMessage appends the answer artifact chunk by chunk, lastChunk on the last', async () => {
    ollama.enqueue({ chunks: WORDS, chunkDelayMs: 40 });
    const updates: { append: boolean; lastChunk: boolean; text: string }[] = [];
    for await (const event of a2a.sendMessageStream(a2aSend([a2aText('stream over a2a')]))) {
      if (event.payload?.$case !== 'artifactUpdate') continue;
      const update = event.payload.value as { append: boolean; lastChunk: boolean; artifact: { name: string; parts: Part[] } };
      if (update.artifact.name !== 'answer') continue;
      const part = update.artifact.parts[0].content;
      updates.push({ append: update.append, lastChunk: update.lastChunk, text: part?.$case === 'text' ? part.value : '' });
    }
    expect(updates.length).toBeGreaterThanOrEqual(3);
    expect(updates[0].append).toBe(false);
    expect(updates.slice(1).every((update) => update.append)).toBe(true);
    expect(updates.map((update) => update.lastChunk)).toEqual([...updates.slice(1).map(() => false), true]);
    expect(updates.map((update) => update.text).join('')).toBe(WORDS.join(''));
  });
});
