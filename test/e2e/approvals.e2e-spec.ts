import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Client } from '@modelcontextprotocol/client';
import { resultFromTaskOutcome } from '@modelcontextprotocol/ext-tasks/client';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { probe, type DatabaseTarget } from '../support/database-probe.js';
import { E2E_DATABASE } from '../support/databases.js';
import { useStack, type E2eStack } from '../support/e2e-stack.js';
import {
  fieldsOf,
  httpRawDispatch,
  modernClient,
  modernMeta,
  tasksSession,
  textOf,
  waitForTerminal,
  type InputRequestHandler,
  type RawDispatch,
  type RawResponse,
} from '../support/mcp-clients.js';
import { pollUntil } from '../support/poll.js';
import type { ServiceProcess } from '../support/service-process.js';
import { openBrowser } from '../support/browser.js';

const ADMIN_TOKEN = 'approvals-admin-token-0123456789';
const call = (name: string, args: Record<string, unknown>) => ({ toolCalls: [{ name, arguments: args }], promptEvalCount: 10, evalCount: 5 });

interface ApprovalRow {
  id: string;
  task_id: string;
  state: string;
  waiting: number | boolean;
  answered_by: string | null;
  answered_client: string | null;
  answered_via: string | null;
  reason: string | null;
}

/** The Task's tasks/get result once its status is one of `wanted`, asked through `dispatch`. */
async function taskReaching(dispatch: RawDispatch, taskId: string, wanted: string[]): Promise<any> {
  let last: RawResponse | undefined;
  return pollUntil(
    async () => {
      last = await dispatch({ method: 'tasks/get', params: { taskId, _meta: modernMeta(true) } });
      return last.kind === 'result' && wanted.includes(last.result.status) ? last.result : undefined;
    },
    `task ${taskId} ${wanted.join(' or ')}`,
    { lastSeen: () => JSON.stringify(last) },
  );
}

/**
 * One service under test with its clients; the helpers every approvals suite uses. Made inside a describe block:
 * its stack starts, and its clients connect, in the block's beforeAll.
 */
class Harness {
  readonly stack: E2eStack;
  client!: Client;
  raw!: RawDispatch;

  constructor(config: Record<string, unknown>, headers: Record<string, string> = {}) {
    this.stack = useStack({ config });
    // Whichever client is current when the stack stops (a test may reconnect after a restart).
    this.stack.closeOnStop({ close: () => this.client?.close() });
    beforeAll(async () => {
      this.client = await modernClient(this.service.url, headers);
      this.raw = httpRawDispatch(this.service.url, headers);
    });
  }

  get ollama() {
    return this.stack.ollama;
  }

  get service(): ServiceProcess {
    return this.stack.service;
  }

  get db(): DatabaseTarget {
    return this.stack.database;
  }

  /** A file of the shared workspace, or of a session's own one. */
  file(name: string, sessionId?: string): string {
    const { workspace } = this.stack.config;
    return sessionId ? join(workspace, 'sessions', sessionId, name) : join(workspace, name);
  }

  async submit(request: string, sessionId?: string): Promise<Record<string, string>> {
    const text = textOf(await this.client.callTool({ name: 'agent_run', arguments: { request, ...(sessionId ? { session_id: sessionId } : {}) } }));
    return fieldsOf(text);
  }

  async statusText(taskId: string): Promise<string> {
    return textOf(await this.client.callTool({ name: 'agent_status', arguments: { task_id: taskId } }));
  }

  /** Waits for the Task to end; returns its whole agent_status text (the result spans lines). */
  async finished(taskId: string): Promise<string> {
    await waitForTerminal((id) => this.statusText(id), taskId);
    return this.statusText(taskId);
  }

  /** The Task's owner as the service identified it (the OS user in auth mode none). */
  async ownerOf(taskId: string): Promise<string> {
    return (await probe<{ owner: string }>(this.db, 'SELECT owner FROM tasks WHERE id = ?', taskId))[0].owner;
  }

  approvalsOf(taskId: string): Promise<ApprovalRow[]> {
    return probe<ApprovalRow>(this.db, 'SELECT * FROM approvals WHERE task_id = ? ORDER BY created_at', taskId);
  }

