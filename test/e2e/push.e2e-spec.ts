import { beforeAll, describe, expect, it } from '@jest/globals';
import { TaskState, type Part } from '@a2a-js/sdk';
import { ClientFactory, type Client as A2aClient } from '@a2a-js/sdk/client';
import type { Client } from '@modelcontextprotocol/client';
import pg from 'pg';
import { statusText } from '../support/agent-tasks.js';
import { a2aSend, a2aText } from '../support/a2a-clients.js';
import { probe, type DatabaseTarget } from '../support/database-probe.js';
import { E2E_DATABASE } from '../support/databases.js';
import { useStack } from '../support/e2e-stack.js';
import { pollUntil } from '../support/poll.js';
import type { ScriptedReply } from '../support/scripted-ollama.js';
import { Listen } from '../support/listen-client.js';
import { fieldsOf, textOf } from '../support/mcp-clients.js';
import type { ServiceProcess } from '../support/service-process.js';
import { gate } from '../support/gate.js';

const MODEL = 'ollama-agent';
type Chunk = { choices: { delta: { content?: string; agent_answer_offset?: number }; finish_reason: string | null }[]; status?: string };

/**
 * The chunks of a streamed Chat API answer, parsed, until [DONE]; `firstContentAt`: when (performance.now()) the
 * first content delta arrived. `onResponse` is called once the response has begun (the Task is queued by then).
 */
