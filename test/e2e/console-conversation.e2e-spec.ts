import { beforeAll, describe, expect, it } from '@jest/globals';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { openBrowser } from '../support/browser.js';
import { probe, type DatabaseTarget } from '../support/database-probe.js';
import { useStack } from '../support/e2e-stack.js';
import { gate } from '../support/gate.js';
import { as, PROXY_AUTH } from '../support/proxy-identity.js';

const SCREENSHOTS = join(import.meta.dirname, '../../test-output/screenshots');
const ALICE = as('alice@example.com');
const call = (name: string, args: Record<string, unknown>) => ({ toolCalls: [{ name, arguments: args }], promptEvalCount: 30, evalCount: 10 });

/** Issue 36: the console as a workspace: type a request, watch it stream, answer what it asks in place (contrast: console-contrast.e2e-spec.ts). */
describe('the console conversation view (auth.mode proxy_headers)', () => {
  const stack = useStack({ config: { auth: PROXY_AUTH, agent: { approvals: { mode: 'commands' } } } });
  const { ollama } = stack;
  let base: string;
  let db: DatabaseTarget;
  let browser: Browser;

  const open = async (hash: string, colorScheme: 'light' | 'dark' = 'light', width = 1200): Promise<Page> => {
    const context = await browser.newContext({ extraHTTPHeaders: ALICE, viewport: { width, height: 900 }, colorScheme });
    const page = await context.newPage();
    page.setDefaultTimeout(15_000);
    await page.goto(`${base}/admin${hash}`);
    return page;
  };
  const ask = async (page: Page, text: string) => {
    await page.fill('#prompt', text);
    await page.press('#prompt', 'Enter');
  };
  const tasksOf = async (owner: string) => Number((await probe<{ n: number }>(db, 'SELECT COUNT(*) AS n FROM tasks WHERE owner = ?', owner))[0].n);
  const lastTask = async () =>
    (await probe<{ id: string; status: string; request: string; surface: string }>(db, 'SELECT id, status, request, surface FROM tasks ORDER BY seq DESC LIMIT 1'))[0];

  beforeAll(async () => {
    mkdirSync(SCREENSHOTS, { recursive: true });
    ({ base, database: db } = stack);
    browser = stack.closeOnStop(await openBrowser());
  });

  it('sends a typed request with Enter (Shift+Enter is a new line) and streams its answer, as Markdown, before the Task ends', async () => {
    const page = await open('#/chat');
    await page.waitForSelector('#prompt');
    await page.press('#prompt', 'a');
    await page.press('#prompt', 'Shift+Enter');
    await page.press('#prompt', 'b');
    expect(await page.inputValue('#prompt')).toBe('a\nb');
    expect(await tasksOf('alice@example.com')).toBe(0);

    const seen = gate();
    ollama.enqueue({ chunks: ['The answer ', 'is **forty', '-two**.', '\n\n```js\nconst x = 42;\n```\n'], holdBeforeChunk: { index: 2, until: seen.opened } });
    await ask(page, 'What is the answer?');
    await page.waitForFunction(() => document.querySelector('#live-answer')?.textContent?.includes('The answer is'));
    // Held before its third chunk: the Task is still running while the page shows what it has so far.
    expect(await lastTask()).toMatchObject({ status: 'running', request: 'What is the answer?', surface: 'http' });
    await page.screenshot({ path: join(SCREENSHOTS, 'console-conversation-streaming.png'), fullPage: true });
    seen.open();
    await page.waitForSelector('#turns li.turn .markdown strong');
    expect(await page.textContent('#turns li.turn .markdown strong')).toBe('forty-two');
    expect(await page.textContent('#turns li.turn .markdown pre code')).toBe('const x = 42;\n');
    expect(await page.locator('#live-task').count()).toBe(0);
    expect(await page.inputValue('#prompt')).toBe('');
    await page.context().close();
  });

  it('renders an answer’s markup only as sanitised Markdown: no script, no handler, no remote image', async () => {
    ollama.enqueue({ content: 'Look: <img src=x onerror="document.title=\'owned\'"><script>document.title="owned"</script> [link](javascript:alert(1)) **ok**' });
    const page = await open('#/chat');
    await ask(page, 'Show me markup');
    await page.waitForSelector('#turns li.turn .markdown strong');
    const answer = page.locator('#turns li.turn .markdown').last();
    expect(await answer.locator('script, [onerror]').count()).toBe(0);
    expect(await answer.locator('a[href^="javascript:"]').count()).toBe(0);
    expect(await page.title()).not.toBe('owned');
    await page.context().close();
  });

  it('answers an approval and a question in place with the decision itself; a second decision is refused and queues nothing', async () => {
    const page = await open('#/chat');
    ollama.enqueue(call('run_command', { command: 'echo hi' }));
    await ask(page, 'Run echo please');
    const approve = page.locator('#turns .pending-here button.approve');
    await approve.waitFor();
    const paused = await lastTask();
    const [approval] = await probe<{ id: string }>(db, "SELECT id FROM approvals WHERE task_id = ? AND state = 'pending'", paused.id);
    await page.screenshot({ path: join(SCREENSHOTS, 'console-conversation-approval.png'), fullPage: true });
    ollama.enqueue({ content: 'It printed hi.' });
    await approve.click();
    await page.waitForFunction(() => [...document.querySelectorAll('#turns li.turn')].some((turn) => turn.textContent?.includes('It printed hi.')));
    const [decided] = await probe<{ state: string; answer_task_id: string }>(db, 'SELECT state, answer_task_id FROM approvals WHERE id = ?', approval.id);
    expect(decided.state).toBe('granted');
    // The run went on with the command's own output, and no message 承認 reached the model.
    const [answerTask] = await probe<{ request: string }>(db, 'SELECT request FROM tasks WHERE id = ?', decided.answer_task_id);
    expect(answerTask.request).toBe('Approved: $ echo hi');
    const prompt = ollama.workChats.at(-1)!.body.messages;
    expect(prompt.at(-1)).toMatchObject({ role: 'tool', tool_name: 'run_command' });
    expect(prompt.some((message) => message.role === 'user' && /承認|Approved/.test(String(message.content)))).toBe(false);

    const before = await tasksOf('alice@example.com');
    const again = await page.evaluate(async (id) => (await fetch(`admin/approvals/${id}/approve`, { method: 'POST', credentials: 'same-origin' })).status, approval.id);
    expect(again).toBe(409);
    expect(await tasksOf('alice@example.com')).toBe(before);

    ollama.enqueue(call('ask_user', { question: 'Which colour?', options: ['red', 'blue'] }));
    await ask(page, 'Paint it');
    const blue = page.locator('#turns .pending-here button.choice', { hasText: 'blue' });
    await blue.waitFor();
    ollama.enqueue({ content: 'Painted blue.' });
    await blue.click();
    await page.waitForFunction(() => [...document.querySelectorAll('#turns li.turn')].some((turn) => turn.textContent?.includes('Painted blue.')));
    expect(ollama.workChats.at(-1)!.body.messages.at(-1)).toMatchObject({ role: 'tool', tool_name: 'ask_user', content: 'The user chose: blue' });
    await page.context().close();
  });

  it('steers the running Task from the composer (issue 35): the correction reaches the model at its next step', async () => {
    const page = await open('#/chat');
    const held = gate();
    ollama.enqueue({ content: 'A long summary.', heldUntil: held.opened }, { content: 'Short.' });
    await ask(page, 'Summarise the notes.');
    await page.waitForSelector('#live-task .status.running');
    expect(await page.textContent('#send')).toBe('Steer');
    await ask(page, 'Keep it short.');
    await page.waitForFunction(() => (document.querySelector('#prompt') as HTMLTextAreaElement).value === '');
    held.open();
    await page.waitForFunction(() => [...document.querySelectorAll('#turns li.turn')].some((turn) => turn.textContent?.includes('Short.')));
    expect(ollama.workChats.at(-1)!.body.messages.at(-1)).toMatchObject({ role: 'user', content: 'Correction from the user while you work:\nKeep it short.' });
    expect(await page.textContent('#send')).toBe('Send');
    await page.context().close();
  });
});
