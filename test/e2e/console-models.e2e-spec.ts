import { beforeAll, describe, expect, it } from '@jest/globals';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { Browser, Page } from 'playwright-core';
import type { EvalReport } from '../../src/eval/report.js';
import { openBrowser } from '../support/browser.js';
import { useStack } from '../support/e2e-stack.js';
import { EvalModel } from '../support/eval-models.js';
import { ADMIN, as, PROXY_AUTH } from '../support/proxy-identity.js';

const run = promisify(execFile);
const BOB = as('bob@example.com');

/**
 * Issue 41: the console's Models page shows the last `npm run eval` result of each model, read from the eval_results
 * table the eval wrote to the configured database (SQLite or PostgreSQL, the suite's kind), in Chromium.
 */
describe('the console: the Models page', () => {
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

  /** The built eval on the stack's agent.yaml (its Ollama, model and database), as an operator runs it. */
  async function evaluate(args: string[]): Promise<EvalReport> {
    const json = join(stack.config.dir, `eval-${Date.now()}.json`);
    await run(process.execPath, ['dist/eval.js', '--json', json, ...args], {
      env: { PATH: process.env.PATH, AGENT_CONFIG: stack.config.file },
      timeout: 100_000,
    });
    return JSON.parse(readFileSync(json, 'utf8')) as EvalReport;
  }

  beforeAll(async () => {
    browser = stack.closeOnStop(await openBrowser());
    // A model that answers without tools (test/support/eval-models.ts): the tool case fails, the others pass.
    stack.ollama.respond = new EvalModel('chatter').respond;
  });

  it('shows one card per model with its last result through the service and the bare loop; only admins see it', async () => {
    const page = await open(ADMIN, 'models');
    expect(await (await page.waitForSelector('#no-eval-results')).textContent()).toMatch(/^No model was evaluated/);

    await evaluate(['--cases', 'no-tool-units', '--repeat', '1']);
    const report = await evaluate(['--cases', 'no-tool-units,ask-when-unclear,shell-output-count', '--repeat', '2', '--baseline']);
    await page.reload();
    const card = page.locator(`#models section.model-card[data-model="${report.results[0].model}"]`);
    await card.waitFor();
    expect(await page.locator('#models section.model-card').count()).toBe(1);
    for (const harness of ['service', 'baseline']) {
      const result = report.results.find((item) => item.harness === harness)!;
      // The second run's figures, not the first's (one case, all passed).
      expect(result).toMatchObject({ passAt1: 2 / 3, passAllN: 2 / 3 });
      const cells = await card.locator(`tr[data-harness="${harness}"] td`).allTextContents();
      expect(cells).toEqual([
        harness,
        report.finishedAt.slice(0, 10),
        report.serviceVersion,
        '67%',
        '67% (N=2)',
        '3',
        String(result.modelCalls),
        String(result.promptTokens),
        String(result.outputTokens),
      ]);
    }

    // Not an admin: no Models link, and the API refuses the figures.
    const bobPage = await open(BOB, 'tasks');
    await bobPage.waitForSelector('#nav-tasks');
    expect(await bobPage.isHidden('#nav-models')).toBe(true);
    expect((await fetch(`${stack.base}/admin/eval-results`, { headers: BOB })).status).toBe(403);
    expect(errors).toEqual([]);
  }, 240_000);
});
