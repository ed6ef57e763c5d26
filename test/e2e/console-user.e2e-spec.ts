import { beforeAll, describe, expect, it } from '@jest/globals';
import type { Client } from '@modelcontextprotocol/client';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { probe, type DatabaseTarget } from '../support/database-probe.js';
import { useStack } from '../support/e2e-stack.js';
import { fieldsOf, modernClient, textOf, waitForTerminal } from '../support/mcp-clients.js';
import { ADMIN, as, PROXY_AUTH } from '../support/proxy-identity.js';
import { openBrowser } from '../support/browser.js';

const SCREENSHOTS = join(import.meta.dirname, '../../test-output/screenshots');
const ALICE = as('alice@example.com');
const call = (name: string, args: Record<string, unknown>) => ({ toolCalls: [{ name, arguments: args }], promptEvalCount: 30, evalCount: 10 });

/** The console behind an SSO proxy: every user their own view, admins everyone's; approvals answered from the page. */
describe('the console for every signed-in user (auth.mode proxy_headers)', () => {
  const stack = useStack({ config: { auth: PROXY_AUTH, agent: { approvals: { mode: 'commands', wait_ms: 60_000 } } } });
  const { ollama } = stack;
  let base: string;
  let db: DatabaseTarget;
  let alice: Client;
  let bob: Client;
  let browser: Browser;
  let paused: { task_id: string; session_id: string };
  let bobTask: string;
  let planless: string;

  const submit = async (client: Client, request: string, sessionId?: string) => {
    const accepted = fieldsOf(textOf(await client.callTool({ name: 'agent_run', arguments: { request, ...(sessionId ? { session_id: sessionId } : {}) } })));
    await waitForTerminal(async (id) => textOf(await client.callTool({ name: 'agent_status', arguments: { task_id: id } })), accepted.task_id);
    return accepted as { task_id: string; session_id: string };
  };
  const api = (path: string, headers: Record<string, string>, init: RequestInit = {}) => fetch(`${base}/admin/${path}`, { ...init, headers });
  const context = (headers: Record<string, string>, options: Parameters<Browser['newContext']>[0] = {}): Promise<BrowserContext> =>
    browser.newContext({ extraHTTPHeaders: headers, viewport: { width: 1300, height: 900 }, ...options });
  const shot = (page: Page, name: string) => page.screenshot({ path: join(SCREENSHOTS, `${name}.png`), fullPage: true });
  const auditCount = async (action: string, actor: string) =>
    Number((await probe<{ n: number }>(db, 'SELECT COUNT(*) AS n FROM audit_events WHERE action = ? AND actor = ?', action, actor))[0].n);

  beforeAll(async () => {
    mkdirSync(SCREENSHOTS, { recursive: true });
    ({ base, database: db } = stack);
    alice = stack.closeOnStop(await modernClient(stack.service.url, ALICE));
    bob = stack.closeOnStop(await modernClient(stack.service.url, as('bob@example.com')));
    // Alice: a plain answer, one whose plan could not be read (the fallback), and one paused for approval.
    // A plan call the core cannot use (as a small model makes at times): the model is told and answers without one.
    ollama.enqueue(
      call('plan', {
        subtasks: [
          { id: 'a', title: 'Read', instructions: 'Read it.', depends_on: ['nowhere'] },
          { id: 'b', title: 'Fix', instructions: 'Fix it.', depends_on: ['a'] },
        ],
      }),
      { content: 'The tests fail because of a typo. 日本語の説明もできます。', promptEvalCount: 90, evalCount: 30 },
    );
    planless = (await submit(alice, 'Why do the tests fail?')).task_id;
    ollama.enqueue(call('run_command', { command: 'npm test' }));
    paused = await submit(alice, 'Run the tests please');
    ollama.enqueue({ content: 'bob answer', promptEvalCount: 5, evalCount: 5 });
    bobTask = (await submit(bob, 'Bob’s secret request')).task_id;
    browser = stack.closeOnStop(await openBrowser());
  });

  it('gives a user their own Tasks only, with the surface, and answers another user’s as missing', async () => {
    const mine = (await (await api('tasks', ALICE)).json()) as { items: { owner: string; surface: string; awaiting_approval: boolean; task_id: string }[] };
    expect(mine.items.map((task) => task.owner)).toEqual(['alice@example.com', 'alice@example.com']);
    expect(mine.items.every((task) => task.surface === 'mcp-http')).toBe(true);
    expect(mine.items.find((task) => task.task_id === paused.task_id)?.awaiting_approval).toBe(true);
    // An owner filter cannot widen a user's view.
    expect(((await (await api('tasks?owner=bob@example.com', ALICE)).json()) as { items: unknown[] }).items.map((t: any) => t.owner)).not.toContain('bob@example.com');
    expect((await api(`tasks/${bobTask}`, ALICE)).status).toBe(404);
    expect((await api(`tasks/${bobTask}/cancel`, ALICE, { method: 'POST' })).status).toBe(404);
    // A Task's diff is an own view too (the Task page reads it): her own, and Bob's answers as missing.
    const diff = await api(`tasks/${planless}/diff`, ALICE);
    expect([diff.status, diff.headers.get('content-type')]).toEqual([200, 'text/x-diff; charset=utf-8']);
    expect((await api(`tasks/${bobTask}/diff`, ALICE)).status).toBe(404);
    expect((await api(`sessions/${paused.session_id}/files`, as('bob@example.com'))).status).toBe(404);
    expect((await api('audit', ALICE)).status).toBe(403);
    // Usage is everyone's own (issue 39): alice reads hers, never bob's.
    const hers = (await (await api('usage', ALICE)).json()) as { user: string; days: { user: string }[] };
    expect(hers.user).toBe('alice@example.com');
    expect(hers.days.every((day) => day.user === 'alice@example.com')).toBe(true);
    expect(((await (await api('me', ALICE)).json()) as { admin: boolean }).admin).toBe(false);
  });

  it('filters by waiting for approval, words, dates and surface, and pages past the first page', async () => {
    const ids = async (query: string, who = ADMIN) => ((await (await api(`tasks?${query}`, who)).json()) as { items: { task_id: string }[] }).items.map((task) => task.task_id);
    expect(await ids('status=awaiting_approval')).toEqual([paused.task_id]);
    expect(await ids('q=TYPO')).toHaveLength(1);
    expect(await ids('q=secret', ALICE)).toEqual([]);
    expect(await ids('q=secret')).toEqual([bobTask]);
    expect(await ids('q=100%25')).toEqual([]);
    expect(await ids(`from=${encodeURIComponent(new Date(Date.now() + 60_000).toISOString())}`)).toEqual([]);
    expect(await ids(`to=${encodeURIComponent(new Date(Date.now() + 60_000).toISOString())}`)).toHaveLength(3);
    expect(await ids('surface=chat')).toEqual([]);
    expect((await api('tasks?surface=fax', ADMIN)).status).toBe(400);
    const first = (await (await api('tasks?limit=2', ADMIN)).json()) as { items: unknown[]; next_cursor: string };
    const second = (await (await api(`tasks?limit=2&cursor=${first.next_cursor}`, ADMIN)).json()) as { items: unknown[]; next_cursor: string | null };
    expect([first.items.length, second.items.length, second.next_cursor]).toEqual([2, 1, null]);
    // Usage per user and day (issue 39): an admin reads everyone's, each ended Task on its owner's day.
    const usage = (await (await api('usage', ADMIN)).json()) as { days: { user: string; tasks: number; total_tokens: number }[] };
    expect(usage.days.find((row) => row.user === 'bob@example.com')).toMatchObject({ tasks: 1, total_tokens: 10 });
    expect(new Set(usage.days.map((row) => row.user))).toEqual(new Set(['alice@example.com', 'bob@example.com']));
  });

  it('shows a user their view in Chromium, answers the approval from the page (audited as from the console), and does not audit the 3-second refreshes', async () => {
    const page = await (await context(ALICE)).newPage();
    page.setDefaultTimeout(10_000);
    await page.goto(`${base}/admin`);
    await page.waitForSelector('#tasks tr[data-task-id]');
    expect(await page.textContent('#nav-tasks')).toBe('My Tasks');
    expect(await page.isHidden('#nav-audit')).toBe(true);
    expect(await page.textContent('#approvals-badge')).toBe('1');
    expect(await page.textContent(`tr[data-task-id="${paused.task_id}"] .status`)).toBe('awaiting approval');
    expect(await page.textContent(`tr[data-task-id="${paused.task_id}"] td.surface`)).toBe('MCP');
    expect(await page.textContent('#tasks')).not.toContain('Bob');
    const reads = await auditCount('admin.task_list', 'alice@example.com');
    // Two refreshes (one every 3 s), each seen as the answer to the page's own list request; neither is audited.
    for (let refresh = 0; refresh < 2; refresh++) await page.waitForResponse(/\/admin\/tasks\?/);
    expect(await auditCount('admin.task_list', 'alice@example.com')).toBe(reads);
    await shot(page, 'console-user-tasks');

    // A plan the model could not give shows as the fallback it is, not as a red error.
    const rejected = () => probe<{ action: string }>(db, "SELECT action FROM audit_events WHERE outcome = 'rejected' AND actor = ?", 'alice@example.com');
    const rejectedBefore = await rejected();
    await page.click(`a[href="#/tasks/${planless}"]`);
    await page.waitForSelector('#trace li.fallback');
    // Her Task's diff shows (it changed nothing), with no refusal on the page or in the audit log, and no
    // undo or fork to offer her (admin routes).
    expect(await page.textContent('#task-diff')).toContain('No file changed.');
    expect(await page.textContent('#task-diff')).not.toContain('No diff');
    expect(await page.locator('#task-diff button').count()).toBe(0);
    expect(await rejected()).toEqual(rejectedBefore);
    expect(await page.locator('#trace li.bad').count()).toBe(0);
    expect(await page.textContent('#trace li.fallback')).toContain("The model's plan could not be used");
    await shot(page, 'console-user-plan-fallback');
    await page.goto(`${base}/admin#/tasks`);
    await page.click(`a[href="#/tasks/${paused.task_id}"]`);
    const section = page.locator('section.card', { hasText: 'Pending approvals' });
    await section.waitFor();
    expect(await page.textContent('#task-status')).toContain('awaiting approval');
    // The page re-reads the Task and its diff every 3 s while it waits: the re-reads are not audited.
    const diffReads = await auditCount('admin.task_diff', 'alice@example.com');
    await page.waitForResponse(new RegExp(`/admin/tasks/${paused.task_id}/diff$`));
    expect(await auditCount('admin.task_diff', 'alice@example.com')).toBe(diffReads);
    await shot(page, 'console-user-approval');
    ollama.enqueue({ content: 'All 12 tests pass.' });
    await section.locator('button.approve').click();
    await page.waitForFunction(() => !document.querySelector('section.card button.approve'));
    const [approval] = await probe<{ state: string; answer_task_id: string }>(db, 'SELECT state, answer_task_id FROM approvals WHERE task_id = ?', paused.task_id);
    expect(approval.state).toBe('granted');
    expect(await auditCount('console.approval_answer', 'alice@example.com')).toBeGreaterThanOrEqual(1);
    const [answerTask] = await probe<{ request: string; surface: string }>(db, 'SELECT request, surface FROM tasks WHERE id = ?', approval.answer_task_id);
    expect(answerTask).toEqual({ request: '承認', surface: 'http' });
    await page.context().close();
  });

  it('lets an admin see everyone’s Tasks and the usage view; lays out at 390 px in dark mode', async () => {
    const page = await (await context(ADMIN, { viewport: { width: 390, height: 844 }, colorScheme: 'dark' })).newPage();
    page.setDefaultTimeout(10_000);
    await page.goto(`${base}/admin`);
    await page.waitForSelector(`tr[data-task-id="${bobTask}"]`);
    expect(await page.isVisible('#nav-audit')).toBe(true);
    // Nothing wider than the phone but the scrolling table inside its card.
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    expect(await page.evaluate(() => getComputedStyle(document.body).backgroundColor)).toBe('rgb(20, 23, 29)');
    const time = page.locator('tr td[title]').first();
    expect(await time.getAttribute('title')).toMatch(/UTC$/);
    await shot(page, 'console-admin-390-dark');
    await page.goto(`${base}/admin#/usage`);
    await page.waitForSelector('#usage tr');
    expect(await page.textContent('#usage')).toContain('alice@example.com');
    await shot(page, 'console-admin-usage');
    await page.context().close();
  });
});
