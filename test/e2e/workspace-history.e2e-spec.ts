import { beforeAll, describe, expect, it } from '@jest/globals';
import type { Client } from '@modelcontextprotocol/client';
import { randomUUID } from 'node:crypto';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { ClientFactory } from '@a2a-js/sdk/client';
import type { Task } from '@a2a-js/sdk';
import { runTask, statusText, toolCall as call } from '../support/agent-tasks.js';
import { a2aSend, a2aText } from '../support/a2a-clients.js';
import { useStack } from '../support/e2e-stack.js';
import { pollUntil } from '../support/poll.js';
import { fieldsOf, textOf, waitForTerminal } from '../support/mcp-clients.js';
import { ADMIN_GROUP, as } from '../support/proxy-identity.js';
import { useProxiedStack } from '../support/proxy-service.js';
import { openBrowser } from '../support/browser.js';

const ALICE_ADMIN = as('alice@example.com', `dev, ${ADMIN_GROUP}`);
const BOB_ADMIN = as('bob@example.com', `dev, ${ADMIN_GROUP}`);
/** history.dir in the stack's folder: its default for PostgreSQL is ./data/history, under the checkout. */
const HISTORY = (_ollamaUrl: string, _base: string, dir: string) => ({ history: { dir: join(dir, 'history') } });

