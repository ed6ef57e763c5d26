import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createHmac } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { useStack } from '../support/e2e-stack.js';
import { httpRawDispatch, modernMeta, type RawResponse } from '../support/mcp-clients.js';
import { EVERYTHING, stdio } from '../support/mcp-servers-stack.js';
import { ResponseSchemas, type OpenApiDocument } from '../support/openapi-responses.js';
import { ADMIN, as, PROXY_AUTH } from '../support/proxy-identity.js';
import { openBrowser } from '../support/browser.js';
import { pollUntil } from '../support/poll.js';
import { gate } from '../support/gate.js';
import { validateConfig } from '../../src/config/agent-config.js';
import { saveEvalReport } from '../../src/eval/eval-results.repository.js';
import { NO_REPAIRS, summarise, type EvalReport } from '../../src/eval/report.js';

const EVAL_REPORT: Omit<EvalReport, 'finishedAt' | 'results'> = {
  schema: 'ollama-agent-mcp.eval/1',
  serviceVersion: '0.1.0',
  startedAt: '2026-12-06T00:00:00.000Z',
  complete: true,
  settings: { repeat: 1, timeoutMs: 1000, temperature: 0, seed: 42, ollamaHost: 'http://127.0.0.1:11434', cases: ['no-tool'] },
};
const SCREENSHOTS = join(import.meta.dirname, '../../test-output/screenshots');
const ALICE = as('alice@example.com');
const NO_TASK = '00000000-0000-4000-8000-000000000000';
const call = (name: string, args: Record<string, unknown>) => ({ toolCalls: [{ name, arguments: args }], promptEvalCount: 10, evalCount: 5 });

interface Chat {
  task_id: string;
  session_id: string;
  agent_input?: { approval_id: string };
}

/**
 * Real answers of the admin API, each checked against the schema docs/openapi.json gives its route and
 * status: every required field there, no field the document does not name, each of the documented type.
 * And GET /admin/tasks/:id carries what the console's Task page shows: deliverables and approvals.
 */
