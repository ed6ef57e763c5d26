import { afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { probe } from '../support/database-probe.js';
import { E2eStack, useStack, type StackOptions } from '../support/e2e-stack.js';
import { fieldsOf, httpRawDispatch, modernClient, modernMeta, textOf, waitForTerminal } from '../support/mcp-clients.js';
import { pollUntil } from '../support/poll.js';
import type { ScriptedReply } from '../support/scripted-ollama.js';
import { gate } from '../support/gate.js';

interface Step {
  kind: string;
  name: string;
  outcome: string;
  detail: string;
}

const call = (name: string, args: Record<string, unknown>): ScriptedReply => ({ toolCalls: [{ name, arguments: args }], promptEvalCount: 10, evalCount: 5 });

/** A service on its own scripted Ollama as every case wants it, with `overrides` for some sections. */
function stackOptions(overrides: Record<string, Record<string, unknown>> = {}): StackOptions {
  // The cases put files into the workspace root themselves: one shared local project. The stall bound stays well
  // above a gap between two chunks on a loaded machine: with 500 ms, one (load 10) made a delayed answer of the live
  // progress case a stall, and its retry an extra model call in the trace.
  return { config: { ...overrides, ollama: { stall_timeout_ms: 1500, ...overrides.ollama }, workspace: { isolation: 'shared', ...overrides.workspace } } };
}

/** The helpers every case uses, on a started stack; their client closes with the stack. */
async function helpersOn(stack: E2eStack) {
  const client = stack.closeOnStop(await modernClient(stack.service.url));
  const raw = httpRawDispatch(stack.service.url);
  const status = async (taskId: string) => textOf(await client.callTool({ name: 'agent_status', arguments: { task_id: taskId } }));
  return {
    ollama: stack.ollama,
    config: stack.config,
    raw,
    status,
    submit: async (request: string, extra: Record<string, unknown> = {}) =>
      fieldsOf(textOf(await client.callTool({ name: 'agent_run', arguments: { request, ...extra } }))).task_id,
    finish: (taskId: string) => waitForTerminal(status, taskId),
    steps: (taskId: string) => probe<Step>(stack.database, 'SELECT * FROM task_steps WHERE task_id = ? ORDER BY seq', taskId),
  };
}

describe('local models as they really behave (scripted with the bytes real models and Ollama send)', () => {
  const stack = useStack(stackOptions());
  let env: Awaited<ReturnType<typeof helpersOn>>;

  beforeAll(async () => {
    env = await helpersOn(stack);
    writeFileSync(join(env.config.workspace, 'math.js'), 'export const add = (a, b) => a + b;\n');
  });

  afterEach(() => {
    env.ollama.capabilities = ['completion', 'tools'];
    env.ollama.version = '0.12.10';
    env.ollama.models = ['test-model:latest'];
  });

  describe('1. thinking models (qwen3, deepseek-r1, gpt-oss)', () => {
    it('auto sends think to a thinking model, keeps message.thinking in the loop, never in the result, and counts its tokens', async () => {
      env.ollama.capabilities = ['completion', 'tools', 'thinking'];
      env.ollama.enqueue(
        { thinking: 'The user wants a listing. I should call list_dir.', toolCalls: [{ name: 'list_dir', arguments: {} }], promptEvalCount: 40, evalCount: 25 },
        { thinking: 'math.js is there. Done.', content: 'The workspace has math.js.', promptEvalCount: 60, evalCount: 18 },
      );
      const before = env.ollama.chats.length;
      const final = await env.finish(await env.submit('What is in the workspace?'));
      expect(final).toMatchObject({ status: 'completed', result: 'The workspace has math.js.' });
      // eval_count (which includes the thinking tokens) is what token_usage counts.
      expect(final.token_usage).toBe('input=100 output=43 total=143');
      const chats = env.ollama.chats.slice(before);
      expect(chats.every((chat) => chat.body.think === true)).toBe(true);
      const assistant = env.ollama.workChats.at(-1)!.body.messages.find((message) => message.role === 'assistant')!;
      expect(assistant.thinking).toBe('The user wants a listing. I should call list_dir.');
      expect(JSON.stringify(await env.status(final.task_id))).not.toContain('Done.');
    });

    it('never sends think to a model without the capability, and strips <think> that leaked into the content', async () => {
      env.ollama.enqueue({ thinking: 'Two plus two. Easy.', content: '4', evalCount: 9 });
      const before = env.ollama.chats.length;
      const final = await env.finish(await env.submit('What is 2 + 2?'));
      expect(final).toMatchObject({ status: 'completed', result: '4' });
      // The scripted model leaked its reasoning as `<think>…</think>` text, the way pre-0.9 templates did.
      expect(env.ollama.chats.slice(before).every((chat) => !('think' in chat.body))).toBe(true);
    });
  });

  describe('2. models without the tools capability', () => {
    it('switches to the text tool protocol: tools described in the system prompt, calls parsed from the text, results as a user message', async () => {
      env.ollama.capabilities = ['completion'];
      env.ollama.enqueue(
        { content: 'Let me look.\n<tool_call>\n{"name": "read_file", "arguments": {"path": "math.js"}}\n</tool_call>' },
        { content: 'math.js exports add(a, b).' },
      );
      const before = env.ollama.chats.length;
      const taskId = await env.submit('What does math.js export?');
      const final = await env.finish(taskId);
      expect(final).toMatchObject({ status: 'completed', result: 'math.js exports add(a, b).' });
      const chats = env.ollama.chats.slice(before);
      expect(chats.every((chat) => chat.body.tools === undefined)).toBe(true);
      const last = env.ollama.workChats.at(-1)!.body.messages;
      expect(last[0].content).toContain('- read_file(path: string, start_line?: integer, end_line?: integer)');
      expect(last.at(-1)).toMatchObject({ role: 'user' });
      expect(last.at(-1)!.content).toMatch(/^<tool_response name="read_file">\n1\texport const add = \(a, b\) => a \+ b;\n[\s\S]*\n<\/tool_response>$/);
      expect((await env.steps(taskId)).some((step) => step.kind === 'tool_call' && step.name === 'read_file' && step.outcome === 'ok')).toBe(true);
    });

    it('switches mid-Task when Ollama answers 400 "does not support tools" although the capabilities said tools', async () => {
      env.ollama.enqueue({ status: 400, error: 'registry.ollama.ai/library/test-model:latest does not support tools' }, { content: 'answered without tools' });
      const before = env.ollama.workChats.length;
      const final = await env.finish(await env.submit('Hello'));
      expect(final).toMatchObject({ status: 'completed', result: 'answered without tools' });
      const [refused, retried] = env.ollama.workChats.slice(before);
      expect(refused.body.tools).toBeDefined();
      expect(retried.body.tools).toBeUndefined();
      expect(retried.body.messages[0].content).toContain('<tool_call>');
    });

    it('with agent.text_tools: false fails the Task at once, saying the model cannot use tools and naming models that can', async () => {
      const strictStack = new E2eStack(stackOptions({ agent: { text_tools: false } }));
      try {
        const strict = await helpersOn(await strictStack.start());
        strict.ollama.capabilities = ['completion'];
        const final = await strict.finish(await strict.submit('Fix the tests.'));
        expect(final.status).toBe('failed');
        expect(final.result).toMatch(/^The model "test-model" cannot use tools \(capabilities: completion\)\. Use a model with the tools capability, e\.g\. qwen3:8b/);
        expect(strict.ollama.chats).toHaveLength(0);
      } finally {
        await strictStack.stop();
      }
    });
  });

  describe('3. tool calls written in the text', () => {
    it('recovers Qwen, Mistral, Llama and fenced-JSON calls with prose around them, several in one message, arguments as a string', async () => {
      env.ollama.enqueue(
        { content: 'I will read it.\n<tool_call>\n{"name": "read_file", "arguments": {"path": "math.js"}}\n</tool_call>' },
        { content: '[TOOL_CALLS][{"name": "list_dir", "arguments": {"path": "."}}, {"name": "glob", "arguments": {"pattern": "*.js"}}]' },
        { content: '<|python_tag|>{"name": "grep", "parameters": {"pattern": "add"}}<|eom_id|>' },
        { content: 'Checking the file once more:\n```json\n{"name": "read_file", "arguments": "{\\"path\\": \\"math.js\\", \\"start_line\\": 1}"}\n```\nThen I answer.' },
        { content: 'I could call read_file on math.js again, but the answer is clear: add() adds.' },
      );
      const taskId = await env.submit('Explain math.js.');
      const final = await env.finish(taskId);
      expect(final).toMatchObject({ status: 'completed', result: 'I could call read_file on math.js again, but the answer is clear: add() adds.' });
      const calls = (await env.steps(taskId)).filter((step) => step.kind === 'tool_call').map((step) => `${step.name}:${step.outcome}`);
      expect(calls).toEqual(['read_file:ok', 'list_dir:ok', 'glob:ok', 'grep:ok', 'read_file:ok']);
    });
  });

  describe('4. unknown tools and invalid arguments', () => {
    it('answers each with an error naming the problem and the schema; the model retries and succeeds', async () => {
      env.ollama.enqueue(call('read_files', { path: 'math.js' }), call('read_file', { file: 'math.js', start_line: '1' }), call('read_file', { path: 'math.js' }), {
        content: 'read it',
      });
      const taskId = await env.submit('Read math.js.');
      expect(await env.finish(taskId)).toMatchObject({ status: 'completed', result: 'read it' });
      const results = env.ollama.workChats
        .at(-1)!
        .body.messages.filter((message) => message.role === 'tool')
        .map((message) => message.content);
      expect(results[0]).toBe('Error: unknown tool "read_files". The tools are: list_dir, read_file, write_file, edit_file, glob, grep, run_command, plan, ask_user.');
      expect(results[1]).toMatch(
        /^Error: invalid arguments for read_file: missing required argument "path"; unknown argument "file"; "start_line" must be integer \(got string\)\. Schema: \{"type":"object"/,
      );
      expect(results[2]).toMatch(/^1\texport const add/);
    });

    it('stops with a clear reason after three rounds of invalid calls in a row', async () => {
      const bad = call('edit_file', { path: 'math.js' });
      env.ollama.enqueue(bad, bad, bad);
      const final = await env.finish(await env.submit('Edit math.js.'));
      expect(final.status).toBe('failed');
      expect(final.result).toMatch(
        /^Stopped: the model made invalid tool calls 3 rounds in a row; the last: Error: invalid arguments for edit_file: missing required argument "old_text"/,
      );
    });
  });

  describe('5. cut-off and empty answers', () => {
    it('continues an answer cut off at done_reason "length" instead of returning it half-finished', async () => {
      env.ollama.enqueue({ content: 'The function add returns', doneReason: 'length', evalCount: 4 }, { content: ' the sum of a and b.' });
      const final = await env.finish(await env.submit('What does add return?'));
      expect(final).toMatchObject({ status: 'completed', result: 'The function add returns the sum of a and b.' });
      const last = env.ollama.workChats.at(-1)!.body.messages;
      expect(last.at(-2)).toMatchObject({ role: 'assistant', content: 'The function add returns' });
      expect(last.at(-1)!.content).toMatch(/cut off at the output limit\. Continue exactly where it stopped/);
    });

    it('fails an answer that stays cut off, and retries an empty answer once with feedback before failing', async () => {
      const cut = { content: 'and so', doneReason: 'length', evalCount: 4096 };
      env.ollama.enqueue(cut, cut, cut);
      const truncated = await env.finish(await env.submit('Write a long essay.'));
      expect(truncated.status).toBe('failed');
      expect(truncated.result).toMatch(/^The model's answer was cut off 3 times \(done_reason "length", 4096 tokens in the last part\)/);

      env.ollama.enqueue({ content: '', evalCount: 40 }, { content: 'second try worked' });
      expect(await env.finish(await env.submit('Answer.'))).toMatchObject({ status: 'completed', result: 'second try worked' });
      expect(env.ollama.workChats.at(-1)!.body.messages.at(-1)!.content).toMatch(/^Your last reply was empty/);

      env.ollama.enqueue({ content: '', evalCount: 40 }, { content: '  ', evalCount: 38 });
      const empty = await env.finish(await env.submit('Answer again.'));
      expect(empty.status).toBe('failed');
      expect(empty.result).toMatch(/^The model returned an empty answer twice \(done_reason "stop", 38 output tokens\)/);
    });
  });

  describe('7. Ollama and model problems, each with the fix', () => {
    it('a model that is not pulled names `ollama pull`', async () => {
      env.ollama.models = [];
      const final = await env.finish(await env.submit('Hello'));
      expect(final.status).toBe('failed');
      expect(final.result).toMatch(/Ollama model "test-model" was not found at http:\/\/127\.0\.0\.1:\d+ \(model 'test-model' not found\): run `ollama pull test-model`/);
    });

    it('an Ollama too old for streamed tool calls or for thinking says which version is needed', async () => {
      env.ollama.version = '0.7.1';
      const old = await env.finish(await env.submit('Hello'));
      expect(old.status).toBe('failed');
      expect(old.result).toMatch(/^Ollama 0\.7\.1 at .* is too old for streamed tool calls, which needs 0\.8\.0 or later: upgrade Ollama/);
      env.ollama.version = '0.8.1';
      env.ollama.capabilities = ['completion', 'tools', 'thinking'];
      const noThink = await env.finish(await env.submit('Hello'));
      expect(noThink.result).toMatch(/too old for thinking \(ollama\.think: auto\), which needs 0\.9\.0 or later/);
    });

    it('aborts a stream that stalls mid-answer and retries once; a second stall fails with what to check', async () => {
      env.ollama.enqueue({ content: 'half of an answer that never ends', stall: true }, { content: 'answered on retry' });
      const before = env.ollama.workChats.length;
      expect(await env.finish(await env.submit('Stall once.'))).toMatchObject({ status: 'completed', result: 'answered on retry' });
      expect(env.ollama.workChats.slice(before)[0].aborted).toBe(true);
      env.ollama.enqueue({ content: 'stuck', stall: true }, { content: 'stuck again', stall: true });
      const final = await env.finish(await env.submit('Stall twice.'));
      expect(final.status).toBe('failed');
      expect(final.result).toMatch(/^Ollama stopped streaming: no chunk for 1500 ms, twice: .*raise ollama\.stall_timeout_ms/);
    });

    it('answers an unusable plan with the reason as the tool error, and reads a plan whose arguments came as a JSON string', async () => {
      env.ollama.enqueue(
        call('plan', {
          subtasks: [
            { id: 'a', title: 'A', instructions: 'a', depends_on: ['b'] },
            { id: 'b', title: 'B', instructions: 'b', depends_on: ['a'] },
          ],
        }),
        { content: 'done directly' },
      );
      const direct = await env.submit('Fix the bug.');
      expect(await env.finish(direct)).toMatchObject({ status: 'completed', completed_tasks: '1/1', result: 'done directly' });
      const planStep = (await env.steps(direct)).find((step) => step.kind === 'plan')!;
      expect(JSON.parse(planStep.detail)).toEqual({ error: 'the dependencies form a cycle' });
      expect(env.ollama.workChats.at(-1)!.body.messages.at(-1)!.content).toMatch(/^Error: the dependencies form a cycle\. Call plan again/);

      const subtasks = [
        { id: 'a', title: 'Look', instructions: 'Look.', depends_on: [] },
        { id: 'b', title: 'Fix', instructions: 'Fix.', depends_on: ['a'] },
      ];
      env.ollama.enqueue(call('plan', { subtasks: JSON.stringify(subtasks) }), { content: 'looked' }, { content: 'fixed' }, { content: 'all done' });
      expect(await env.finish(await env.submit('Look, then fix.'))).toMatchObject({ status: 'completed', completed_tasks: '2/2', result: 'all done' });
    });
  });

  describe('8. live progress', () => {
    it('current_task and statusMessage name the action in progress, round by round', async () => {
      // Each answer waits until agent_status has shown its round in progress: a timed delay raced the polls. The
      // command, likewise, runs until agent_status has shown it: it waits for a file the test writes then.
      const rounds = ['ollama chat', 'ollama chat (round 2)', 'ollama chat (round 3)'];
      const shown = rounds.map(() => gate());
      const command = 'until [ -e shown ]; do sleep 0.02; done';
      const commandShown = join(env.config.workspace, 'shown');
      let commandTold = false;
      env.ollama.enqueue(
        { ...call('run_command', { command }), heldUntil: shown[0].opened },
        { ...call('edit_file', { path: 'math.js', old_text: 'a + b', new_text: 'b + a' }), heldUntil: shown[1].opened },
        { content: 'done', heldUntil: shown[2].opened },
      );
      const taskId = await env.submit('Wait, then edit.');
      const seen: string[] = [];
      const messages = new Set<string>();
      await pollUntil(
        async () => {
          const fields = fieldsOf(await env.status(taskId));
          if (fields.status === 'running' && seen.at(-1) !== fields.current_task) seen.push(fields.current_task);
          for (const [index, round] of rounds.entries()) if (seen.includes(round)) shown[index].open();
          if (!commandTold && fields.current_task === `run_command: ${command}`) {
            writeFileSync(commandShown, '');
            commandTold = true;
          }
          const got = await env.raw({ method: 'tasks/get', params: { taskId, _meta: modernMeta(true) } });
          if (got.kind === 'result') messages.add(got.result.statusMessage);
          return ['completed', 'failed'].includes(fields.status) || undefined;
        },
        `task ${taskId} ending`,
        { everyMs: 30, lastSeen: () => seen.join(', ') },
      );
      // edit_file takes milliseconds, too short for a poll to be sure to see; the trace has it.
      rmSync(commandShown);
      expect(seen.filter((action) => action !== 'edit_file: math.js')).toEqual(['ollama chat', `run_command: ${command}`, 'ollama chat (round 2)', 'ollama chat (round 3)']);
      expect(messages).toContain(`running 0/1: run_command: ${command} - タスクを実行しています。`);
      const steps = (await env.steps(taskId)).map((step) => `${step.kind}:${step.name}`);
      expect(steps).toEqual(['model_call:chat', `command:${command}`, 'model_call:chat', 'file_op:edit_file', 'model_call:chat']);
    });
  });
});

describe('6. context limits: nothing over num_ctx is ever sent', () => {
  const stack = useStack(stackOptions({ ollama: { num_ctx: 2048 } }));
  let env: Awaited<ReturnType<typeof helpersOn>>;

  beforeAll(async () => {
    env = await helpersOn(stack);
    writeFileSync(join(env.config.workspace, 'big.txt'), `${'word '.repeat(200)}\n`.repeat(2));
  });

  it('fails at once, with the numbers, when the request alone (with its images) cannot fit', async () => {
    // About 2 250 tokens by the agent's estimate: over the 1 792 that fit, under agent_run's own limit
    // (num_ctx × 4 = 8 192 characters), so it is the agent that refuses it.
    const long = await env.finish(await env.submit('Summarise this: ' + 'lorem ipsum '.repeat(560)));
    expect(long.status).toBe('failed');
    expect(long.result).toMatch(
      /^The request needs about \d+ tokens, more than fits ollama\.num_ctx 2048 with room for the answer \(1792\)\. Raise ollama\.num_ctx \(the model was trained for 40960\)/,
    );
    env.ollama.capabilities = ['completion', 'tools', 'vision'];
    const png = Buffer.from('89504e470d0a1a0a0000000d4948445200000001000000010806000000', 'hex').toString('base64');
    const images = [1, 2, 3].map(() => ({ mime_type: 'image/png', data_base64: png }));
    const pictures = await env.finish(await env.submit('Compare these.', { images }));
    expect(pictures.status).toBe('failed');
    expect(pictures.result).toMatch(/^The request needs about \d+ tokens \(3 image\(s\) at about 768 tokens each\)/);
    expect(env.ollama.chats).toHaveLength(0);
  });

  it('compacts old tool output before a request would pass the limit, and keeps every prompt within num_ctx', async () => {
    const read = call('read_file', { path: 'big.txt' });
    env.ollama.enqueue(
      read,
      { ...read, toolCalls: [{ name: 'read_file', arguments: { path: 'big.txt', start_line: 1 } }] },
      { ...read, toolCalls: [{ name: 'read_file', arguments: { path: 'big.txt', end_line: 2 } }] },
      { content: 'read three times' },
    );
    const final = await env.finish(await env.submit('Read big.txt three times.'));
    expect(final).toMatchObject({ status: 'completed', result: 'read three times' });
    expect(env.ollama.chats.length).toBeGreaterThan(0);
    for (const chat of env.ollama.chats) expect(chat.promptTokens).toBeLessThanOrEqual(2048);
    const tools = env.ollama.workChats
      .at(-1)!
      .body.messages.filter((message) => message.role === 'tool')
      .map((message) => message.content);
    expect(tools[0]).toBe('[earlier tool output removed to save context]');
    expect(tools.at(-1)).toMatch(/^1\tword/);
    expect(new Set(env.ollama.chats.map((chat) => JSON.stringify(chat.body.options))).size).toBe(1);
  });
});
