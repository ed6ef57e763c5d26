/**
 * `npm run bench:agent-calls`: model calls and prompt tokens per Task for four Tasks (no tool, one
 * tool, a fix-the-test loop, a split request) against the scripted Ollama, so the figures are
 * deterministic. Tokens are the scripted server's count (4 characters a token, as `promptTokens` in
 * test/support/scripted-ollama.ts). "prefill" is what a KV cache could not reuse: each prompt less its
 * common prefix with the previous prompt and the reply generated for it, rendered the way qwen3's chat
 * template does with thinking on (an assistant turn's reasoning is kept only after the last user turn,
 * so a new user turn drops it from every earlier turn and changes the prefix there).
 *
 * The same file runs against an older build: `BENCH_PLANNING_CALL=1` scripts the split request for the
 * agent of main a291e1a, which asked for a plan in a separate structured-output call.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fieldsOf, modernClient, textOf, waitForTerminal } from '../test/support/mcp-clients.js';
import { ScriptedOllama, type RecordedChat, type ScriptedReply } from '../test/support/scripted-ollama.js';
import { ServiceProcess, writeConfig } from '../test/support/service-process.js';

const PLANNING_CALL = process.env.BENCH_PLANNING_CALL === '1';
/** Reasoning of a realistic size for a small model's step (about 150 tokens). */
const reasoning = (about: string) => `Let me think about ${about}. `.padEnd(600, 'The request, the files and the last result matter here. ');
const call = (name: string, args: Record<string, unknown>): ScriptedReply => ({
  toolCalls: [{ name, arguments: args }],
  promptEvalCount: 10,
  evalCount: 5,
  thinking: reasoning(name),
});
const say = (content: string): ScriptedReply => ({ content, promptEvalCount: 10, evalCount: 5, thinking: reasoning('the answer') });

const SUBTASKS = [
  { id: 'inspect', title: 'Inspect the code', instructions: 'Read math.js.', depends_on: [] },
  { id: 'fix', title: 'Fix it', instructions: 'Fix add().', depends_on: ['inspect'] },
  { id: 'check', title: 'Run the test', instructions: 'Run node test.mjs.', depends_on: ['fix'] },
];

/** The split request's script: the plan, then each subtask finished (by its `plan` done call, or in prose). */
function splitScript(ollama: ScriptedOllama, handOver: 'tool' | 'prose'): void {
  if (PLANNING_CALL) ollama.enqueuePlan({ content: JSON.stringify({ mode: 'plan', subtasks: SUBTASKS }), promptEvalCount: 10, evalCount: 30 });
  else ollama.enqueue(call('plan', { subtasks: SUBTASKS }));
  for (const subtask of SUBTASKS) ollama.enqueue(handOver === 'tool' && !PLANNING_CALL ? call('plan', { done: subtask.id }) : say(`${subtask.id} done`));
  ollama.enqueue(say('Inspected, fixed and checked: the test passes.'));
}

type Messages = RecordedChat['body']['messages'];

/** Messages as a chat template renders them: an assistant turn's thinking only after message `keepAfter` (the last user turn). */
function render(messages: Messages, tools: unknown, keepAfter: number): string {
  const parts = [JSON.stringify(tools ?? [])];
  messages.forEach((message, index) => {
    const thinking = message.role === 'assistant' && index > keepAfter && message.thinking ? `<think>${message.thinking}</think>` : '';
    parts.push(`<${message.role}>${thinking}${message.content}${message.tool_calls ? JSON.stringify(message.tool_calls) : ''}`);
  });
  return parts.join('\n');
}

const lastUser = (messages: Messages) => messages.findLastIndex((message) => message.role === 'user');

/**
 * Tokens each request makes the model evaluate anew: after a call, the cache holds that prompt and the
 * reply the model generated (its thinking included); the next prompt reuses their common prefix.
 */
function prefillTokens(chats: RecordedChat[]): number {
  let cache = '';
  let total = 0;
  chats.forEach((chat, index) => {
    const { messages, tools } = chat.body;
    const text = render(messages, tools, lastUser(messages));
    let common = 0;
    while (common < cache.length && common < text.length && cache[common] === text[common]) common++;
    total += Math.ceil((text.length - common) / 4);
    const next = chats[index + 1]?.body.messages;
    const reply = next?.[messages.length]?.role === 'assistant' ? [next[messages.length]] : [];
    cache = render([...messages, ...reply], tools, lastUser(messages));
  });
  return total;
}

async function main() {
  const ollama = await new ScriptedOllama().start();
  ollama.capabilities = ['completion', 'tools', 'thinking'];
  const config = await writeConfig(ollama.url, { workspace: { isolation: 'shared', command_timeout_ms: 20_000 }, ollama: { think: 'true' } });
  writeFileSync(join(config.workspace, 'math.js'), 'export const add = (a, b) => a - b;\n');
  writeFileSync(join(config.workspace, 'test.mjs'), "import { add } from './math.js';\nif (add(2, 3) !== 5) { console.error('FAIL'); process.exit(1); }\nconsole.log('PASS');\n");
  writeFileSync(join(config.workspace, 'package.json'), '{"type":"module"}\n');
  const service = await new ServiceProcess(config.file).start();
  const client = await modernClient(service.url);
  const status = async (taskId: string) => textOf(await client.callTool({ name: 'agent_status', arguments: { task_id: taskId } }));
  const tasks: [string, string, () => void][] = [
    ['no tool', 'What is 2 + 2?', () => ollama.enqueue(say('4'))],
    ['one tool', 'What does math.js export?', () => ollama.enqueue(call('read_file', { path: 'math.js' }), say('add(a, b).'))],
    [
      'fix-the-test loop',
      'The test fails; fix the cause.',
      () =>
        ollama.enqueue(
          call('run_command', { command: 'node test.mjs' }),
          call('read_file', { path: 'math.js' }),
          call('edit_file', { path: 'math.js', old_text: 'a - b', new_text: 'a + b' }),
          call('run_command', { command: 'node test.mjs' }),
          say('Fixed: add() subtracted.'),
        ),
    ],
    ['split request (3 subtasks)', 'Inspect math.js, fix add(), then run the test.', () => splitScript(ollama, 'tool')],
    ['split request, subtasks finished in prose', 'Inspect math.js, fix add(), then run the test again.', () => splitScript(ollama, 'prose')],
  ];
  const lines = ['| Task | model calls | prompt tokens sent | prefill with thinking on | result |', '|---|---|---|---|---|'];
  for (const [name, request, script] of tasks) {
    if (PLANNING_CALL && name.includes('in prose')) continue;
    writeFileSync(join(config.workspace, 'math.js'), 'export const add = (a, b) => a - b;\n');
    script();
    const before = ollama.chats.length;
    const taskId = fieldsOf(textOf(await client.callTool({ name: 'agent_run', arguments: { request } }))).task_id;
    const final = await waitForTerminal(status, taskId);
    const chats = ollama.chats.slice(before);
    const sent = chats.reduce((sum, chat) => sum + chat.promptTokens, 0);
    lines.push(`| ${name} | ${chats.length} | ${sent} | ${prefillTokens(chats)} | ${final.status} ${final.completed_tasks} |`);
  }
  await client.close();
  await service.stop();
  await ollama.stop();
  process.stdout.write(`${PLANNING_CALL ? 'agent with a planning call (main a291e1a)' : 'agent with the plan tool'}\n${lines.join('\n')}\n`);
}

await main();