describe('the admin API answers as its OpenAPI document says (auth.mode proxy_headers)', () => {
  // One operator skill, for GET /admin/skills and its reload.
  const skills = mkdtempSync(join(tmpdir(), 'oam-schemas-skills-'));
  mkdirSync(join(skills, 'release'));
  writeFileSync(join(skills, 'release', 'SKILL.md'), '---\nname: release\ndescription: How we cut a release.\n---\nSteps.\n');
  const stack = useStack({
    config: {
      auth: PROXY_AUTH,
      skills: { dirs: [skills] },
      queue: { progress_poll_ms: 20 },
      // An optional server that cannot start: listed as down, with its error; and one that asks a form.
      agent: {
        approvals: { mode: 'commands' },
        mcp_servers: {
          broken: { command: '/nonexistent/server' },
          everything: { ...stdio(EVERYTHING, ['stdio']), approval: 'never', tools: { allow: ['trigger-elicitation-request'] } },
        },
      },
    },
  });
  let schemas: ResponseSchemas;
  let wrote: Chat;
  let asked: Chat;
  let pending: Chat;
  let answerTaskId: string;
  const seen = new Set<string>();

  /** `method route` (the document's path) at `path`: answers `status`, and its body matches the documented schema. */
  const checked = async <T = Record<string, unknown>>(method: string, route: string, path: string, headers: Record<string, string>, status = 200, json?: unknown): Promise<T> => {
    const res = await fetch(`${stack.base}${path}`, {
      method,
      headers: json === undefined ? headers : { ...headers, 'Content-Type': 'application/json' },
      body: json === undefined ? undefined : JSON.stringify(json),
    });
    const answer = (await res.json()) as unknown;
    expect([method, path, res.status]).toEqual([method, path, status]);
    expect(schemas.problems(method, route, status, answer)).toEqual([]);
    seen.add(`${method} ${route} ${status}`);
    return answer as T;
  };
  const chat = async (content: string, sessionId?: string, headers = ALICE): Promise<Chat> => {
    const res = await fetch(`${stack.base}/v1/chat/completions`, {
      method: 'POST',
      headers: { ...headers, 'Content-Type': 'application/json' },
      body: JSON.stringify({ model: 'ollama-agent', messages: [{ role: 'user', content }], ...(sessionId ? { session_id: sessionId } : {}) }),
    });
    expect(res.status).toBe(200);
    return (await res.json()) as Chat;
  };
  /** The Task the console queued, once it has ended (its status is what the console itself polls). */
  const ended = (taskId: string, headers = ALICE) =>
    pollUntil(async () => {
      const task = (await (await fetch(`${stack.base}/admin/tasks/${taskId}`, { headers: { ...headers, 'X-Console-Refresh': '1' } })).json()) as { status: string };
      return ['completed', 'failed', 'cancelled'].includes(task.status) ? task : undefined;
    }, `task ${taskId} to end`);

  beforeAll(async () => {
    schemas = new ResponseSchemas((await (await fetch(`${stack.base}/admin/openapi.json`)).json()) as OpenApiDocument);
    // Alice's: a Task that writes a file twice, then in its session one that asks a question; in a session of its
    // own (a new request in the first would answer the question), one paused for a command.
    stack.ollama.enqueue(call('write_file', { path: 'notes/out.txt', content: 'hello\n' }), call('write_file', { path: 'notes/out.txt', content: 'hello world\n' }), {
      content: 'Wrote the notes.',
    });
    wrote = await chat('Write the notes.');
    stack.ollama.enqueue(call('ask_user', { question: 'Which format?', options: ['Markdown', 'Plain text'] }));
    asked = await chat('Format them.', wrote.session_id);
    stack.ollama.enqueue(call('run_command', { command: 'echo checked' }));
    pending = await chat('Check them.');
  });

  it('GET /admin/tasks/:id: the files the Task wrote, with their downloads; its approvals, pending or answered', async () => {
    const task = await checked<{ deliverables: { path: string; download_path: string }[]; approvals: unknown[]; pending_approvals: unknown[]; awaiting_approval: boolean }>(
      'GET',
      '/admin/tasks/{id}',
      `/admin/tasks/${wrote.task_id}`,
      ALICE,
    );
    expect(task.deliverables).toEqual([
      {
        path: 'notes/out.txt',
        change: 'created',
        bytes: 12,
        uri: `agent-session://${wrote.session_id}/files/notes/out.txt`,
        mime_type: 'text/plain',
        download_path: `/admin/sessions/${wrote.session_id}/files/notes/out.txt`,
      },
    ]);
    expect([task.approvals, task.pending_approvals, task.awaiting_approval]).toEqual([[], [], false]);
    const download = await fetch(`${stack.base}${task.deliverables[0].download_path}`, { headers: ALICE });
    expect([download.status, await download.text()]).toEqual([200, 'hello world\n']);

    const paused = await checked<{ approvals: { approval_id: string }[]; pending_approvals: unknown[]; awaiting_approval: boolean; deliverables: unknown[] }>(
      'GET',
      '/admin/tasks/{id}',
      `/admin/tasks/${pending.task_id}`,
      ADMIN,
    );
    expect(paused).toMatchObject({ awaiting_approval: true, deliverables: [] });
    expect(paused.approvals).toEqual(paused.pending_approvals);
    expect(paused.approvals).toMatchObject([{ tool: 'run_command', command: 'echo checked', state: 'pending', answered_by: null, answered_at: null, answer_task_id: null }]);

    // The question, answered by its owner from the console: a new Task of the session takes the answer.
    stack.ollama.enqueue({ content: 'Plain text it is.' });
    const answer = await checked<{ task_id: string }>('POST', '/admin/approvals/{id}/choices/{option}', `/admin/approvals/${asked.agent_input!.approval_id}/choices/2`, ALICE);
    expect(answer).toMatchObject({ via: 'conversation', state: 'answered_by_task', option: 2 });
    answerTaskId = answer.task_id;
    expect(await ended(answerTaskId)).toMatchObject({ status: 'completed', result: 'Plain text it is.' });
    const question = await checked<{ approvals: unknown[]; pending_approvals: unknown[] }>('GET', '/admin/tasks/{id}', `/admin/tasks/${asked.task_id}`, ALICE);
    expect(question.pending_approvals).toEqual([]);
    expect(question.approvals).toMatchObject([
      {
        approval_id: asked.agent_input!.approval_id,
        tool: 'ask_user',
        question: 'Which format?',
        options: ['Markdown', 'Plain text'],
        state: 'granted',
        reason: 'Plain text',
        answered_by: 'alice@example.com',
        answered_via: 'conversation',
        answer_task_id: answerTaskId,
        answered_at: expect.any(String),
      },
    ]);
  });

  it('the listings, the session and its files and history, usage, identity: each as documented', async () => {
    for (const headers of [ALICE, ADMIN]) {
      await checked('GET', '/admin/me', '/admin/me', headers);
      const page = await checked<{ items: { task_id: string }[] }>('GET', '/admin/tasks', '/admin/tasks?limit=2', headers);
      expect(page.items).toHaveLength(2);
      const approvals = await checked<{ items: { task_id: string }[] }>('GET', '/admin/approvals', '/admin/approvals', headers);
      expect(approvals.items.map((item) => item.task_id)).toEqual([pending.task_id]);
      await checked('GET', '/admin/sessions/{id}', `/admin/sessions/${wrote.session_id}`, headers);
      const files = await checked<{ items: { path: string; download_path: string }[] }>('GET', '/admin/sessions/{id}/files', `/admin/sessions/${wrote.session_id}/files`, headers);
      expect(files.items).toMatchObject([{ path: 'notes/out.txt', size: 12, download_path: `/admin/sessions/${wrote.session_id}/files/notes/out.txt` }]);
    }
    const waiting = await checked<{ pending: { task_id: string } }>('GET', '/admin/sessions/{id}/approval', `/admin/sessions/${pending.session_id}/approval`, ADMIN);
    expect(waiting.pending.task_id).toBe(pending.task_id);
    expect(await checked('GET', '/admin/sessions/{id}/approval', `/admin/sessions/${wrote.session_id}/approval`, ADMIN)).toMatchObject({ pending: null });
    await checked('GET', '/admin/sessions/{id}/history', `/admin/sessions/${wrote.session_id}/history`, ADMIN);
    // Usage per day (issue 39): alice's ended Tasks, today; she reads her own as the admin reads everyone's.
    for (const headers of [ALICE, ADMIN]) {
      const usage = await checked<{ days: { user: string; day: string }[] }>('GET', '/admin/usage', '/admin/usage', headers);
      expect(usage.days.map((row) => [row.user, row.day])).toEqual([['alice@example.com', new Date().toISOString().slice(0, 10)]]);
    }
    await checked('POST', '/admin/tasks/{id}/cancel', `/admin/tasks/${wrote.task_id}/cancel`, ALICE);
    // The paused command, denied by its owner: the answer becomes the next turn of its session.
    stack.ollama.enqueue({ content: 'Not checking them.' });
    const { approvals } = (await (await fetch(`${stack.base}/admin/tasks/${pending.task_id}`, { headers: ALICE })).json()) as { approvals: { approval_id: string }[] };
    const { approval_id } = approvals[0];
    const denied = await checked<{ task_id: string }>('POST', '/admin/approvals/{id}/{decision}', `/admin/approvals/${approval_id}/deny`, ALICE);
    expect(denied).toMatchObject({ approval_id, decision: 'deny', via: 'conversation' });
    expect(await ended(denied.task_id)).toMatchObject({ status: 'completed' });
  });

  it('the audit log, its events and its verification; the MCP servers, readiness and the eval results', async () => {
    const page = await checked<{ items: { seq: number }[] }>('GET', '/admin/audit', '/admin/audit?limit=20', ADMIN);
    expect(page.items.length).toBe(20);
    for (const { seq } of page.items.slice(0, 5)) await checked('GET', '/admin/audit/{seq}', `/admin/audit/${seq}`, ADMIN);
    expect(await checked('GET', '/admin/audit/verify', '/admin/audit/verify', ADMIN)).toMatchObject({ ok: true });
    const servers = await checked('GET', '/admin/mcp-servers', '/admin/mcp-servers', ADMIN);
    expect((servers as { servers: { name: string }[] }).servers.find((server) => server.name === 'broken')).toMatchObject({
      transport: 'stdio',
      required: false,
      last_error: expect.stringContaining('ENOENT'),
    });
    await checked('GET', '/admin/readyz', '/admin/readyz', ADMIN);
    // One model's npm run eval result in the stack's database, as the eval keeps it (issue 41).
    const outcome = { passed: true, failed: [], modelCalls: 2, promptTokens: 50, outputTokens: 5, wallMs: 9, repairs: { ...NO_REPAIRS } };
    const evaluated = { ...EVAL_REPORT, finishedAt: new Date().toISOString(), results: [summarise('qwen3:8b', 'service', [{ id: 'no-tool', kind: 'k', runs: [outcome] }])] };
    await saveEvalReport(validateConfig({ database: stack.database }).database, evaluated);
    expect(await checked('GET', '/admin/eval-results', '/admin/eval-results', ADMIN)).toMatchObject({
      items: [{ model: 'qwen3:8b', harness: 'service', pass_at_1: 1, model_calls: 2 }],
    });
    const release = { name: 'release', description: 'How we cut a release.', origin: 'operator', allow_groups: [], files: ['SKILL.md'] };
    expect(await checked('GET', '/admin/skills', '/admin/skills', ALICE)).toEqual({ skills: [release] });
    expect(await checked('POST', '/admin/skills/reload', '/admin/skills/reload', ADMIN)).toEqual({ skills: [release] });
    await checked('POST', '/admin/skills/reload', '/admin/skills/reload', ALICE, 403);
  });

  it('undo and fork of a session (its owner, an admin): queued and created as documented; the undo Task lists the file it restored', async () => {
    stack.ollama.enqueue(call('write_file', { path: 'carol.txt', content: 'draft\n' }), { content: 'Drafted.' });
    const drafted = await chat('Draft it.', undefined, ADMIN);
    const undo = await checked<{ task_id: string; paths: string[] }>(
      'POST',
      '/admin/sessions/{id}/undo',
      `/admin/sessions/${drafted.session_id}/undo?task_id=${drafted.task_id}`,
      ADMIN,
      202,
    );
    expect(undo).toMatchObject({ undo_of: drafted.task_id, paths: ['carol.txt'] });
    expect(await ended(undo.task_id, ADMIN)).toMatchObject({ status: 'completed' });
    const undone = await checked<{ deliverables: unknown[] }>('GET', '/admin/tasks/{id}', `/admin/tasks/${undo.task_id}`, ADMIN);
    expect(undone.deliverables).toMatchObject([{ path: 'carol.txt', change: 'restored', bytes: null }]);
    const fork = await checked('POST', '/admin/sessions/{id}/fork', `/admin/sessions/${drafted.session_id}/fork?task_id=${drafted.task_id}`, ADMIN, 201);
    expect(fork).toMatchObject({ forked_from: { session_id: drafted.session_id, task_id: drafted.task_id }, not_restorable: [] });
  });

  it('refusals carry the documented error body', async () => {
    await checked('GET', '/admin/tasks/{id}', `/admin/tasks/${NO_TASK}`, ALICE, 404);
    await checked('GET', '/admin/tasks/{id}', '/admin/tasks/not-a-task', ALICE, 400);
    await checked('GET', '/admin/audit', '/admin/audit', ALICE, 403);
    await checked('GET', '/admin/audit', '/admin/audit', {}, 401);
    await checked('GET', '/admin/sessions/{id}/files', `/admin/sessions/${NO_TASK}/files`, ADMIN, 404);
  });

  describe('the console reads them from GET /admin/tasks/:id', () => {
    let browser: Browser;
    beforeAll(async () => {
      mkdirSync(SCREENSHOTS, { recursive: true });
      browser = await openBrowser();
    });
    afterAll(() => browser?.close());

    it('shows the deliverables (downloadable) and the answered approvals with who answered and how', async () => {
      const page = await (await browser.newContext({ extraHTTPHeaders: ALICE })).newPage();
      page.setDefaultTimeout(10_000);
      await page.goto(`${stack.base}/admin#/tasks/${wrote.task_id}`);
      await page.waitForSelector('#deliverables li');
      expect(await page.textContent('#deliverables li')).toBe('notes/out.txt created, 12 bytes · text/plain');
      const [download] = await Promise.all([page.waitForEvent('download'), page.click('#deliverables button')]);
      expect(readFileSync(await download.path(), 'utf8')).toBe('hello world\n');
      await page.screenshot({ path: join(SCREENSHOTS, 'admin-task-deliverables.png'), fullPage: true });

      await page.goto(`${stack.base}/admin#/tasks/${asked.task_id}`);
      await page.waitForSelector('#answered-approvals li');
      const answered = await page.textContent('#answered-approvals li');
      expect(answered).toContain('The agent asked: Which format?');
      expect(answered).toContain('answered: Plain text');
      expect(answered).toContain('by alice@example.com (in the conversation)');
      expect(answered).toContain(`Task ${answerTaskId.slice(0, 8)}`);
      expect(await page.textContent('#pending-approvals')).toContain('None.');
      await page.screenshot({ path: join(SCREENSHOTS, 'admin-task-answered-approvals.png'), fullPage: true });
      await page.context().close();
    });
  });

  it("POST /admin/approvals/:id/form: its owner fills another server's form that a Task waits for, drawn from form_schema", async () => {
    const raw = httpRawDispatch(stack.service.url, ALICE);
    const withTasks = (method: string, params: Record<string, unknown>): Promise<RawResponse> => raw({ method, params: { ...params, _meta: modernMeta(true) } });
    stack.ollama.enqueue(call('everything__trigger-elicitation-request', {}), { content: 'Thanks for the details.' });
    const created = (await withTasks('tools/call', { name: 'agent_run', arguments: { request: 'Ask me for my details.' } })) as { result: { taskId: string } };
    const taskId = created.result.taskId;
    const key = await pollUntil(async () => {
      const got = await withTasks('tasks/get', { taskId });
      return got.kind === 'result' && got.result.status === 'input_required' ? Object.keys(got.result.inputRequests as Record<string, unknown>)[0] : undefined;
    }, `task ${taskId} input_required with the form`);
    const task = await checked<{ pending_approvals: unknown[] }>('GET', '/admin/tasks/{id}', `/admin/tasks/${taskId}`, ALICE);
    expect(task.pending_approvals).toMatchObject([{ approval_id: key, tool: 'mcp_elicitation', server: 'everything', form_schema: { type: 'object', required: ['name'] } }]);
    const content = encodeURIComponent(JSON.stringify({ name: 'Alice' }));
    const answer = await checked('POST', '/admin/approvals/{id}/form', `/admin/approvals/${key}/form?content=${content}`, ALICE);
    expect(answer).toEqual({ approval_id: key, via: 'in_place', state: 'granted', task_id: taskId });
    // A second answer is refused as decided, and changes nothing.
    await checked('POST', '/admin/approvals/{id}/form', `/admin/approvals/${key}/form?content=${content}`, ALICE, 409);
    expect(await ended(taskId)).toMatchObject({ status: 'completed', result: 'Thanks for the details.' });
  });

  it('the console conversation view: its options, and a request typed there queued as a Task (202)', async () => {
    const options = await checked<{ models: string[]; fork: boolean }>('GET', '/admin/conversation/options', '/admin/conversation/options', ALICE);
    expect(options.models[0]).toBe('ollama-agent');
    stack.ollama.enqueue({ content: 'Typed in the console.' });
    const queued = await checked<{ task_id: string }>('POST', '/admin/conversation', '/admin/conversation', ALICE, 202, {
      model: 'ollama-agent',
      messages: [{ role: 'user', content: 'Hello from the console' }],
    });
    expect(await ended(queued.task_id)).toMatchObject({ status: 'completed', result: 'Typed in the console.' });
    const refused = await fetch(`${stack.base}/admin/conversation`, { method: 'POST', headers: ALICE, body: '{"model":"ollama-agent","messages":[]}' });
    expect([refused.status, ((await refused.json()) as { error: string }).error]).toEqual([400, 'invalid_type']);
  });

  it('POST /admin/tasks/:id/steer: its owner corrects the running Task (issue 35), which reads it before it ends', async () => {
    const held = gate();
    stack.ollama.enqueue({ content: 'A long summary.', heldUntil: held.opened }, { content: 'Short.' });
    const running = chat('Summarise the notes.');
    await stack.ollama.until(() => stack.ollama.activeChats === 1);
    const { items } = (await (await fetch(`${stack.base}/admin/tasks?limit=1`, { headers: ALICE })).json()) as { items: { task_id: string }[] };
    const steered = await checked<{ task_id: string; status: string }>('POST', '/admin/tasks/{id}/steer', `/admin/tasks/${items[0].task_id}/steer?text=Keep%20it%20short.`, ALICE);
    expect(steered.task_id).toBe(items[0].task_id);
    held.open();
    expect(await running).toMatchObject({ task_id: items[0].task_id });
    expect(stack.ollama.workChats.at(-1)!.body.messages.at(-1)!.content).toBe('Correction from the user while you work:\nKeep it short.');
  });

  it('schedules and triggers and their runs (issue 38): each as documented', async () => {
    const schedule = await checked<{ id: string }>('POST', '/admin/schedules', '/admin/schedules', ALICE, 201, { name: 'documented', cron: '0 0 1 1 *', request: 'Report' });
    const at = `/admin/schedules/${schedule.id}`;
    await checked('GET', '/admin/schedules', '/admin/schedules', ALICE);
    await checked('GET', '/admin/schedules/{id}', at, ALICE);
    await checked('PATCH', '/admin/schedules/{id}', at, ALICE, 200, { enabled: false, timezone: 'Asia/Tokyo' });
    const run = await checked<{ task_id: string }>('POST', '/admin/schedules/{id}/run', `${at}/run`, ALICE);
    await ended(run.task_id);
    await checked('GET', '/admin/schedules/{id}/runs', `${at}/runs`, ALICE);
    await checked('DELETE', '/admin/schedules/{id}', at, ALICE);
    const trigger = await checked<{ id: string; path: string; secret: string }>('POST', '/admin/triggers', '/admin/triggers', ALICE, 201, {
      name: 'documented',
      kind: 'github',
      request: 'Triage {{event}}',
    });
    const body = '{"zen":"Keep it logically awesome."}';
    const delivered = await fetch(`${stack.base}${trigger.path}`, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/json',
        'X-GitHub-Event': 'ping',
        'X-GitHub-Delivery': NO_TASK,
        'X-Hub-Signature-256': `sha256=${createHmac('sha256', trigger.secret).update(body).digest('hex')}`,
      },
      body,
    });
    expect(delivered.status).toBe(202);
    await ended(((await delivered.json()) as { task_id: string }).task_id);
    const triggerAt = `/admin/triggers/${trigger.id}`;
    await checked('GET', '/admin/triggers', '/admin/triggers', ALICE);
    await checked('GET', '/admin/triggers/{id}', triggerAt, ALICE);
    await checked('PATCH', '/admin/triggers/{id}', triggerAt, ALICE, 200, { enabled: false });
    await checked('GET', '/admin/triggers/{id}/runs', `${triggerAt}/runs`, ALICE);
    await checked('DELETE', '/admin/triggers/{id}', triggerAt, ALICE);
  });

  it('checked a real answer of every admin route and success status the document gives a JSON schema', async () => {
    const document = (await (await fetch(`${stack.base}/admin/openapi.json`)).json()) as OpenApiDocument;
    const promised = Object.entries(document.paths)
      .filter(([path]) => path.startsWith('/admin/'))
      .flatMap(([path, methods]) =>
        Object.entries(methods).flatMap(([method, operation]) =>
          Object.entries(operation.responses)
            .filter(([status, response]) => /^2/.test(status) && response.content?.['application/json'])
            .map(([status]) => `${method.toUpperCase()} ${path} ${status}`),
        ),
      );
    expect(promised.filter((route) => !seen.has(route))).toEqual([]);
  });
});
