import { beforeAll, describe, expect, it } from '@jest/globals';
import type { Client } from '@modelcontextprotocol/client';
import { execSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { probe } from '../support/database-probe.js';
import { fieldsOf, httpRawDispatch, modernClient, modernMeta, textOf, waitForTerminal, type RawDispatch } from '../support/mcp-clients.js';
import { useStack } from '../support/e2e-stack.js';
import { pollUntil } from '../support/poll.js';
import type { ServiceProcess, writeConfig } from '../support/service-process.js';
import { gate } from '../support/gate.js';

const CANARIES = { OLLAMA_API_KEY: 'canary-C1', DATABASE_URL: 'canary-C2', AWS_SECRET_ACCESS_KEY: 'canary-C3', GITHUB_TOKEN: 'canary-C4' };

interface Step {
  subtask: string;
  kind: string;
  name: string;
  outcome: string;
  input_tokens: number;
  output_tokens: number;
  detail: string;
}

describe('agent runtime: planning, subtasks and workspace tools against a scripted model', () => {
  // One local project shared by every Task (auth.mode none), as a developer would point the agent at it.
  const stack = useStack({ config: { workspace: { command_timeout_ms: 20_000, isolation: 'shared' } }, env: CANARIES });
  const ollama = stack.ollama;
  let service: ServiceProcess;
  let client: Client;
  let raw: RawDispatch;
  let config: Awaited<ReturnType<typeof writeConfig>>;

  const submit = async (request: string) => fieldsOf(textOf(await client.callTool({ name: 'agent_run', arguments: { request } }))).task_id;
  const status = async (taskId: string) => textOf(await client.callTool({ name: 'agent_status', arguments: { task_id: taskId } }));
  const finish = (taskId: string) => waitForTerminal(status, taskId);
  const steps = (taskId: string) => probe<Step>(config.database, 'SELECT * FROM task_steps WHERE task_id = ? ORDER BY seq', taskId);
  const call = (name: string, args: Record<string, unknown>) => ({ toolCalls: [{ name, arguments: args }], promptEvalCount: 10, evalCount: 5 });

  beforeAll(async () => {
    ({ service, config } = stack);
    client = stack.closeOnStop(await modernClient(service.url));
    raw = httpRawDispatch(service.url);
  });

  it('answers a direct question in one chat (0/1 then 1/1, current_task "ollama chat", critical path 0)', async () => {
    ollama.enqueue({ content: '4', promptEvalCount: 12, evalCount: 1 });
    const taskId = await submit('What is 2 + 2?');
    const final = await finish(taskId);
    expect(final).toMatchObject({ status: 'completed', completed_tasks: '1/1', critical_path_tokens: '0', result: '4' });
    const kinds = (await steps(taskId)).map((step) => `${step.kind}:${step.name}`);
    expect(kinds).toEqual(['model_call:chat']);
  });

  it('fixes a failing test: reads, edits, runs the real test command, and the file and the exit code prove it', async () => {
    writeFileSync(join(config.workspace, 'math.js'), 'export const add = (a, b) => a - b;\n');
    writeFileSync(
      join(config.workspace, 'test.mjs'),
      "import { add } from './math.js';\nif (add(2, 3) !== 5) { console.error('FAIL: add(2, 3) = ' + add(2, 3)); process.exit(1); }\nconsole.log('PASS');\n",
    );
    writeFileSync(join(config.workspace, 'package.json'), '{"type":"module"}\n');
    ollama.enqueue(
      call('run_command', { command: 'node test.mjs' }),
      call('read_file', { path: 'math.js' }),
      call('edit_file', { path: 'math.js', old_text: 'a - b', new_text: 'a + b' }),
      call('run_command', { command: 'node test.mjs' }),
      { content: 'add() subtracted instead of adding; fixed it and the test passes.', promptEvalCount: 40, evalCount: 12 },
    );
    const taskId = await submit('Investigate the failing test and fix the cause.');
    const final = await finish(taskId);
    expect(final.status).toBe('completed');
    expect(readFileSync(join(config.workspace, 'math.js'), 'utf8')).toBe('export const add = (a, b) => a + b;\n');
    const commands = (await steps(taskId)).filter((step) => step.kind === 'command').map((step) => JSON.parse(step.detail));
    expect(commands.map((command) => command.exitCode)).toEqual([1, 0]);
    expect(commands[0].output).toContain('FAIL: add(2, 3) = -1');
    expect(commands[1].output).toContain('PASS');
    expect(commands[0].sandbox).toBe('bubblewrap');
    const toolResults = ollama.workChats
      .at(-1)!
      .body.messages.filter((message) => message.role === 'tool')
      .map((message) => message.content);
    expect(toolResults[0]).toMatch(/^exit code 1/);
    expect(toolResults.at(-1)).toMatch(/^exit code 0\nPASS/);
    const full = textOf(await client.callTool({ name: 'agent_status', arguments: { task_id: taskId } }));
    expect(full).toMatch(/Files created or changed:\n- math.js \(changed, 36 bytes\) agent-session:\/\/[0-9a-f-]{36}\/files\/math.js/);
  });

  it('keeps every request a byte-for-byte extension of the previous one within a Task (prefix stability)', async () => {
    ollama.enqueue(call('list_dir', {}), call('read_file', { path: 'math.js' }), { content: 'done' });
    const before = ollama.workChats.length;
    const taskId = await submit('Look around.');
    await finish(taskId);
    const requests = ollama.workChats.slice(before);
    expect(requests).toHaveLength(3);
    for (let i = 1; i < requests.length; i++) {
      const previous = requests[i - 1].body;
      const current = requests[i].body;
      expect(current.messages.slice(0, previous.messages.length)).toEqual(previous.messages);
      expect(JSON.stringify(current.tools)).toBe(JSON.stringify(previous.tools));
      expect(current.options).toEqual(previous.options);
    }
  });

  it('runs a 3-subtask plan in dependency order, reporting progress and the critical path tokens', async () => {
    // Each subtask's answer waits until agent_status has shown that subtask running: a timed delay raced the polls.
    const wanted = ['0/3 コードを調査', '1/3 ドキュメントを確認', '2/3 修正を適用'];
    const shown = wanted.map(() => gate());
    ollama.enqueue(
      {
        ...call('plan', {
          subtasks: [
            { id: 'inspect', title: 'コードを調査', instructions: 'Read the code.', depends_on: [] },
            { id: 'docs', title: 'ドキュメントを確認', instructions: 'Check the docs.', depends_on: [] },
            { id: 'fix', title: '修正を適用', instructions: 'Apply the fix.', depends_on: ['inspect'] },
          ],
        }),
        promptEvalCount: 20,
        evalCount: 30,
      },
      { content: 'inspected', promptEvalCount: 100, evalCount: 50, heldUntil: shown[0].opened },
      { content: 'docs read', promptEvalCount: 150, evalCount: 20, heldUntil: shown[1].opened },
      { content: 'fixed', promptEvalCount: 200, evalCount: 100, heldUntil: shown[2].opened },
      { content: '調査と修正が完了しました。', promptEvalCount: 300, evalCount: 40 },
    );
    const taskId = await submit('コードを調べて修正してください。');
    const seen = new Set<string>();
    await pollUntil(
      async () => {
        const fields = fieldsOf(await status(taskId));
        if (fields.status === 'running') seen.add(`${fields.completed_tasks} ${fields.current_task}`);
        for (const [index, state] of wanted.entries()) if (seen.has(state)) shown[index].open();
        return ['completed', 'failed'].includes(fields.status) || undefined;
      },
      `task ${taskId} ending`,
      { everyMs: 40, lastSeen: () => [...seen].join(', ') },
    );
    expect([...seen]).toEqual(expect.arrayContaining(wanted));
    const final = fieldsOf(await status(taskId));
    expect(final).toMatchObject({ status: 'completed', completed_tasks: '3/3', result: '調査と修正が完了しました。' });
    // inspect (150) -> fix (300) is heavier than docs (170) alone.
    expect(final.critical_path_tokens).toBe('450');
    expect(final.token_usage).toBe('input=770 output=240 total=1010');
    const order = (await steps(taskId)).filter((step) => step.kind === 'model_call').map((step) => step.subtask);
    expect(order).toEqual(['', 'inspect', 'docs', 'fix', '']);
  });

  it('recovers a tool call the model wrote into its text', async () => {
    ollama.enqueue({ content: '<tool_call>\n{"name": "list_dir", "arguments": {"path": "."}}\n</tool_call>' }, { content: 'listed' });
    const taskId = await submit('List the workspace.');
    expect((await finish(taskId)).status).toBe('completed');
    expect((await steps(taskId)).some((step) => step.kind === 'tool_call' && step.name === 'list_dir' && step.outcome === 'ok')).toBe(true);
    const last = ollama.workChats.at(-1)!.body.messages;
    expect(last.at(-1)).toMatchObject({ role: 'tool', tool_name: 'list_dir' });
    expect(last.at(-1)!.content).toContain('math.js');
  });

  it('stops a model that repeats the same call with the same result 3 times', async () => {
    const again = call('read_file', { path: 'math.js' });
    ollama.enqueue(again, again, again);
    const final = await finish(await submit('Read math.js.'));
    expect(final.status).toBe('failed');
    expect(final.result).toMatch(/repeated the same call 3 times with the same result: read_file\(\{"path":"math.js"\}\)/);
    expect(ollama.workChats.at(-1)!.body.messages.filter((message) => message.role === 'tool')).toHaveLength(2);
  });

  it('retries an Ollama 500 (a tool call it could not parse) with feedback, then succeeds', async () => {
    ollama.enqueue({ status: 500, error: 'error parsing tool call: invalid character' }, { content: 'worked the second time' });
    const final = await finish(await submit('Try.'));
    expect(final).toMatchObject({ status: 'completed', result: 'worked the second time' });
    const retry = ollama.workChats.at(-1)!.body.messages.at(-1)!;
    expect(retry).toMatchObject({ role: 'user' });
    expect(retry.content).toMatch(/Your previous response caused an error: Ollama returned HTTP 500: error parsing tool call/);
  });

  it('refuses escapes from the workspace through the tools, and the model sees the refusal', async () => {
    ollama.enqueue(call('read_file', { path: '../../../etc/passwd' }), call('write_file', { path: '/tmp/escaped-by-agent', content: 'x' }), { content: 'could not' });
    const taskId = await submit('Read /etc/passwd.');
    await finish(taskId);
    const denied = (await steps(taskId)).filter((step) => step.outcome === 'denied');
    expect(denied.map((step) => step.name)).toEqual(['read_file', 'write_file']);
    const toolResults = ollama.workChats.at(-1)!.body.messages.filter((message) => message.role === 'tool');
    expect(toolResults.every((message) => message.content.startsWith('Error:') && !message.content.includes('root:'))).toBe(true);
    expect(() => readFileSync('/tmp/escaped-by-agent')).toThrow();
  });

  it('compacts old tool outputs once the prompt nears the context size, keeping the recent ones', async () => {
    writeFileSync(join(config.workspace, 'big.txt'), 'x'.repeat(5000));
    const read = (n: number) => ({ ...call('read_file', { path: 'big.txt', start_line: 1, end_line: n }), promptEvalCount: 27_000 });
    ollama.enqueue(read(1), read(2), read(3), read(4), read(5), read(6), { content: 'done' });
    await finish(await submit('Read big.txt many times.'));
    const tools = ollama.workChats
      .at(-1)!
      .body.messages.filter((message) => message.role === 'tool')
      .map((message) => message.content);
    expect(tools).toHaveLength(6);
    // Each reply's prompt_eval_count (27 000 of 32 768) triggers a compaction, and teaches the pre-flight
    // estimate that these prompts are larger than their characters suggest: before the last request, all
    // but the newest four results went.
    expect(tools.slice(0, 2)).toEqual(['[earlier tool output removed to save context]', '[earlier tool output removed to save context]']);
    expect(tools.slice(2).every((content) => content.startsWith('1\t'))).toBe(true);
  });

  it('bounds a huge tool output for the model with a truncation marker', async () => {
    ollama.enqueue(call('run_command', { command: 'seq 1 100000' }), { content: 'counted' });
    await finish(await submit('Count.'));
    const output = ollama.workChats
      .at(-1)!
      .body.messages.filter((message) => message.role === 'tool')
      .at(-1)!.content;
    expect(output.length).toBeLessThanOrEqual(16_000 + 100);
    expect(output).toMatch(/characters omitted/);
    expect(output).toMatch(/\n100000$/);
  });

  it('runs commands without any of the service environment (T3.8 canaries)', async () => {
    ollama.enqueue(call('run_command', { command: 'env; cat /proc/self/environ' }), { content: 'ok' });
    const taskId = await submit('Show the environment.');
    await finish(taskId);
    const output = ollama.workChats
      .at(-1)!
      .body.messages.filter((message) => message.role === 'tool')
      .at(-1)!.content;
    expect(output).toMatch(/^exit code 0/);
    for (const canary of Object.values(CANARIES)) expect(output).not.toContain(canary);
  });

  it('passes no client credential on to Ollama, commands or the audit log (T1.6)', async () => {
    const canary = 'tokencanary-5f2e9a71c3';
    const withToken = await modernClient(service.url, { Authorization: `Bearer ${canary}`, 'X-Jwt-Assertion': `eyJ${canary}` });
    const before = ollama.chats.length;
    ollama.enqueue(call('run_command', { command: 'env; cat /proc/self/environ; cat /proc/1/cmdline' }), { content: 'done' });
    const taskId = fieldsOf(textOf(await withToken.callTool({ name: 'agent_run', arguments: { request: 'show the environment' } }))).task_id;
    await finish(taskId);
    await withToken.close();
    expect(JSON.stringify(ollama.chats.slice(before).map((chat) => chat.body))).not.toContain(canary);
    const rows = await probe<Record<string, unknown>>(config.database, 'SELECT * FROM audit_events');
    expect(JSON.stringify(rows)).not.toContain(canary);
    const trace = await probe<Record<string, unknown>>(config.database, 'SELECT * FROM task_steps WHERE task_id = ?', taskId);
    expect(JSON.stringify(trace)).not.toContain(canary);
  });

  it('cancels a Task during a long command within 2 s, leaving no process behind', async () => {
    // A sleep no other test file's run has (npm test runs the SQLite and PostgreSQL passes side by side).
    const sleep = `sleep 45.${process.pid}`;
    ollama.enqueue(call('run_command', { command: `${sleep} && echo finished > late.txt` }));
    const taskId = await submit('Wait a long time.');
    const deadline = Date.now() + 10_000;
    while (!execSync('ps -eo args').toString().includes(sleep) && Date.now() < deadline) await new Promise((done) => setTimeout(done, 50));
    const started = Date.now();
    const cancel = await raw({ method: 'tasks/cancel', params: { taskId, _meta: modernMeta(true) } });
    expect(cancel.kind).toBe('result');
    const final = await finish(taskId);
    expect(final.status).toBe('cancelled');
    expect(Date.now() - started).toBeLessThan(2000);
    expect(execSync('ps -eo args').toString()).not.toContain(sleep);
    const command = (await steps(taskId)).find((step) => step.kind === 'command')!;
    expect(command.outcome).toBe('cancelled');
  });
});