  audit(action: string, taskId: string): Promise<{ actor: string; client: string | null; detail: string }[]> {
    return probe(this.db, 'SELECT actor, client, detail FROM audit_events WHERE action = ? AND task_id = ? ORDER BY seq', action, taskId);
  }

  withTasks(method: string, params: Record<string, unknown>): Promise<RawResponse> {
    return this.raw({ method, params: { ...params, _meta: modernMeta(true) } });
  }

  taskStatus(taskId: string, wanted: string[]): Promise<any> {
    return taskReaching(this.raw, taskId, wanted);
  }
}

describe('approvals, mode commands: end and resume through the conversation, answer in place', () => {
  const h = new Harness({
    agent: { approvals: { mode: 'commands', allow: ['echo allowed*', 'git diff*'], wait_ms: 60_000 } },
    auth: { admin_token: ADMIN_TOKEN },
    workspace: { isolation: 'shared' },
  });

  // The one-active-Task rule held throughout: the model never served two Tasks at once.
  afterAll(() => expect(h.ollama.maxConcurrentChats).toBe(1));

  /** A Task whose model wants `command`; returns it after it ended with the approval request. */
  async function paused(command: string, request = `please run ${command}`): Promise<{ task_id: string; session_id: string; text: string }> {
    h.ollama.enqueue(call('run_command', { command }));
    const accepted = await h.submit(request);
    const text = await h.finished(accepted.task_id);
    return { task_id: accepted.task_id, session_id: accepted.session_id, text };
  }

  it.each(['承認', 'はい', 'approve', ' YES '])(
    'ends with the request when the client cannot answer in place; %j runs it and the model continues the same conversation',
    async (word) => {
      const name = `approved-${Buffer.from(word).toString('hex')}.txt`;
      const command = `echo hi > ${name}`;
      const first = await paused(command, 'write hi into a file');
      expect(fieldsOf(first.text)).toMatchObject({ status: 'completed', current_task: '' });
      expect(first.text).toContain(`command: ${command}`);
      expect(first.text).toContain(`session_id (${first.session_id})`);
      expect(first.text).toContain('「承認」');
      expect(existsSync(h.file(name))).toBe(false);
      const [pending] = await h.approvalsOf(first.task_id);
      expect(pending).toMatchObject({ state: 'pending' });
      expect(Boolean(pending.waiting)).toBe(false);

      h.ollama.enqueue({ content: 'wrote the file', promptEvalCount: 20, evalCount: 4 });
      const chatsBefore = h.ollama.workChats.length;
      const second = await h.submit(word, first.session_id);
      const final = await h.finished(second.task_id);
      expect(fieldsOf(final)).toMatchObject({ status: 'completed', result: 'wrote the file' });
      expect(readFileSync(h.file(name), 'utf8')).toBe('hi\n');
      // The resumed conversation is the one the model had: its tool call, then the command's real result.
      const messages = h.ollama.workChats[chatsBefore].body.messages;
      expect(messages.map((message) => message.role)).toEqual(['system', 'user', 'assistant', 'tool']);
      expect(messages[1].content).toBe('write hi into a file');
      expect(JSON.stringify(messages[2].tool_calls)).toContain(command.replace(/"/g, '\\"'));
      expect(messages[3]).toMatchObject({ tool_name: 'run_command' });
      expect(messages[3].content).toMatch(/^exit code 0/);
      expect(h.ollama.workChats.length).toBe(chatsBefore + 1);
      const [answered] = await h.approvalsOf(first.task_id);
      expect(answered).toMatchObject({ state: 'granted', answered_by: await h.ownerOf(second.task_id), answered_via: 'conversation', answered_client: 'e2e/1.0.0' });
      const [granted] = await h.audit('approval.granted', first.task_id);
      expect(granted.client).toBe('e2e/1.0.0');
      expect(JSON.parse(granted.detail)).toMatchObject({ command, via: 'conversation', answer_task_id: second.task_id });
    },
  );

  it.each(['拒否', 'いいえ', 'deny', 'No'])('%j: the model is told the person refused, and goes on without running it', async (word) => {
    const name = `denied-${Buffer.from(word).toString('hex')}.txt`;
    const first = await paused(`echo no > ${name}`);
    h.ollama.enqueue({ content: 'understood, not writing it' });
    const chatsBefore = h.ollama.workChats.length;
    const second = await h.submit(word, first.session_id);
    expect(fieldsOf(await h.finished(second.task_id))).toMatchObject({ status: 'completed', result: 'understood, not writing it' });
    expect(existsSync(h.file(name))).toBe(false);
    const messages = h.ollama.workChats[chatsBefore].body.messages;
    expect(messages.at(-1)).toMatchObject({ role: 'tool', tool_name: 'run_command' });
    expect(messages.at(-1)!.content).toMatch(/^Not run: the person refused this action/);
    expect((await h.approvalsOf(first.task_id))[0].state).toBe('denied');
    expect(await h.audit('approval.denied', first.task_id)).toHaveLength(1);
  });

  it('anything else drops the action and becomes the new instruction', async () => {
    const first = await paused('echo x > dropped.txt');
    h.ollama.enqueue({ content: 'listed instead' });
    const chatsBefore = h.ollama.workChats.length;
    const second = await h.submit('list the files instead', first.session_id);
    expect(fieldsOf(await h.finished(second.task_id))).toMatchObject({ status: 'completed', result: 'listed instead' });
    expect(existsSync(h.file('dropped.txt'))).toBe(false);
    const messages = h.ollama.workChats[chatsBefore].body.messages;
    expect(messages.slice(-2).map((message) => message.role)).toEqual(['tool', 'user']);
    expect(messages.at(-2)!.content).toMatch(/did not approve this action and gave a new instruction/);
    expect(messages.at(-1)!.content).toBe('list the files instead');
    expect((await h.approvalsOf(first.task_id))[0].state).toBe('dropped');
  });

  it('an answer word to a session with nothing pending is an ordinary request', async () => {
    h.ollama.enqueue({ content: 'hello' });
    const first = await h.submit('say hello');
    await h.finished(first.task_id);
    h.ollama.enqueue({ content: 'approve what?' });
    const chatsBefore = h.ollama.workChats.length;
    const second = await h.submit('承認', first.session_id);
    expect(fieldsOf(await h.finished(second.task_id))).toMatchObject({ result: 'approve what?' });
    const messages = h.ollama.workChats[chatsBefore].body.messages;
    expect(messages.map((message) => [message.role, message.content])).toEqual([
      ['system', expect.any(String)],
      ['user', 'say hello'],
      ['assistant', 'hello'],
      ['user', '承認'],
    ]);
  });

  it('runs an allowlisted command without asking, with the workspace read-only: `git diff --output=FILE` writes nothing (issue 37)', async () => {
    const command = 'git diff --no-index --output=diff-out.txt /usr/bin/true /usr/bin/false';
    h.ollama.enqueue(call('run_command', { command }), { content: 'tried', promptEvalCount: 10, evalCount: 2 });
    const accepted = await h.submit('diff two programs');
    expect(fieldsOf(await h.finished(accepted.task_id))).toMatchObject({ status: 'completed', result: 'tried' });
    expect(await h.approvalsOf(accepted.task_id)).toEqual([]);
    expect(existsSync(h.file('diff-out.txt'))).toBe(false);
    expect(h.ollama.workChats.at(-1)!.body.messages.at(-1)).toMatchObject({ tool_name: 'run_command', content: expect.stringMatching(/Read-only file system/) });
  });

  it('runs allowlisted simple commands without asking, and asks for the same words chained to another command', async () => {
    h.ollama.enqueue(call('run_command', { command: 'echo allowed one' }), call('run_command', { command: 'echo allowed && touch chained.txt' }));
    const accepted = await h.submit('run two commands');
    const text = await h.finished(accepted.task_id);
    expect(text).toContain('command: echo allowed && touch chained.txt');
    expect(existsSync(h.file('chained.txt'))).toBe(false);
    const steps = await probe<{ kind: string; name: string }>(h.db, "SELECT kind, name FROM task_steps WHERE task_id = ? AND kind = 'command'", accepted.task_id);
    expect(steps.map((step) => step.name)).toEqual(['echo allowed one']);
    const requested = await h.audit('approval.requested', accepted.task_id);
    expect(requested.map((event) => JSON.parse(event.detail).command)).toEqual(['echo allowed && touch chained.txt']);
    h.ollama.enqueue({ content: 'skipped' });
    await h.finished((await h.submit('拒否', accepted.session_id)).task_id);
  });

  it('shows the pending action of a session and the Tasks waiting for approval on the admin API', async () => {
    const first = await paused('echo admin > admin.txt');
    const auth = { Authorization: `Bearer ${ADMIN_TOKEN}` };
    const base = `http://127.0.0.1:${h.service.port}`;
    const ofSession = await (await fetch(`${base}/admin/sessions/${first.session_id}/approval`, { headers: auth })).json();
    expect(ofSession).toMatchObject({
      session_id: first.session_id,
      pending: { task_id: first.task_id, tool: 'run_command', command: 'echo admin > admin.txt', state: 'pending', waiting_in_place: false },
    });
    expect(JSON.stringify(ofSession)).not.toContain('messages');
    const task = await (await fetch(`${base}/admin/tasks/${first.task_id}`, { headers: auth })).json();
    expect(task.pending_approvals).toMatchObject([{ command: 'echo admin > admin.txt', waiting_in_place: false }]);
    // The console shows it on the Task's page.
    const browser = await openBrowser();
    try {
      const page = await browser.newPage();
      page.setDefaultTimeout(10_000);
      await page.goto(`${base}/admin#/tasks/${first.task_id}`);
      await page.fill('#token', ADMIN_TOKEN);
      await page.press('#token', 'Enter');
      const section = page.locator('section.card', { hasText: 'Pending approvals' });
      await section.waitFor();
      expect(await section.textContent()).toContain('$ echo admin > admin.txt');
      expect(await section.textContent()).toContain('waiting for 承認 / 拒否 in the conversation');
    } finally {
      await browser.close();
    }
    const list = await (await fetch(`${base}/admin/approvals`, { headers: auth })).json();
    expect(list.items.map((item: { task_id: string }) => item.task_id)).toContain(first.task_id);
    expect((await fetch(`${base}/admin/approvals`)).status).toBe(403);
    expect((await fetch(`${base}/admin/approvals?limit=0`, { headers: auth })).status).toBe(400);
    h.ollama.enqueue({ content: 'ok' });
    await h.finished((await h.submit('no', first.session_id)).task_id);
    const after = await (await fetch(`${base}/admin/sessions/${first.session_id}/approval`, { headers: auth })).json();
    expect(after.pending).toBeNull();
  });

  it('ext-tasks client: the Task keeps its slot as input_required with a form; accept + approve runs it; the queue waits', async () => {
    const command = 'echo inplace > inplace.txt';
    h.ollama.enqueue(call('run_command', { command }), { content: 'done in place' });
    let queuedId = '';
    let observed: Record<string, unknown> = {};
    const onInputRequest: InputRequestHandler = async (request, context) => {
      const taskId = context.taskId!;
      const got = await h.withTasks('tasks/get', { taskId });
      // A Task queued meanwhile stays queued: the waiting Task holds the one active slot.
      h.ollama.enqueue({ content: 'second task' });
      queuedId = (await h.submit('a second task')).task_id;
      observed = {
        request,
        inputId: context.inputId,
        status: fieldsOf(await h.statusText(taskId)),
        tasksGet: (got as { result: unknown }).result,
        queued: fieldsOf(await h.statusText(queuedId)).status,
        bogus: await h.withTasks('tasks/update', { taskId, inputResponses: { 'not-a-key': { action: 'accept', content: { approve: true } } } }),
        stillWaiting: ((await h.withTasks('tasks/get', { taskId })) as { result: { status: string } }).result.status,
        existsBefore: existsSync(h.file('inplace.txt')),
      };
      return { action: 'accept', content: { approve: true } };
    };
    const session = tasksSession(h.client, h.raw, onInputRequest);
    const exec = (await session.callTool('agent_run', { request: 'write in place' })) as { kind: string; handle: { taskId: string }; settle(): Promise<{ outcome: unknown }> };
    expect(exec.kind).toBe('task');
    const result = resultFromTaskOutcome<{ content: { text: string }[] }>((await exec.settle()).outcome as never);
    expect(fieldsOf(textOf(result))).toMatchObject({ status: 'completed', result: 'done in place' });
    expect(readFileSync(h.file('inplace.txt'), 'utf8')).toBe('inplace\n');

    const [approval] = await h.approvalsOf(exec.handle.taskId);
    expect(observed.request).toEqual({
      kind: 'elicitation',
      params: {
        mode: 'form',
        message: expect.stringContaining(`command: ${command}`),
        requestedSchema: {
          type: 'object',
          properties: { approve: expect.objectContaining({ type: 'boolean' }), reason: expect.objectContaining({ type: 'string' }) },
          required: ['approve'],
        },
      },
    });
    expect(observed.inputId).toBe(approval.id);
    expect(observed.status).toMatchObject({ status: 'running', current_task: `approval: run_command ${command}` });
    expect(observed.tasksGet).toMatchObject({ status: 'input_required', inputRequests: { [approval.id]: { method: 'elicitation/create', params: { mode: 'form' } } } });
    expect(observed.queued).toBe('queued');
    expect(observed.bogus).toMatchObject({ kind: 'result', result: { resultType: 'complete' } });
    expect(observed.stillWaiting).toBe('input_required');
    expect(observed.existsBefore).toBe(false);
    expect(approval).toMatchObject({ state: 'granted', answered_via: 'in_place', answered_by: await h.ownerOf(exec.handle.taskId) });
    expect(fieldsOf(await h.finished(queuedId)).status).toBe('completed');
    await session.close();
  });

  it('tasks/update approve:false with a reason denies it in place; the model gets the reason; a second answer to that key is ignored', async () => {
    h.ollama.enqueue(call('run_command', { command: 'echo nope > nope.txt' }), { content: 'fine, not doing it' });
    const created = await h.withTasks('tools/call', { name: 'agent_run', arguments: { request: 'try it' } });
    const taskId = (created as { result: { taskId: string } }).result.taskId;
    const waiting = await h.taskStatus(taskId, ['input_required']);
    const [key] = Object.keys(waiting.inputRequests);
    const chatsBefore = h.ollama.workChats.length;
    expect(await h.withTasks('tasks/update', { taskId, inputResponses: { [key]: { action: 'accept', content: { approve: false, reason: 'not on a Friday' } } } })).toMatchObject({
      kind: 'result',
    });
    const final = await h.taskStatus(taskId, ['completed']);
    expect(fieldsOf(final.result.content[0].text)).toMatchObject({ result: 'fine, not doing it' });
    expect(existsSync(h.file('nope.txt'))).toBe(false);
    const told = h.ollama.workChats[chatsBefore].body.messages.at(-1)!;
    expect(told).toMatchObject({ role: 'tool', tool_name: 'run_command' });
    expect(told.content).toContain('(reason: not on a Friday)');
    await h.withTasks('tasks/update', { taskId, inputResponses: { [key]: { action: 'accept', content: { approve: true } } } });
    expect(await h.approvalsOf(taskId)).toMatchObject([{ state: 'denied', reason: 'not on a Friday', answered_via: 'in_place' }]);
    const [denied] = await h.audit('approval.denied', taskId);
    expect(JSON.parse(denied.detail)).toMatchObject({ command: 'echo nope > nope.txt', via: 'in_place', reason: 'not on a Friday' });
  });

  it('resumes a plan inside the subtask that asked: its instruction is not repeated, the next subtask and the summary follow', async () => {
    const subtasks = [
      { id: 's1', title: 'write the file', instructions: 'write plan.txt', depends_on: [] },
      { id: 's2', title: 'check it', instructions: 'check plan.txt', depends_on: ['s1'] },
    ];
    h.ollama.enqueue(call('plan', { subtasks }), call('run_command', { command: 'echo plan > plan.txt' }));
    const first = await h.submit('write and check a file');
    expect(await h.finished(first.task_id)).toContain('command: echo plan > plan.txt');
    h.ollama.enqueue({ content: 's1 done' }, { content: 's2 done' }, { content: 'all done' });
    const chatsBefore = h.ollama.workChats.length;
    const second = await h.submit('承認', first.session_id);
    expect(fieldsOf(await h.finished(second.task_id))).toMatchObject({ status: 'completed', completed_tasks: '2/2', result: 'all done' });
    expect(readFileSync(h.file('plan.txt'), 'utf8')).toBe('plan\n');
    const last = h.ollama.workChats.at(-1)!.body.messages;
    const instructions = last.filter((message) => message.role === 'user' || message.role === 'tool').flatMap((message) => message.content.split('\n'));
    expect(instructions.filter((line) => line.startsWith('Subtask 1/2'))).toHaveLength(1);
    expect(instructions.filter((line) => line.startsWith('Subtask 2/2'))).toHaveLength(1);
    expect(last.at(-1)!.content).toMatch(/^All subtasks are done/);
    expect(h.ollama.workChats.length).toBe(chatsBefore + 3);
    expect(h.ollama.workChats[chatsBefore].body.messages.at(-1)).toMatchObject({ role: 'tool', tool_name: 'run_command' });
  });

  it('a Task cancelled while it waits in place drops its request', async () => {
    h.ollama.enqueue(call('run_command', { command: 'echo never > cancelled.txt' }));
    const created = await h.withTasks('tools/call', { name: 'agent_run', arguments: { request: 'then cancel' } });
    const taskId = (created as { result: { taskId: string } }).result.taskId;
    await h.taskStatus(taskId, ['input_required']);
    await h.withTasks('tasks/cancel', { taskId });
    const final = await h.taskStatus(taskId, ['cancelled']);
    expect(final).not.toHaveProperty('inputRequests');
    expect(existsSync(h.file('cancelled.txt'))).toBe(false);
    expect(await h.approvalsOf(taskId)).toMatchObject([{ state: 'cancelled' }]);
  });

  it.each([{ action: 'decline' }, { action: 'cancel' }])('ext-tasks client: %j denies it', async (answer) => {
    const name = `${answer.action}.txt`;
    h.ollama.enqueue(call('run_command', { command: `echo x > ${name}` }), { content: `${answer.action}d` });
    const session = tasksSession(h.client, h.raw, async () => answer);
    const exec = (await session.callTool('agent_run', { request: 'try' })) as { handle: { taskId: string }; settle(): Promise<{ outcome: unknown }> };
    const result = resultFromTaskOutcome((await exec.settle()).outcome as never);
    expect(fieldsOf(textOf(result)).status).toBe('completed');
    expect(existsSync(h.file(name))).toBe(false);
    expect((await h.approvalsOf(exec.handle.taskId))[0].state).toBe('denied');
    await session.close();
  });
});

describe('approvals, mode changes: diffs, the wait running out, kill -9 between request and answer', () => {
  const h = new Harness({ agent: { approvals: { mode: 'changes', wait_ms: 300 } }, workspace: { isolation: 'shared' } });

  afterAll(() => expect(h.ollama.maxConcurrentChats).toBe(1));

  it('a Tasks-aware client that does not answer within wait_ms: the Task ends with the request and diff, the queue moves on', async () => {
    writeFileSync(h.file('math.js'), 'export const add = (a, b) => a - b;\n');
    h.ollama.enqueue(call('edit_file', { path: 'math.js', old_text: 'a - b', new_text: 'a + b' }), { content: 'second task ran' });
    const created = await h.withTasks('tools/call', { name: 'agent_run', arguments: { request: 'fix add' } });
    const taskId = (created as { result: { taskId: string } }).result.taskId;
    const behind = await h.submit('queued behind');
    const final = await h.taskStatus(taskId, ['completed']);
    const text = final.result.content[0].text as string;
    expect(text).toContain('file: math.js (edit_file)');
    expect(text).toContain('--- a/math.js\n+++ b/math.js\n@@ -1,1 +1,1 @@\n-export const add = (a, b) => a - b;\n+export const add = (a, b) => a + b;');
    expect(readFileSync(h.file('math.js'), 'utf8')).toBe('export const add = (a, b) => a - b;\n');
    expect(fieldsOf(await h.finished(behind.task_id)).result).toBe('second task ran');
    const [expired] = await h.audit('approval.expired', taskId);
    expect(JSON.parse(expired.detail)).toMatchObject({ path: 'math.js', diff_sha256: expect.stringMatching(/^[0-9a-f]{64}$/), wait_ms: 300 });
    expect(await h.approvalsOf(taskId)).toMatchObject([{ state: 'pending' }]);

    h.ollama.enqueue({ content: 'fixed' });
    const sessionId = fieldsOf(text).session_id;
    const resumed = await h.submit('承認', sessionId);
    expect(fieldsOf(await h.finished(resumed.task_id))).toMatchObject({ status: 'completed' });
    expect(await h.statusText(resumed.task_id)).toContain('- math.js (changed, ');
    expect(readFileSync(h.file('math.js'), 'utf8')).toBe('export const add = (a, b) => a + b;\n');
  });

  it('does not apply an approved change to a file that changed after the diff was shown', async () => {
    writeFileSync(h.file('moving.txt'), 'one\n');
    h.ollama.enqueue(call('write_file', { path: 'moving.txt', content: 'two\n' }));
    const first = await h.submit('overwrite it');
    expect(await h.finished(first.task_id)).toContain('-one\n+two');
    writeFileSync(h.file('moving.txt'), 'someone else\n');
    h.ollama.enqueue({ content: 'will re-read' });
    const chatsBefore = h.ollama.workChats.length;
    await h.finished((await h.submit('yes', first.session_id)).task_id);
    expect(readFileSync(h.file('moving.txt'), 'utf8')).toBe('someone else\n');
    expect(h.ollama.workChats[chatsBefore].body.messages.at(-1)!.content).toMatch(/^Not applied: the file changed/);
  });

  it('kill -9 after the request: the pending action survives the restart and runs once on approval', async () => {
    h.ollama.enqueue(call('run_command', { command: 'echo run >> count.txt' }));
    const first = await h.submit('count once');
    expect(await h.finished(first.task_id)).toContain('command: echo run >> count.txt');
    await h.service.kill9();
    await h.service.start(h.service.port);
    await h.client.close();
    h.client = await modernClient(h.service.url);
    h.ollama.enqueue({ content: 'counted' });
    const second = await h.submit('承認', first.session_id);
    expect(fieldsOf(await h.finished(second.task_id))).toMatchObject({ status: 'completed', result: 'counted' });
    h.ollama.enqueue({ content: 'nothing pending' });
    await h.finished((await h.submit('承認', first.session_id)).task_id);
    expect(readFileSync(h.file('count.txt'), 'utf8')).toBe('run\n');
    expect(await h.approvalsOf(first.task_id)).toMatchObject([{ state: 'granted', answered_via: 'conversation' }]);
  });
});

describe('approvals behind an SSO proxy: only the session owner answers', () => {
  const alice = { 'X-Forwarded-User': 'alice@example.com' };
  const h = new Harness({ auth: { mode: 'proxy_headers', trusted_proxies: ['127.0.0.1/32', '::1/128'] }, agent: { approvals: { mode: 'commands', wait_ms: 60_000 } } }, alice);
  let bob: Client;
  let bobRaw: RawDispatch;

  beforeAll(async () => {
    bob = h.stack.closeOnStop(await modernClient(h.service.url, { 'X-Forwarded-User': 'bob@example.com' }));
    bobRaw = httpRawDispatch(h.service.url, { 'X-Forwarded-User': 'bob@example.com' });
  });

  it("refuses another user's answer in the conversation and in place; the owner's answer runs it", async () => {
    h.ollama.enqueue(call('run_command', { command: 'echo mine > mine.txt' }));
    const first = await h.submit('write mine');
    await h.finished(first.task_id);
    const refused = await bob.callTool({ name: 'agent_run', arguments: { request: '承認', session_id: first.session_id } });
    expect(refused.isError).toBe(true);
    expect(textOf(refused)).toContain(`session ${first.session_id} does not exist`);
    expect(await h.approvalsOf(first.task_id)).toMatchObject([{ state: 'pending' }]);

    h.ollama.enqueue(call('run_command', { command: 'echo inplace > alice.txt' }), { content: 'alice done' });
    const created = await h.withTasks('tools/call', { name: 'agent_run', arguments: { request: 'in place' } });
    const taskId = (created as { result: { taskId: string } }).result.taskId;
    const waiting = await h.taskStatus(taskId, ['input_required']);
    const [key] = Object.keys(waiting.inputRequests);
    const bobUpdate = await bobRaw({
      method: 'tasks/update',
      params: { taskId, inputResponses: { [key]: { action: 'accept', content: { approve: true } } }, _meta: modernMeta(true) },
    });
    expect(bobUpdate).toMatchObject({ kind: 'error', error: { code: -32602 } });
    expect((await h.taskStatus(taskId, ['input_required'])).status).toBe('input_required');
    await h.withTasks('tasks/update', { taskId, inputResponses: { [key]: { action: 'accept', content: { approve: true } } } });
    await h.taskStatus(taskId, ['completed']);
    const [{ session_id: inPlaceSession }] = await probe<{ session_id: string }>(h.db, 'SELECT session_id FROM tasks WHERE id = ?', taskId);
    expect(readFileSync(h.file('alice.txt', inPlaceSession), 'utf8')).toBe('inplace\n');
    expect(await h.approvalsOf(taskId)).toMatchObject([{ state: 'granted', answered_by: 'alice@example.com' }]);

    h.ollama.enqueue({ content: 'wrote mine' });
    await h.finished((await h.submit('承認', first.session_id)).task_id);
    expect(readFileSync(h.file('mine.txt', first.session_id), 'utf8')).toBe('mine\n');
  });
});

// Replicas share a PostgreSQL database; this suite runs in the PostgreSQL pass of `npm test`.
const describeOnPostgres = E2E_DATABASE === 'postgres' ? describe : describe.skip;

describeOnPostgres('approvals across two replicas on one PostgreSQL database', () => {
  const stack = useStack({ config: { workspace: { isolation: 'shared' }, agent: { approvals: { mode: 'commands', wait_ms: 60_000 } } } });
  const { ollama } = stack;
  const replicas: ServiceProcess[] = [];

  // The second replica runs on the same agent.yaml: one database, and one workspace, as replicas on one host share their volume.
  beforeAll(async () => void replicas.push(stack.service, await stack.startAnotherService()));

  it('takes the in-place answer on the replica that does not run the Task, and holds one active Task', async () => {
    ollama.enqueue(call('run_command', { command: 'echo across > across.txt' }), { content: 'done across' });
    const [a, b] = replicas.map((replica) => httpRawDispatch(replica.url));
    const meta = { _meta: modernMeta(true) };
    const created = await a({ method: 'tools/call', params: { name: 'agent_run', arguments: { request: 'across replicas' }, ...meta } });
    const taskId = (created as { result: { taskId: string } }).result.taskId;
    const waiting = await taskReaching(b, taskId, ['input_required']);
    const [{ lease_owner: owner }] = await probe<{ lease_owner: string }>(stack.database, 'SELECT lease_owner FROM tasks WHERE id = ?', taskId);
    const other = replicas.findIndex((replica) => !owner.includes(`/${replica.pid}/`));
    const answerer = [a, b][other];
    const [key] = Object.keys(waiting.inputRequests);
    await answerer({ method: 'tasks/update', params: { taskId, inputResponses: { [key]: { action: 'accept', content: { approve: true } } }, ...meta } });
    await taskReaching(a, taskId, ['completed']);
    expect(readFileSync(join(stack.config.workspace, 'across.txt'), 'utf8')).toBe('across\n');
    expect(ollama.maxConcurrentChats).toBe(1);
  });
});