describe('workspace history: every Task as a diff, undo, fork (scripted model, real commands in the sandbox)', () => {
  const stack = useProxiedStack({ config: HISTORY });
  const { ollama } = stack;
  let alice: Client;
  let bob: Client;
  let base: string;
  let session: string;
  let seedTask: string;
  let editTask: string;

  beforeAll(() => void ({ base, alice, bob } = stack));

  const run = async (client: Client, request: string, sessionId?: string) => {
    const task = await runTask(client, request, sessionId);
    return { ...task, final: task.final.status };
  };
  const readDiff = async (client: Client, sessionId: string, taskId: string) => {
    const read = await client.readResource({ uri: `agent-session://${sessionId}/tasks/${taskId}/diff` });
    const content = read.contents[0] as { mimeType: string; text: string };
    expect(content.mimeType).toBe('text/x-diff');
    return content.text;
  };
  const file = (name: string, sessionId = session) => join(stack.config.workspace, 'sessions', sessionId, name);
  const admin = (path: string, headers: Record<string, string>, query?: Record<string, string>) =>
    fetch(`${base}/admin/${path}${query ? `?${new URLSearchParams(query)}` : ''}`, { method: query === undefined ? 'GET' : 'POST', headers });

  it('shows a Task that edits two files, deletes one and writes one by a command, all in its diff', async () => {
    ollama.enqueue(
      call('write_file', { path: 'a.txt', content: 'alpha\nbeta\n' }),
      call('write_file', { path: 'b.txt', content: 'one\n' }),
      call('write_file', { path: 'c.txt', content: 'to delete\n' }),
      call('run_command', { command: 'chmod 600 b.txt' }),
      { content: 'seeded' },
    );
    const seed = await run(alice, 'seed three files');
    session = seed.session_id;
    seedTask = seed.task_id;
    expect(seed.text).toContain(`diff: agent-session://${session}/tasks/${seedTask}/diff`);

    ollama.enqueue(
      call('edit_file', { path: 'a.txt', old_text: 'beta', new_text: 'BETA' }),
      call('write_file', { path: 'b.txt', content: 'one\ntwo\n' }),
      call('run_command', { command: 'rm c.txt && printf made > made.txt && chmod 755 made.txt' }),
      { content: 'edited' },
    );
    const edit = await run(alice, 'edit a and b, delete c, make a file', session);
    editTask = edit.task_id;
    expect(edit.final).toBe('completed');
    const diff = await readDiff(alice, session, editTask);
    expect(diff).toContain('diff --git a/a.txt b/a.txt\n');
    expect(diff).toContain('-beta\n+BETA\n');
    expect(diff).toContain('diff --git a/b.txt b/b.txt\n');
    expect(diff).toContain('+two\n');
    expect(diff).toContain('diff --git a/c.txt b/c.txt\ndeleted file mode 100644\n');
    expect(diff).toContain('diff --git a/made.txt b/made.txt\nnew file mode 100755\n');
    const viaAdmin = await admin(`tasks/${editTask}/diff`, ALICE_ADMIN);
    expect(viaAdmin.headers.get('content-type')).toContain('text/x-diff');
    expect(await viaAdmin.text()).toBe(diff);
  });

  it('keeps another user out: no diff, no undo, no fork', async () => {
    const refused = await readDiff(bob, session, editTask).then(
      () => null,
      (error: Error) => error.message,
    );
    expect(refused).toMatch(/^Resource not found: /);
    // An unknown Task of one's own session gets the same answer as another user's (issue 37).
    const unknown = randomUUID();
    await expect(readDiff(alice, session, unknown)).rejects.toThrow(refused!.replace(editTask, unknown));
    expect((await admin(`sessions/${session}/undo`, BOB_ADMIN, {})).status).toBe(404);
    expect((await admin(`sessions/${session}/fork`, BOB_ADMIN, { task_id: editTask })).status).toBe(404);
    const chat = await fetch(`${base}/v1/chat/completions`, {
      method: 'POST',
      headers: { ...as('bob@example.com'), 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'ollama-agent', fork_from: editTask, messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(chat.status).toBe(400);
  });

  it('undo restores byte for byte and file modes, and a second undo undoes the Task before', async () => {
    const undo = await run(alice, 'undo', session);
    expect(undo.final).toBe('completed');
    expect(undo.text).toContain(`undid task ${editTask}`);
    expect(readFileSync(file('a.txt'), 'utf8')).toBe('alpha\nbeta\n');
    expect(readFileSync(file('b.txt'), 'utf8')).toBe('one\n');
    expect(statSync(file('b.txt')).mode & 0o777).toBe(0o600);
    expect(readFileSync(file('c.txt'), 'utf8')).toBe('to delete\n');
    expect(existsSync(file('made.txt'))).toBe(false);
    expect(await readDiff(alice, session, undo.task_id)).toContain('+beta\n');

    const second = await run(alice, '元に戻す', session);
    expect(second.text).toContain(`undid task ${seedTask}`);
    expect(existsSync(file('a.txt'))).toBe(false);
    const third = await run(alice, 'undo', session);
    expect(third.final).toBe('failed');
    expect(third.text).toContain('Nothing to undo');
  });

  it('refuses to undo a Task whose files a later Task changed, naming them', async () => {
    ollama.enqueue(call('write_file', { path: 'x.txt', content: 'first\n' }), { content: 'ok' });
    const first = await run(alice, 'write x', session);
    ollama.enqueue(call('run_command', { command: 'echo second >> x.txt' }), { content: 'ok' });
    const later = await run(alice, 'append to x', session);
    const refused = await run(alice, `undo ${first.task_id}`, session);
    expect(refused.final).toBe('failed');
    expect(refused.text).toContain('Undo refused: "x.txt" changed by later task(s)');
    expect(refused.text).toContain(later.task_id);
    const viaAdmin = await admin(`sessions/${session}/undo`, ALICE_ADMIN, { task_id: first.task_id });
    expect(viaAdmin.status).toBe(400);
    expect(readFileSync(file('x.txt'), 'utf8')).toBe('first\nsecond\n');
  });

  it('forks a session at a Task into an independent workspace and conversation', async () => {
    const listing = await admin(`sessions/${session}/history`, ALICE_ADMIN);
    const history = (await listing.json()) as { tasks: { task_id: string }[] };
    const atTask = history.tasks.at(-2)!.task_id;
    const forked = await admin(`sessions/${session}/fork`, ALICE_ADMIN, { task_id: atTask });
    expect([forked.status, forked.status === 201 ? '' : await forked.text()]).toEqual([201, '']);
    const { session_id: fork } = (await forked.json()) as { session_id: string };
    expect(readFileSync(file('x.txt', fork), 'utf8')).toBe('first\nsecond\n');
    ollama.enqueue(call('write_file', { path: 'x.txt', content: 'fork only\n' }), { content: 'ok' });
    const inFork = await run(alice, 'change x in the fork', fork);
    expect(inFork.final).toBe('completed');
    expect(readFileSync(file('x.txt', fork), 'utf8')).toBe('fork only\n');
    expect(readFileSync(file('x.txt'), 'utf8')).toBe('first\nsecond\n');

    ollama.enqueue(call('write_file', { path: 'chat.txt', content: 'from the chat fork\n' }), { content: 'forked by chat' });
    const chat = await fetch(`${base}/v1/chat/completions`, {
      method: 'POST',
      headers: { ...as('alice@example.com'), 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'ollama-agent', fork_from: atTask, messages: [{ role: 'user', content: 'what is in x?' }] }),
    });
    expect(chat.status).toBe(200);
    const completion = (await chat.json()) as { session_id: string; choices: { message: { content: string } }[] };
    expect(completion.session_id).not.toBe(session);
    expect(completion.choices[0].message.content).toMatch(new RegExp(`diff: agent-session://${completion.session_id}/tasks/[0-9a-f-]{36}/diff$`));
    expect(readFileSync(file('x.txt', completion.session_id), 'utf8')).toBe('first\nsecond\n');
  });
});

describe('workspace history across a kill -9 during a checkpoint', () => {
  const stack = useStack({ config: HISTORY });
  const { ollama } = stack;

  it('leaves a workspace the next Task can use, and a history that says what happened', async () => {
    const { service } = stack;
    let client = await stack.mcpClient();
    // One pipeline, not a process per file: 1 000 files of 16 KiB (many/f0001 to many/f1000). The kill lands while the
    // marker says the end checkpoint is under way (polled every 2 ms); each of the checkpoints and the fork after it
    // reads all of them again, so more files only make the test slower.
    ollama.enqueue(call('run_command', { command: 'mkdir many && head -c 16384000 /dev/urandom | split -b 16384 -a 4 --numeric-suffixes=1 - many/f' }), { content: 'made' });
    const accepted = fieldsOf(textOf(await client.callTool({ name: 'agent_run', arguments: { request: 'make many files' } })));
    const marker = join(stack.config.dir, 'history', 'sessions', `${accepted.session_id}.git`, 'oam-task.json');
    await pollUntil(async () => (existsSync(marker) && readFileSync(marker, 'utf8').includes('"phase":"after"')) || undefined, 'the end checkpoint', {
      timeoutMs: 90_000,
      everyMs: 2,
    });
    await service.kill9();

    await service.start(service.port);
    client = await stack.mcpClient();
    const status = (taskId: string) => statusText(client, taskId);
    expect((await waitForTerminal(status, accepted.task_id)).status).toBe('failed');
    ollama.enqueue(call('write_file', { path: 'after.txt', content: 'fine\n' }), { content: 'ok' });
    const next = fieldsOf(textOf(await client.callTool({ name: 'agent_run', arguments: { request: 'write after', session_id: accepted.session_id } })));
    // Its start settles the interrupted end checkpoint and checkpoints the 1 000 files (16 MiB) again: at load 10 that
    // took longer than the usual 15 s (with 3 000 files).
    expect((await waitForTerminal(status, next.task_id, 90_000)).status).toBe('completed');
    expect(readFileSync(join(stack.config.workspace, 'sessions', accepted.session_id, 'after.txt'), 'utf8')).toBe('fine\n');

    const read = await client.readResource({ uri: `agent-session://${accepted.session_id}/tasks/${accepted.task_id}/diff` });
    const diff = (read.contents[0] as { text: string }).text;
    expect(diff).toContain('# interrupted: the service stopped during its end checkpoint');
    expect(diff).toContain('diff --git a/many/f0001 b/many/f0001\nnew file mode 100644\n');
    const nextDiff = (await client.readResource({ uri: `agent-session://${accepted.session_id}/tasks/${next.task_id}/diff` })).contents[0] as { text: string };
    expect(nextDiff.text).toContain('+fine');
    expect(nextDiff.text).not.toContain('many/');

    // A fork over A2A (message metadata fork_from): a new context whose workspace is the Task's end.
    ollama.enqueue(call('write_file', { path: 'a2a.txt', content: 'from the a2a fork\n' }), { content: 'forked over a2a' });
    const a2a = await new ClientFactory().createFromUrl(stack.base);
    const message = a2aSend([a2aText('continue in a fork')]);
    message.message.metadata = { fork_from: next.task_id };
    const forked = (await a2a.sendMessage(message)) as Task;
    expect(forked.contextId).not.toBe(accepted.session_id);
    expect(readFileSync(join(stack.config.workspace, 'sessions', forked.contextId, 'after.txt'), 'utf8')).toBe('fine\n');
    expect(existsSync(join(stack.config.workspace, 'sessions', forked.contextId, 'many', 'f0001'))).toBe(true);
    const answer = forked.artifacts.find((artifact) => artifact.name === 'answer')?.parts[0]?.content;
    expect(answer).toMatchObject({ $case: 'text', value: expect.stringContaining(`diff: agent-session://${forked.contextId}/tasks/${forked.id}/diff`) });
  }, 180_000);
});

describe('workspace history with workspace.isolation: shared, and a fork over A2A', () => {
  const stack = useStack({ config: (ollamaUrl, base, dir) => ({ workspace: { isolation: 'shared' }, ...HISTORY(ollamaUrl, base, dir) }) });
  const { ollama } = stack;
  let client: Client;

  beforeAll(async () => void (client = await stack.mcpClient()));

  it('covers the shared root, says so in the diff, undoes there, and refuses a fork (there is one workspace)', async () => {
    const status = async (taskId: string) => textOf(await client.callTool({ name: 'agent_status', arguments: { task_id: taskId } }));
    ollama.enqueue(call('write_file', { path: 'shared.txt', content: 'in the root\n' }), { content: 'ok' });
    const accepted = fieldsOf(textOf(await client.callTool({ name: 'agent_run', arguments: { request: 'write in the root' } })));
    expect((await waitForTerminal(status, accepted.task_id)).status).toBe('completed');
    const diff = (await client.readResource({ uri: `agent-session://${accepted.session_id}/tasks/${accepted.task_id}/diff` })).contents[0] as { text: string };
    expect(diff.text).toMatch(/^# workspace: the shared root \(workspace.isolation: shared\)/);
    expect(diff.text).toContain('diff --git a/shared.txt b/shared.txt\nnew file mode 100644\n');
    const undo = fieldsOf(textOf(await client.callTool({ name: 'agent_run', arguments: { request: 'undo', session_id: accepted.session_id } })));
    expect((await waitForTerminal(status, undo.task_id)).status).toBe('completed');
    expect(existsSync(join(stack.config.workspace, 'shared.txt'))).toBe(false);

    const a2a = await new ClientFactory().createFromUrl(stack.base);
    const message = a2aSend([a2aText('fork it')]);
    message.message.metadata = { fork_from: accepted.task_id };
    await expect(a2a.sendMessage(message)).rejects.toThrow(/forking needs workspace.isolation: session/);
  });
});

describe("the console's Task page shows the Task's diff", () => {
  const TOKEN = 'history-console-token-0123456789';
  const stack = useStack({ config: (ollamaUrl, base, dir) => ({ auth: { admin_token: TOKEN }, ...HISTORY(ollamaUrl, base, dir) }) });
  const { ollama } = stack;

  it('per file, foldable, inline or side by side', async () => {
    const root = stack.config.workspace;
    const client = await stack.mcpClient();
    const browser = await openBrowser();
    try {
      const status = async (taskId: string) => textOf(await client.callTool({ name: 'agent_status', arguments: { task_id: taskId } }));
      ollama.enqueue(call('write_file', { path: 'notes.txt', content: 'first\n' }), call('write_file', { path: 'other.txt', content: 'x\n' }), { content: 'ok' });
      const first = fieldsOf(textOf(await client.callTool({ name: 'agent_run', arguments: { request: 'write notes' } })));
      await waitForTerminal(status, first.task_id);
      ollama.enqueue(call('edit_file', { path: 'notes.txt', old_text: 'first', new_text: 'first\nsecond' }), call('run_command', { command: 'rm other.txt' }), { content: 'ok' });
      const edit = fieldsOf(textOf(await client.callTool({ name: 'agent_run', arguments: { request: 'add a line', session_id: first.session_id } })));
      await waitForTerminal(status, edit.task_id);

      const page = await browser.newPage({ viewport: { width: 1360, height: 900 } });
      page.setDefaultTimeout(10_000);
      await page.goto(`${stack.base}/admin#/tasks/${edit.task_id}`);
      await page.waitForSelector('#token');
      await page.fill('#token', TOKEN);
      await page.press('#token', 'Enter');
      await page.waitForSelector('#task-diff details.diff-file');
      const summaries = await page.$$eval('#task-diff details.diff-file > summary', (nodes) => nodes.map((node) => node.textContent));
      expect(summaries).toEqual(['notes.txt', expect.stringMatching(/^other.txt · deleted file mode 100644/)]);
      expect(await page.$$eval('#task-diff pre.diff span.add', (nodes) => nodes.map((node) => node.textContent))).toContain('+second\n');
      await page.click('#diff-mode');
      await page.waitForSelector('#task-diff table.diff-sbs');
      expect(await page.$$eval('#task-diff table.diff-sbs td.add', (nodes) => nodes.map((node) => node.textContent))).toContain('second');
      await page.click('#task-diff details.diff-file > summary');
      expect(await page.$eval('#task-diff details.diff-file', (node) => (node as HTMLDetailsElement).open)).toBe(false);

      // Undo from the console: a new Task of the session, which puts the files back.
      const dialogs: string[] = [];
      page.on('dialog', (dialog) => void (dialogs.push(dialog.message()), dialog.accept()));
      await page.click('#task-diff button:has-text("Undo")');
      await page.waitForFunction((old) => /^#\/tasks\/[0-9a-f-]{36}$/.test(location.hash) && !location.hash.endsWith(old), edit.task_id);
      expect(dialogs).toEqual([expect.stringMatching(/^Undo \(Task [0-9a-f]{8}\)\?$/)]);
      const undoTask = (await page.evaluate(() => location.hash)).split('/').at(-1)!;
      expect((await waitForTerminal(status, undoTask)).status).toBe('completed');
      expect(readFileSync(join(root, 'sessions', first.session_id, 'notes.txt'), 'utf8')).toBe('first\n');
      expect(readFileSync(join(root, 'sessions', first.session_id, 'other.txt'), 'utf8')).toBe('x\n');
    } finally {
      await browser.close();
    }
  }, 120_000);
});

describe('approvals in changes mode show the same diff as the history', () => {
  const stack = useStack({ config: (ollamaUrl, base, dir) => ({ agent: { approvals: { mode: 'changes', wait_ms: 0 } }, ...HISTORY(ollamaUrl, base, dir) }) });
  const { ollama } = stack;

  it("an approved edit's diff is the hunk the approval showed", async () => {
    const client = await stack.mcpClient();
    const submit = (request: string, sessionId?: string) => runTask(client, request, sessionId);
    ollama.enqueue(call('write_file', { path: 'a.txt', content: 'one\ntwo\nthree\n' }));
    const create = await submit('create a');
    ollama.enqueue({ content: 'created' });
    await submit('承認', create.session_id);
    ollama.enqueue(call('edit_file', { path: 'a.txt', old_text: 'two', new_text: 'TWO' }));
    const edit = await submit('edit a', create.session_id);
    const shown = /--- a\/a\.txt\n\+\+\+ b\/a\.txt\n(?:[ @+-].*(?:\n|$))+/.exec(edit.text)?.[0].trimEnd();
    expect(shown).toBe('--- a/a.txt\n+++ b/a.txt\n@@ -1,3 +1,3 @@\n one\n-two\n+TWO\n three');
    ollama.enqueue({ content: 'edited' });
    const approved = await submit('承認', create.session_id);
    expect(readFileSync(join(stack.config.workspace, 'sessions', create.session_id, 'a.txt'), 'utf8')).toBe('one\nTWO\nthree\n');
    const diff = (await client.readResource({ uri: `agent-session://${create.session_id}/tasks/${approved.task_id}/diff` })).contents[0] as { text: string };
    expect(diff.text).toContain(`diff --git a/a.txt b/a.txt\nindex `);
    expect(diff.text).toContain(`${shown}\n`);
  }, 120_000);
});
