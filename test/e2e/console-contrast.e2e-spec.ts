import { AxeBuilder } from '@axe-core/playwright';
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
const SCHEMES = ['light', 'dark'] as const;

/** Issue 36: WCAG AA contrast (axe-core's color-contrast rule) on the Task page, running and ended, and its diff, in both themes. */
describe('the console’s contrast in both themes', () => {
  // The running Task is held mid-answer while both themes are checked: longer than the tests' usual 10 s deadline.
  const stack = useStack({ config: { auth: PROXY_AUTH, ollama: { request_timeout_ms: 60_000, stall_timeout_ms: 60_000 } } });
  const { ollama } = stack;
  let base: string;
  let db: DatabaseTarget;
  let browser: Browser;

  const open = async (hash: string, colorScheme: 'light' | 'dark' = 'light', width = 1200): Promise<Page> => {
    const page = await (await browser.newContext({ extraHTTPHeaders: ALICE, viewport: { width, height: 900 }, colorScheme })).newPage();
    page.setDefaultTimeout(15_000);
    await page.goto(`${base}/admin${hash}`);
    return page;
  };
  /** Types a request in the conversation view and waits until its answer is one of the turns. */
  const converse = async (page: Page, request: string, answer: string) => {
    await page.fill('#prompt', request);
    await page.press('#prompt', 'Enter');
    await page.waitForFunction((text) => [...document.querySelectorAll('#turns li.turn')].some((turn) => turn.textContent?.includes(text)), answer);
  };
  const lastTask = async () => (await probe<{ id: string }>(db, 'SELECT id FROM tasks ORDER BY seq DESC LIMIT 1'))[0].id;
  /** What fails axe-core's color-contrast rule (WCAG AA) on the page as it is now: the elements, by selector. */
  const contrast = async (page: Page) => (await new AxeBuilder({ page }).withRules(['color-contrast']).analyze()).violations.flatMap((v) => v.nodes.map((n) => n.target.join(' ')));

  beforeAll(async () => {
    mkdirSync(SCREENSHOTS, { recursive: true });
    ({ base, database: db } = stack);
    browser = stack.closeOnStop(await openBrowser());
  });

  it('a running Task’s page (its running badge and live answer), light and dark', async () => {
    const held = gate();
    ollama.enqueue({ chunks: ['Still ', 'thinking.'], holdBeforeChunk: { index: 1, until: held.opened } });
    const starter = await open('#/chat');
    await starter.fill('#prompt', 'Think a while');
    await starter.press('#prompt', 'Enter');
    await starter.waitForSelector('#live-task .status.running');
    const running = await lastTask();
    for (const scheme of SCHEMES) {
      const view = await open(`#/tasks/${running}`, scheme);
      await view.waitForFunction(() => document.querySelector('#live-answer')?.textContent?.includes('Still'));
      expect([scheme, await contrast(view)]).toEqual([scheme, []]);
      await view.screenshot({ path: join(SCREENSHOTS, `console-task-running-${scheme}.png`), fullPage: true });
      await view.context().close();
    }
    held.open();
    await starter.waitForFunction(() => [...document.querySelectorAll('#turns li.turn')].some((turn) => turn.textContent?.includes('Still thinking.')));
    await starter.context().close();
  }, 60_000);

  it('a Task page with its diff, inline and side by side, light and dark; the conversation at 390 px', async () => {
    const page = await open('#/chat');
    ollama.enqueue(call('write_file', { path: 'calc.js', content: 'const add = (a, b) => a + b;\nexport default add;\n' }), {
      // A code block and inline code: the conversation's contrast is checked below with them.
      content: 'Wrote **calc.js**:\n\n```js\nexport default add;\n```\n\nImport it with `import add from "./calc.js"`.',
    });
    await converse(page, 'Write calc.js', 'Wrote calc.js:');
    ollama.enqueue(call('write_file', { path: 'calc.js', content: 'const add = (a, b) => a + b + 0;\nexport default add;\n' }), { content: 'Changed it.' });
    await converse(page, 'Change calc.js', 'Changed it.');
    const changed = await lastTask();
    await page.context().close();
    for (const scheme of SCHEMES) {
      const view = await open(`#/tasks/${changed}`, scheme);
      await view.waitForSelector('#diff-files .diff .del');
      expect([scheme, 'inline', await contrast(view)]).toEqual([scheme, 'inline', []]);
      await view.screenshot({ path: join(SCREENSHOTS, `console-task-diff-${scheme}.png`), fullPage: true });
      await view.click('#diff-mode');
      await view.waitForSelector('#diff-files table.diff-sbs td.add');
      expect([scheme, 'side by side', await contrast(view)]).toEqual([scheme, 'side by side', []]);
      // The choice is remembered for the tab: put back for the next page.
      await view.click('#diff-mode');
      await view.context().close();
    }
    const phone = await open('#/chat', 'dark', 390);
    await phone.waitForSelector('#conversation');
    await phone.selectOption('#conversation', { index: 1 });
    await phone.waitForSelector('#turns li.turn .markdown pre code');
    expect(await contrast(phone)).toEqual([]);
    expect(await phone.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    await phone.screenshot({ path: join(SCREENSHOTS, 'console-conversation-390-dark.png'), fullPage: true });
    await phone.context().close();
  }, 90_000);
});
