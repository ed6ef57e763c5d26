import { beforeAll, describe, expect, it } from '@jest/globals';
import type { Browser, Page } from 'playwright-core';
import { adminApi } from '../support/automation-api.js';
import { openBrowser } from '../support/browser.js';
import { useStack } from '../support/e2e-stack.js';
import { as, PROXY_AUTH } from '../support/proxy-identity.js';

const ALICE = as('alice@example.com');
const BOB = as('bob@example.com');

/** Issue 38: the console's Schedules and Triggers pages in Chromium, for a signed-in user behind the SSO proxy. */
describe('the console: Schedules and Triggers pages', () => {
  const stack = useStack({ config: { auth: PROXY_AUTH } });
  let browser: Browser;
  const errors: string[] = [];

  const open = async (identity: Record<string, string>, hash: string): Promise<Page> => {
    const context = await browser.newContext({ extraHTTPHeaders: identity, viewport: { width: 1300, height: 900 } });
    const page = await context.newPage();
    page.setDefaultTimeout(10_000);
    page.on('pageerror', (error) => errors.push(error.message));
    page.on('console', (message) => void (message.type() === 'error' && !/status of 4\d\d/.test(message.text()) && errors.push(message.text())));
    await page.goto(`${stack.base}/admin#/${hash}`);
    return page;
  };

  beforeAll(async () => {
    browser = stack.closeOnStop(await openBrowser());
    stack.ollama.setFallback({ content: 'Morning report: all green.', promptEvalCount: 3, evalCount: 3 });
  });

  it('makes, runs, pauses and edits a schedule, with its history linking to the Task, which names its schedule', async () => {
    const page = await open(ALICE, 'schedules');
    await page.waitForSelector('#schedules');
    // A refused expression is shown under the form, naming the field; nothing is made.
    await page.fill('#new-schedule input[name=name]', 'morning report');
    await page.fill('#new-schedule input[name=cron]', '0 61 * * *');
    await page.fill('#new-schedule textarea[name=request]', 'Read the overnight CI logs and tell me what broke');
    await page.click('#new-schedule button[type=submit]');
    expect(await (await page.waitForSelector('#new-schedule p.problem:not(:empty)')).textContent()).toMatch(/^400: cron: /);
    expect(await page.locator('#schedules tr[data-schedule-id]').count()).toBe(0);
    await page.fill('#new-schedule input[name=cron]', '0 7 * * 1-5');
    await page.fill('#new-schedule input[name=timezone]', 'Asia/Tokyo');
    await page.click('#new-schedule button[type=submit]');
    const row = page.locator('#schedules tr[data-schedule-id]');
    await row.waitFor();
    expect(await row.textContent()).toContain('0 7 * * 1-5 (Asia/Tokyo)');
    await row.locator('button', { hasText: 'Run now' }).click();
    await row.locator('button', { hasText: 'Pause' }).click();
    await page.waitForSelector('#schedules tr[data-schedule-id] >> text=paused');

    await row.locator('a').click();
    await page.waitForSelector('#runs tr[data-run-id]');
    expect(await page.textContent('#runs')).toContain('manual');
    await page.fill('#edit-schedule textarea[name=request]', 'Read the CI logs');
    await page.click('#edit-schedule button[type=submit]');
    await page.waitForFunction(() => document.querySelector<HTMLTextAreaElement>('#edit-schedule textarea')?.value === 'Read the CI logs');
    await page.click('#runs a');
    const startedBy = await page.waitForSelector('#task-started-by');
    expect(await startedBy.textContent()).toMatch(/^schedule\/[0-9a-f-]{36}$/);

    // Another user's page shows none of it.
    const bobPage = await open(BOB, 'schedules');
    await bobPage.waitForSelector('#schedules td.muted');
    expect(await bobPage.textContent('#schedules')).toBe('No schedules yet.');
    expect(errors).toEqual([]);
  });

  it('makes a trigger and shows its URL and secret once; its page lists deliveries', async () => {
    const page = await open(ALICE, 'triggers');
    await page.waitForSelector('#triggers');
    await page.fill('#new-trigger input[name=name]', 'new issues');
    await page.selectOption('#new-trigger select[name=kind]', 'standard');
    await page.fill('#new-trigger textarea[name=request]', 'Triage {{payload.issue.title}}');
    await page.click('#new-trigger button[type=submit]');
    const secret = await (await page.waitForSelector('#trigger-created dd.secret')).textContent();
    expect(secret).toMatch(/^whsec_/);
    const row = page.locator('#triggers tr[data-trigger-id]');
    await row.waitFor();
    expect(await row.textContent()).toMatch(/standard.*\/v1\/triggers\/[0-9a-f-]{36}/);
    await row.locator('a').click();
    await page.waitForSelector('#runs td.muted');
    expect(await page.textContent('#view')).not.toContain(secret!);
    await page.locator('button', { hasText: 'Turn off' }).click();
    await page.waitForSelector('button:text("Turn on")');
    const [trigger] = (await adminApi(stack.base, ALICE)<{ triggers: { enabled: boolean }[] }>('GET', 'triggers')).body.triggers;
    expect(trigger.enabled).toBe(false);
    expect(errors).toEqual([]);
  });
});
