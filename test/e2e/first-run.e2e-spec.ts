import { beforeAll, describe, expect, it } from '@jest/globals';
import { mkdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { Browser } from 'playwright-core';
import { useStack } from '../support/e2e-stack.js';
import type { ServiceProcess } from '../support/service-process.js';
import { openBrowser } from '../support/browser.js';

const SCREENSHOTS = join(import.meta.dirname, '../../test-output/screenshots');

/** The first start in mode none, with no auth.admin_token: a kept token, a sign-in URL that works pasted, a 403 that says what to do. */
describe('first run: the admin console on the default auth mode', () => {
  const stack = useStack();
  let service: ServiceProcess;
  let tokenFile: string;
  let browser: Browser;

  const SIGN_IN_LINE = /admin sign-in: open \S+#token=\S+ /;
  const signInUrl = (log: string) => /admin sign-in: open (\S+#token=\S+)/.exec(log)?.[1];
  const me = (token?: string) => fetch(`http://127.0.0.1:${service.port}/admin/me`, { headers: token ? { Authorization: `Bearer ${token}` } : {} });

  beforeAll(async () => {
    ({ service } = stack);
    const { database } = stack;
    tokenFile = join(database.type === 'sqlite' ? dirname(database.path) : join(stack.config.dir, 'data'), 'admin-token');
    mkdirSync(SCREENSHOTS, { recursive: true });
    browser = stack.closeOnStop(await openBrowser());
  });

  it('keeps a token with the data (mode 0600) and logs a sign-in URL with it', async () => {
    await service.waitForOutput(SIGN_IN_LINE);
    const url = signInUrl(service.stderr);
    expect(url).toMatch(new RegExp(`^http://127\\.0\\.0\\.1:${service.port}/admin#token=[A-Za-z0-9_-]{32}$`));
    expect(statSync(tokenFile).mode & 0o777).toBe(0o600);
    expect(readFileSync(tokenFile, 'utf8').trim()).toBe(url!.split('#token=')[1]);
    expect((await me(url!.split('#token=')[1])).status).toBe(200);
  });

  it('answers 403 with what to do, with no token and with a wrong one', async () => {
    const none = await me();
    expect(none.status).toBe(403);
    const { message } = (await none.json()) as { message: string };
    expect(message).toContain('no admin token was sent');
    expect(message).toContain('sign-in URL');
    expect(message).toContain('at least 24 characters');
    expect(((await (await me('not-the-token-at-all-xxxxxxxx')).json()) as { message: string }).message).toContain('the token sent is not the admin token');
  });

  it('signs the browser in from the pasted URL, then takes the token out of the address bar', async () => {
    const page = await browser.newPage({ viewport: { width: 1200, height: 700 } });
    await page.goto(signInUrl(service.stderr)!);
    await page.waitForSelector('#tasks');
    expect(page.url()).not.toContain('token');
    // Replaced, not pushed: going back leaves the console (the tab's first entry is about:blank).
    await page.goBack();
    expect(page.url()).not.toContain('token');
    await page.goForward();
    await page.waitForSelector('#tasks');
    expect(await page.textContent('#whoami')).toContain('signed in as');
    await page.screenshot({ path: join(SCREENSHOTS, 'first-run-signed-in.png') });
    // A reload of the cleaned address stays signed in (the token lives in this tab's storage).
    await page.reload();
    await page.waitForSelector('#tasks');
    await page.close();
  });

  // Three starts of the service, each of which may take many seconds on a loaded machine: more than Jest's 30 s.
  it('keeps the same token across restarts, and a configured auth.admin_token wins', async () => {
    const before = readFileSync(tokenFile, 'utf8').trim();
    await service.stop();
    await service.start();
    // The sign-in line follows the 'listening:' line that the start waits for.
    await service.waitForOutput(SIGN_IN_LINE);
    expect(signInUrl(service.stderr)).toContain(`#token=${before}`);
    await service.stop();
    const configured = await stack.startAnotherService({ AGENT__AUTH__ADMIN_TOKEN: 'a-configured-token-of-24-chars-or-more' });
    await configured.stop();
    // Read once it has stopped: all it logged, so a sign-in line after 'listening:' would be there.
    expect(configured.stderr).not.toContain('admin sign-in');
    await service.start();
  }, 180_000);
});
