import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Client } from '@modelcontextprotocol/client';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { fieldsOf, modernClient, textOf, waitForTerminal } from '../support/mcp-clients.js';
import { ScriptedOllama } from '../support/scripted-ollama.js';
import { ServiceProcess, writeConfig } from '../support/service-process.js';

const CHROMIUM = '/usr/bin/chromium';
const TOKEN = 'admin-token-for-the-browser-test';

// .ci/run installs Debian's chromium; the page test needs a real browser.
describe('the admin page in headless Chromium', () => {
  const ollama = new ScriptedOllama();
  let service: ServiceProcess;
  let client: Client;
  let browser: Browser;
  let taskId: string;

  beforeAll(async () => {
    if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is required (apt-get install chromium)`);
    await ollama.start();
    service = await new ServiceProcess((await writeConfig(ollama.url, { auth: { admin_token: TOKEN } })).file).start();
    client = await modernClient(service.url);
    ollama.enqueue({ toolCalls: [{ name: 'list_dir', arguments: {} }] }, { content: 'page test answer' });
    taskId = fieldsOf(textOf(await client.callTool({ name: 'agent_run', arguments: { request: 'list the workspace' } }))).task_id;
    await waitForTerminal(async (id) => textOf(await client.callTool({ name: 'agent_status', arguments: { task_id: id } })), taskId);
    await client.callTool({ name: 'agent_run', arguments: { request: '   ' } });
    // Enough events for more than one page of 25.
    for (let n = 0; n < 40; n++) await client.callTool({ name: 'agent_status', arguments: { task_id: taskId } });
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    });
  });

  afterAll(async () => {
    await browser?.close();
    await client?.close();
    await service?.stop();
    await ollama.stop();
  });

  it('searches with filters, pages, opens a Task trace and verifies the chain', async () => {
    const page = await browser.newPage();
    page.setDefaultTimeout(8000);
    await page.goto(`http://127.0.0.1:${service.port}/admin`);
    // Without the token the API refuses and the page says so.
    await page.waitForFunction(() => (document.querySelector('#status')!.textContent ?? '').startsWith('403'));
    await page.fill('#token', TOKEN);
    await page.dispatchEvent('#token', 'change');
    await page.click('button[type=submit]');
    await page.waitForFunction(() => /events$/.test(document.querySelector('#status')!.textContent ?? ''));
    expect(await page.locator('#events tr').count()).toBeGreaterThan(5);

    await page.selectOption('select[name=outcome]', 'rejected');
    await page.fill('input[name=action]', 'tools/call agent_run');
    await page.click('button[type=submit]');
    await page.waitForFunction(() => document.querySelector('#status')!.textContent === '1 events');
    expect(await page.locator('#events tr td:nth-child(6)').allTextContents()).toEqual(['rejected']);

    await page.selectOption('select[name=outcome]', '');
    await page.fill('input[name=action]', '');
    await page.selectOption('select[name=limit]', '25');
    await page.click('button[type=submit]');
    await page.waitForFunction(() => document.querySelector('#status')!.textContent === '25 events');
    await page.click('#more');
    await page.waitForFunction(() => Number.parseInt(document.querySelector('#status')!.textContent ?? '0', 10) > 25);
    const seqs = (await page.locator('#events tr td:first-child').allTextContents()).map(Number);
    expect(seqs).toEqual([...seqs].sort((a, b) => b - a));
    expect(new Set(seqs).size).toBe(seqs.length);

    await page.fill('input[name=task_id]', taskId);
    await page.click('button[type=submit]');
    await page.waitForFunction(() => (document.querySelector('#status')!.textContent ?? '').endsWith('events'));
    await page.locator('a.task').first().click();
    await page.waitForSelector('#task:not([hidden])');
    expect(await page.locator('#task-title').textContent()).toBe(`Task ${taskId} (completed)`);
    expect(await page.locator('#trace tr td:nth-child(4)').allTextContents()).toEqual(expect.arrayContaining(['list_dir', 'chat']));

    await page.click('#verify-button');
    await page.waitForFunction(() => (document.querySelector('#verify')!.textContent ?? '').startsWith('chain ok'));
    await page.screenshot({ path: join(tmpdir(), 'oam-admin-page.png'), fullPage: true });
    await page.close();
  });
});