export async function streamChatTimed(base: string, content: string, onResponse: () => void = () => undefined): Promise<{ chunks: Chunk[]; firstContentAt: number | null }> {
  const res = await fetch(`${base}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ model: MODEL, stream: true, messages: [{ role: 'user', content }] }),
  });
  onResponse();
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let text = '';
  let firstContentAt: number | null = null;
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    text += decoder.decode(value, { stream: true });
    if (firstContentAt === null && /"content":"[^"]/.test(text)) firstContentAt = performance.now();
  }
  const chunks = text
    .split('\n\n')
    .filter((frame) => frame.startsWith('data: ') && frame !== 'data: [DONE]')
    .map((frame) => JSON.parse(frame.slice('data: '.length)) as Chunk);
  return { chunks, firstContentAt };
}

export const streamChat = async (base: string, content: string) => (await streamChatTimed(base, content)).chunks;

/** The content deltas before the finish chunk, and the text a client shows once it applied them all. */
export function contentOf(chunks: Chunk[]) {
  const finish = chunks.findIndex((chunk) => chunk.choices[0].finish_reason !== null);
  const deltas = chunks
    .slice(0, finish)
    .map((chunk) => chunk.choices[0].delta)
    .filter((delta) => delta.content);
  let shown = '';
  for (const delta of deltas) shown = (delta.agent_answer_offset !== undefined ? shown.slice(0, delta.agent_answer_offset) : shown) + delta.content;
  return { deltas, shown, finish: chunks[finish] };
}

const WORDS = ['The', ' answer', ' streams', ' as', ' the', ' model', ' writes', ' it', '.'];

describe('push, not poll: the answer streams as the model writes it (issue 23)', () => {
  // The fallback read is slow on purpose: what arrives in time arrives pushed. The stall bound is far above the
  // longest gap the scripts leave between two chunks (250 ms): with 400 ms, a loaded machine could turn one into a
  // stall, and its retry into the fallback answer.
  const stack = useStack({ config: { queue: { progress_poll_ms: 5000 }, ollama: { stall_timeout_ms: 2000 } } });
  const { ollama } = stack;
  let base: string;
  let mcp: Client;
  let a2a: A2aClient;

  beforeAll(async () => {
    base = stack.base;
    mcp = await stack.mcpClient();
    a2a = await new ClientFactory().createFromUrl(base);
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

  it('Chat: an answer cut at done_reason "length" and continued appends; the content is the result', async () => {
    ollama.enqueue({ chunks: ['The first', ' part,'], chunkDelayMs: 20, doneReason: 'length' }, { chunks: [' and', ' the rest.'], chunkDelayMs: 20 });
    const chunks = await streamChat(base, 'a long answer');
    const { shown, deltas } = contentOf(chunks);
    expect(deltas.every((delta) => delta.agent_answer_offset === undefined)).toBe(true);
    const taskId = (chunks[0] as unknown as { choices: { delta: { agent: { task_id: string } } }[] }).choices[0].delta.agent.task_id;
    const status = fieldsOf(textOf(await mcp.callTool({ name: 'agent_status', arguments: { task_id: taskId } })));
    expect(shown).toBe(status.result);
    expect(shown).toBe('The first part, and the rest.');
  });

  it('agent_status: result grows while running, with a message that it is being written', async () => {
    // The rest of the answer waits until a status showed the part written so far: 250 ms between chunks left a
    // window of half a second for a poll to see it, which a loaded machine could miss.
    const seenPartial = gate();
    ollama.enqueue({ chunks: ['Partial', ' answer', ' still', ' coming'], chunkDelayMs: 250, holdBeforeChunk: { index: 2, until: seenPartial.opened } });
    const taskId = fieldsOf(textOf(await mcp.callTool({ name: 'agent_run', arguments: { request: 'slow writer' } }))).task_id;
    const status = async () => fieldsOf(await statusText(mcp, taskId));
    const statusWhen = (done: (fields: Record<string, string>) => boolean, what: string) =>
      pollUntil(
        async () => {
          const fields = await status();
          return done(fields) ? fields : undefined;
        },
        what,
        { everyMs: 50 },
      );
    let seen = await statusWhen((fields) => (fields.result ?? '').startsWith('Partial answer'), 'a partial result').finally(seenPartial.open);
    expect(seen).toMatchObject({ status: 'running', message: 'タスクを実行しています。回答を書いています。' });
    expect(seen.result).toMatch(/^Partial answer/);
    seen = await statusWhen((fields) => fields.status === 'completed', 'the Task ending');
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

// Replicas share a PostgreSQL database; this suite runs in the PostgreSQL pass of `npm test`.
const describeOnPostgres = E2E_DATABASE === 'postgres' ? describe : describe.skip;

describeOnPostgres('push across replicas: LISTEN/NOTIFY on PostgreSQL (issue 23)', () => {
  // B is the stack's service; A a replica on the same database and workspace.
  const stack = useStack({ config: { queue: { poll_interval_ms: 50 } } });
  const { ollama } = stack;
  let a: ServiceProcess;
  let b: ServiceProcess;
  let bClient: Client;
  let database: DatabaseTarget;

  beforeAll(async () => {
    ({ service: b, database } = stack);
    // A claims only when a Task is queued through it (its sweep is an hour away), and reads a followed
    // Task's row only every 5 s without events: what A's client sees in time came pushed from B.
    a = await stack.startAnotherService({ AGENT__QUEUE__POLL_INTERVAL_MS: '3600000', AGENT__QUEUE__PROGRESS_POLL_MS: '5000' });
    bClient = await stack.mcpClient();
  }, 90_000);

  /**
   * Streams a Chat answer (`answer`: the model's replies) through A while B runs it: B is busy with another Task
   * until A has queued it (and so tried to claim it, in vain), then B claims it.
   */
  async function streamThroughAWhileBRuns(answer: ScriptedReply[], duringStream: () => Promise<void> = async () => undefined) {
    const queued = gate();
    ollama.enqueue({ content: 'first', heldUntil: queued.opened }, ...answer);
    const before = ollama.workChats.length;
    await bClient.callTool({ name: 'agent_run', arguments: { request: 'keep B busy' } });
    await ollama.waitForChats(before + 1);
    const streamed = streamChatTimed(`http://127.0.0.1:${a.port}`, 'streamed across replicas', queued.open);
    // A stream that fails before its response would leave B busy for good.
    streamed.catch(queued.open);
    await ollama.waitForChats(before + 2);
    const [row] = await probe<{ lease_owner: string; request: string }>(database, "SELECT lease_owner, request FROM tasks WHERE status = 'running'");
    expect(row.request).toBe('streamed across replicas');
    await duringStream();
    const { chunks, firstContentAt } = await streamed;
    return { chunks, runner: row.lease_owner, firstDeltaMs: firstContentAt! - ollama.firstContentAt.at(-1)! };
  }

  it('a Chat client on replica A sees content deltas of a Task replica B runs, as B’s model writes them', async () => {
    const { chunks, runner, firstDeltaMs } = await streamThroughAWhileBRuns([{ chunks: WORDS, chunkDelayMs: 60 }]);
    expect(runner).toContain(`/${b.pid}/`);
    // B's model wrote its first chunk; A's client had it well within a second (the goal), pushed, not polled.
    expect(firstDeltaMs).toBeLessThan(1000);
    const { deltas, shown, finish } = contentOf(chunks);
    expect(deltas.length).toBeGreaterThanOrEqual(3);
    expect(shown).toBe(WORDS.join(''));
    expect(finish.choices[0].finish_reason).toBe('stop');
  });

  it('an MCP client listening on replica A gets notifications/tasks for a Task replica B runs', async () => {
    // B's model answers once A's stream has pushed the Task's state: the end must come pushed from B (a timed delay
    // could end the Task before the stream opened, and A would only read the end).
    const followed = gate();
    ollama.enqueue({ content: 'run by B', heldUntil: followed.opened });
    const before = ollama.workChats.length;
    const { task_id: taskId } = fieldsOf(textOf(await bClient.callTool({ name: 'agent_run', arguments: { request: 'notify A' } })));
    const listen = new Listen();
    try {
      await listen.open(a.url, {}, { taskIds: [taskId] });
      await listen.until((messages) => messages.some((message) => message.method === 'notifications/tasks'));
    } finally {
      followed.open();
    }
    await listen.until((messages) => messages.some((message) => message.method === 'notifications/tasks' && message.params?.status === 'completed'));
    expect(ollama.workChats.length).toBe(before + 1);
    const updates = listen.of('notifications/tasks').map((message) => message.params!.status);
    expect(updates.at(-1)).toBe('completed');
    expect(listen.messages[0]).toMatchObject({ params: { notifications: { taskIds: [taskId] } } });
    await listen.close();
  });

  it('A2A SubscribeToTask on replica A follows a Task replica B runs, to its end, the answer in appended chunks', async () => {
    // The answer streams once the subscription on A has its first event: a timed delay could let the Task end
    // before A subscribed.
    const subscribed = gate();
    ollama.enqueue({ content: 'first', delayMs: 300 }, { chunks: WORDS, chunkDelayMs: 60, heldUntil: subscribed.opened });
    const before = ollama.workChats.length;
    await bClient.callTool({ name: 'agent_run', arguments: { request: 'keep B busy again' } });
    await ollama.waitForChats(before + 1);
    const { task_id: taskId } = fieldsOf(textOf(await bClient.callTool({ name: 'agent_run', arguments: { request: 'subscribe to me' } })));
    const cases: string[] = [];
    const texts: string[] = [];
    let finalState: unknown;
    try {
      const a2aOnA = await new ClientFactory().createFromUrl(`http://127.0.0.1:${a.port}`);
      for await (const event of a2aOnA.resubscribeTask({ tenant: '', id: taskId })) {
        subscribed.open();
        cases.push(event.payload!.$case);
        if (event.payload?.$case === 'artifactUpdate' && event.payload.value.artifact?.name === 'answer') {
          const part = event.payload.value.artifact.parts[0].content;
          texts.push(part?.$case === 'text' ? part.value : '');
        }
        if (event.payload?.$case === 'statusUpdate') finalState = event.payload.value.status?.state;
      }
    } finally {
      subscribed.open();
    }
    expect(cases[0]).toBe('task');
    expect(texts.join('')).toBe(WORDS.join(''));
    expect(texts.length).toBeGreaterThanOrEqual(3);
    expect(finalState).toBe(TaskState.TASK_STATE_COMPLETED);
  });

  it('a dropped LISTEN connection loses nothing: A reconnects and catches up from the stored draft', async () => {
    const words = Array.from({ length: 16 }, (_, n) => `${n === 0 ? '' : ' '}word${n}`);
    // The answer comes in two calls (the first cut at done_reason "length"), the second held until A's LISTEN is cut:
    // so it is cut mid-answer for sure (a timed stream could end before the cut).
    const cut = gate();
    const chats = ollama.workChats.length;
    const answer: ScriptedReply[] = [
      { chunks: words.slice(0, 8), chunkDelayMs: 60, doneReason: 'length' },
      { chunks: words.slice(8), chunkDelayMs: 60, heldUntil: cut.opened },
    ];
    const { chunks } = await streamThroughAWhileBRuns(answer, async () => {
      try {
        // B's model wrote the first half of the answer and was asked for the rest: cut A's LISTEN now.
        await ollama.waitForChats(chats + 3);
        const client = new pg.Client({ connectionString: (database as { url: string }).url });
        await client.connect();
        const { rowCount } = await client.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1', [`oam-events/${a.pid}`]);
        await client.end();
        expect(rowCount).toBe(1);
      } finally {
        cut.open();
      }
    });
    const { deltas, shown } = contentOf(chunks);
    expect(shown).toBe(words.join(''));
    expect(deltas.length).toBeGreaterThanOrEqual(3);
    expect(a.stderr).toMatch(/LISTEN connection lost/);
  });
});
