import { beforeAll, describe, expect, it } from '@jest/globals';
import type { Client } from '@modelcontextprotocol/client';
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { ROUTES } from '../../src/http/route-table.js';
import { useStack } from '../support/e2e-stack.js';
import { fieldsOf, modernClient, textOf, waitForTerminal } from '../support/mcp-clients.js';
import type { ServiceProcess } from '../support/service-process.js';
import { gate } from '../support/gate.js';
import { openBrowser } from '../support/browser.js';

const TOKEN = 'admin-token-for-the-browser-test';
/** Screenshots for a person to look at (gitignored). */
const SCREENSHOTS = join(import.meta.dirname, '../../test-output/screenshots');

const call = (name: string, args: Record<string, unknown>) => ({ toolCalls: [{ name, arguments: args }], promptEvalCount: 12, evalCount: 6 });

// scripts/ensure-test-env.sh installs Debian's chromium; the console test needs a real browser.
describe('the admin console in headless Chromium', () => {
  const stack = useStack({ config: { auth: { admin_token: TOKEN } } });
  const { ollama } = stack;
  let service: ServiceProcess;
  let client: Client;
  let browser: Browser;
  let planned: string;
  let running: string;
  let queued: string;

  const submit = async (request: string) => fieldsOf(textOf(await client.callTool({ name: 'agent_run', arguments: { request } }))).task_id;
  const adminApi = async (path: string) => (await fetch(`http://127.0.0.1:${service.port}/admin/${path}`, { headers: { Authorization: `Bearer ${TOKEN}` } })).json();
  const shot = (page: Page, name: string) => page.screenshot({ path: join(SCREENSHOTS, `${name}.png`), fullPage: true });

  beforeAll(async () => {
    mkdirSync(SCREENSHOTS, { recursive: true });
    ({ service } = stack);
    client = stack.closeOnStop(await modernClient(service.url));
    // A finished, planned Task with a file change and a command whose output has several lines.
    ollama.enqueue(
      call('plan', {
        subtasks: [
          { id: 'write', title: 'Write the notes', instructions: 'Create notes.txt.', depends_on: [] },
          { id: 'check', title: 'Check the notes', instructions: 'Print them.', depends_on: ['write'] },
        ],
      }),
      call('write_file', { path: 'notes.txt', content: 'first line\nsecond line\n' }),
      { content: 'written' },
      call('run_command', { command: 'cat notes.txt' }),
      { content: 'checked' },
      { content: 'The notes are written and checked.' },
    );
    planned = await submit('Write notes.txt with two lines and print it');
    await waitForTerminal(async (id) => textOf(await client.callTool({ name: 'agent_status', arguments: { task_id: id } })), planned);
    await client.callTool({ name: 'agent_run', arguments: { request: '   ' } });
    for (let n = 0; n < 30; n++) await client.callTool({ name: 'agent_status', arguments: { task_id: planned } });
    browser = stack.closeOnStop(await openBrowser());
  });

  it('signs in with Enter, lists and filters Tasks, follows the running one and cancels with confirmation', async () => {
    const page = await browser.newPage({ viewport: { width: 1360, height: 900 } });
    page.setDefaultTimeout(10_000);
    const apiCalls: string[] = [];
    page.on('request', (request) => void (/\/admin\/(me|tasks|audit)/.test(request.url()) && apiCalls.push(request.url())));
    const rejectedBefore = (await adminApi('audit?outcome=rejected&limit=1000')).items.length;

    await page.goto(`http://127.0.0.1:${service.port}/admin`);
    await page.waitForSelector('#sign-in');
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('token');
    await shot(page, '01-sign-in');
    // Nothing was asked of the API before a token was tried, so nothing was refused or audited.
    expect(apiCalls).toEqual([]);
    expect((await adminApi('audit?outcome=rejected&limit=1000')).items.length).toBe(rejectedBefore);

    await page.keyboard.type('wrong-token-wrong-token-wrong');
    await page.keyboard.press('Enter');
    await page.waitForSelector('#sign-in [role=alert]');
    expect(await page.textContent('#sign-in [role=alert]')).toMatch(/^403: admin rights are required/);
    await page.fill('#token', TOKEN);
    await page.press('#token', 'Enter');
    await page.waitForSelector('#tasks tr[data-task-id]');
    expect(await page.textContent('#whoami')).toMatch(/^signed in as \S+ \(admin token\)$/);

    // A running Task that moves through three subtasks, and one queued behind it. The second subtask answers only
    // once the page has shown the first done: the page refreshes every 3 s, and a timed delay let it miss "1/3".
    const seenOne = gate();
    ollama.enqueue(
      call('plan', { subtasks: ['one', 'two', 'three'].map((id) => ({ id, title: `Step ${id}`, instructions: `Do ${id}.`, depends_on: [] })) }),
      { content: 'one done' },
      { content: 'two done', heldUntil: seenOne.opened },
      { hang: true },
    );
    running = await submit('A long job in three steps');
    queued = await submit('Waits for the long job');
    await page.waitForSelector(`#tasks tr[data-task-id="${queued}"]`);
    expect(await page.textContent(`#tasks tr[data-task-id="${queued}"] td.progress`)).toBe('#1 in queue');
    await shot(page, '02-tasks');

    await page.selectOption('select[name=status]', 'queued');
    await page.press('input[name=owner]', 'Enter');
    // Wait for the filtered list itself: while the page re-renders, the table can be empty for a moment, and
    // "every row is queued" holds for an empty table too.
    await page.waitForFunction((id) => {
      const rows = [...document.querySelectorAll('#tasks tr[data-task-id]')] as HTMLElement[];
      return rows.length > 0 && rows.every((row) => row.dataset.status === 'queued') && rows.some((row) => row.dataset.taskId === id);
    }, queued);
    expect(await page.locator('#tasks tr[data-task-id]').evaluateAll((rows) => rows.map((row) => (row as HTMLElement).dataset.taskId))).toEqual([queued]);
    expect(page.url()).toMatch(/#\/tasks\?status=queued$/);

    // Cancel the queued one from the list: a confirmation first; dismissing it changes nothing.
    page.once('dialog', (dialog) => void dialog.dismiss());
    await page.click(`#tasks tr[data-task-id="${queued}"] button.cancel`);
    expect((await adminApi(`tasks/${queued}`)).status).toBe('queued');
    page.once('dialog', (dialog) => void dialog.accept());
    await page.click(`#tasks tr[data-task-id="${queued}"] button.cancel`);
    await page.waitForFunction(() => document.querySelectorAll('#tasks tr[data-task-id]').length === 0);
    expect((await adminApi(`tasks/${queued}`)).status).toBe('cancelled');

    // Follow the running Task: its page updates itself as the subtasks complete.
    await page.goto(`http://127.0.0.1:${service.port}/admin#/tasks/${running}`);
    await page.waitForFunction(() => /running/.test(document.querySelector('#task-status')?.textContent ?? ''));
    // It shows the first subtask done, then the second, each as the page refreshes itself.
    const progressReaches = (wanted: string) => page.waitForFunction((done) => /(\d\/3)/.exec(document.querySelector('#task-progress')?.textContent ?? '')?.[1] === done, wanted);
    await progressReaches('1/3');
    seenOne.open();
    await progressReaches('2/3');
    expect(await page.textContent('#task-progress')).toContain('Step three');
    await shot(page, '03-running-task');
    page.once('dialog', (dialog) => void dialog.accept());
    await page.click('button.cancel');
    await page.waitForFunction(() => /cancelled/.test(document.querySelector('#task-status')?.textContent ?? ''));
    expect(await page.textContent('#task-result')).toBe('Cancelled on request.');
    await page.close();
  });

  it('shows a Task as a readable timeline: steps, subtask titles, times, commands with output, file changes, the plan', async () => {
    const page = await browser.newPage({ viewport: { width: 1360, height: 900 } });
    page.setDefaultTimeout(10_000);
    await page.goto(`http://127.0.0.1:${service.port}/admin`);
    await page.fill('#token', TOKEN);
    await page.press('#token', 'Enter');
    await page.waitForSelector(`#tasks a[href="#/tasks/${planned}"]`);
    await page.click(`#tasks a[href="#/tasks/${planned}"]`);
    await page.waitForSelector('#trace');
    expect(await page.textContent('#task-title')).toBe(`Task ${planned}`);
    expect(await page.textContent('#task-status')).toContain('completed');
    expect(await page.textContent('#task-result')).toMatch(/^The notes are written and checked./);
    expect(await page.textContent('#task-duration')).toMatch(/^\d+(\.\d)? (ms|s)$/);

    const numbers = await page.locator('#trace > li[data-step] .step-no').allTextContents();
    expect(numbers).toEqual(numbers.map((_, index) => `#${index + 1}`));
    expect(await page.locator('#trace ol.plan > li strong').allTextContents()).toEqual(['write: Write the notes', 'check: Check the notes']);
    expect(await page.locator('#trace .subtask-group').allTextContents()).toEqual(['Subtask write: Write the notes', 'Subtask check: Check the notes']);
    expect(await page.textContent('#trace .file-change')).toBe('created notes.txt (23 bytes)');
    const command = page.locator('#trace > li[data-kind=command]');
    expect(await command.locator('.step-name').textContent()).toBe('$ cat notes.txt');
    expect(await command.textContent()).toContain('exit code 0');
    // Real line breaks in a <pre>, not a JSON string with \n in it.
    expect(await command.locator('pre.output').evaluate((pre) => (pre as HTMLElement).innerText)).toBe('first line\nsecond line');
    expect(await page.locator('#trace .step-time').first().textContent()).toMatch(/^\d\d:\d\d:\d\d\.\d{3} \(\+\d.*\) · took /);
    // The session's files, downloaded with the admin token the page signed in with.
    expect(await page.textContent('#session-files li')).toBe('notes.txt 23 bytes · text/plain');
    const [download] = await Promise.all([page.waitForEvent('download'), page.click('#session-files button')]);
    expect(download.suggestedFilename()).toBe('notes.txt');
    expect(readFileSync(await download.path(), 'utf8')).toBe('first line\nsecond line\n');
    await shot(page, '04-task-timeline');
    await page.close();
  });

  it('searches the audit log by action prefix and outcome, pages, links to Tasks and verifies the chain', async () => {
    const page = await browser.newPage({ viewport: { width: 1360, height: 900 } });
    page.setDefaultTimeout(10_000);
    await page.goto(`http://127.0.0.1:${service.port}/admin#/audit`);
    await page.fill('#token', TOKEN);
    await page.press('#token', 'Enter');
    await page.waitForFunction(() => /events$/.test(document.querySelector('#status')?.textContent ?? ''));

    await page.fill('input[name=action]', 'agent_run');
    await page.selectOption('select[name=outcome]', 'rejected');
    await page.press('input[name=action]', 'Enter');
    await page.waitForFunction(() => document.querySelector('#status')!.textContent === '1 events');
    expect(await page.locator('#events tr td:nth-child(5)').allTextContents()).toEqual(['tools/call agent_run']);

    await page.selectOption('select[name=outcome]', '');
    await page.fill('input[name=action]', '');
    await page.selectOption('select[name=limit]', '25');
    await page.click('#filters button[type=submit]');
    await page.waitForFunction(() => document.querySelector('#status')!.textContent === '25 events');
    await page.click('#more');
    await page.waitForFunction(() => Number.parseInt(document.querySelector('#status')!.textContent ?? '0', 10) > 25);
    const seqs = (await page.locator('#events tr td:first-child').allTextContents()).map(Number);
    expect(seqs).toEqual([...seqs].sort((a, b) => b - a));
    expect(new Set(seqs).size).toBe(seqs.length);

    await page.click('#verify-button');
    await page.waitForFunction(() => (document.querySelector('#verify')!.textContent ?? '').startsWith('chain ok'));
    await shot(page, '05-audit');
    await page.locator(`#events a.task[href="#/tasks/${planned}"]`).first().click();
    await page.waitForSelector('#trace');
    expect(await page.textContent('#task-title')).toBe(`Task ${planned}`);
    await page.close();
  });

  it('serves the console under a strict CSP, and points / at the console and the MCP endpoint', async () => {
    const res = await fetch(`http://127.0.0.1:${service.port}/admin`);
    // Issue 37, also seen: never framed (browsers without frame-ancestors too), never sniffed as another type.
    // Every page and asset of the console the route table lists (the sign-in routes answer only with auth.mode oauth).
    const assets = ROUTES.filter((route) => route.documented === 'console' && route.serving === 'nest' && route.method === 'GET' && !route.path.includes('/oauth/'));
    expect(assets.map((route) => route.path)).toEqual(expect.arrayContaining(['/', '/admin', '/admin/console.js', '/admin/console-views.js', '/admin/console.css']));
    for (const { path } of assets) {
      const served = await fetch(`http://127.0.0.1:${service.port}${path}`);
      expect([path, served.headers.get('x-frame-options'), served.headers.get('x-content-type-options')]).toEqual([path, 'DENY', 'nosniff']);
    }
    const csp = res.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toContain('unsafe-inline');
    const page = await browser.newPage();
    const violations: string[] = [];
    page.on('console', (message) => void (/Content Security Policy/.test(message.text()) && violations.push(message.text())));
    await page.goto(`http://127.0.0.1:${service.port}/`);
    expect(await page.locator('a[href="admin"]').count()).toBe(1);
    expect(await page.textContent('body')).toContain('POST /mcp');
    await page.click('a[href="admin"]');
    await page.waitForSelector('#sign-in');
    expect(violations).toEqual([]);
    await page.close();
  });
});
