import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createServer, type Server } from 'node:http';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { probe } from '../support/database-probe.js';
import { useStack } from '../support/e2e-stack.js';
import { OidcIssuer } from '../support/oidc-issuer.js';
import { openBrowser } from '../support/browser.js';
import { freePort } from '../support/service-process.js';

const CONSOLE = { id: 'agent-console', secret: 'console-secret-0123456789' };
/** A login name (the token's user claim) that is markup: allowed by the identity rules (no controls), shown back as text. */
const MARKUP_USER = '<img src=x onerror="window.__pwned=1">';

/**
 * Issue 37, round three, "your own pass": the console's OIDC sign-in and its forms in a real browser
 * (Chromium), as a hostile page and a hostile identity would use them: cross-site request forgery on
 * every state-changing admin route the console calls, markup in values shown back, steering the sign-in's
 * redirect, and a session cookie planted before sign-in.
 */
describe('the console under attack in a browser (auth.mode oauth)', () => {
  let issuer: OidcIssuer;
  let browser: Browser;
  let attacker: Server;
  let evil = '';
  let base = '';
  const stack = useStack({
    config: async (_ollamaUrl, origin) => {
      base = origin;
      issuer = await new OidcIssuer([
        {
          client_id: CONSOLE.id,
          client_secret: CONSOLE.secret,
          redirect_uris: [`${base}/admin/oauth/callback`],
          post_logout_redirect_uris: [`${base}/admin`],
          grant_types: ['authorization_code'],
          response_types: ['code'],
        },
      ]).start();
      issuer.groups = { alice: ['agent-admins'], [MARKUP_USER]: ['agent-admins'] };
      const oauth = { issuer: issuer.url, resource: base, admin_groups: ['agent-admins'], console: { client_id: CONSOLE.id, client_secret: CONSOLE.secret } };
      return { auth: { mode: 'oauth', oauth } };
    },
  });
  afterAll(() => issuer?.stop());
  afterAll(() => new Promise((done) => attacker?.close(done)));

  beforeAll(async () => {
    browser = stack.closeOnStop(await openBrowser());
    // Another site's page, on the same host (same-site for the browser: cookies are not kept apart by port).
    const port = await freePort();
    evil = `http://127.0.0.1:${port}`;
    attacker = createServer((req, res) => {
      res.setHeader('Content-Type', 'text/html; charset=utf-8');
      res.end(
        req.url === '/logout-form' ? `<form id="f" method="POST" action="${base}/admin/oauth/logout"></form><script>f.submit()</script>` : '<!doctype html><title>evil</title>',
      );
    });
    await new Promise<void>((done) => attacker.listen(port, '127.0.0.1', done));
  });

  /** Signs `login` in at the issuer's development form, in `context` (a new one unless given), starting at `start`. */
  const signIn = async (login: string, start = `${base}/admin`, given?: BrowserContext): Promise<{ context: BrowserContext; page: Page }> => {
    const context = given ?? (await browser.newContext());
    const page = await context.newPage();
    page.setDefaultTimeout(15_000);
    await page.goto(start);
    if (!page.url().startsWith(issuer.url)) await page.click('#oauth-sign-in');
    await page.waitForURL(`${issuer.url}/**`);
    await page.fill('input[name="login"]', login);
    await page.fill('input[name="password"]', 'any');
    await page.click('button[type="submit"]');
    await page.waitForURL(`${base}/admin`);
    await page.waitForSelector('#whoami:has-text("signed in as")');
    return { context, page };
  };
  const sessionCookie = async (context: BrowserContext) => (await context.cookies(`${base}/admin`)).find((cookie) => cookie.name === 'oam_session')?.value;

  it('refuses every state-changing admin route from another site’s page, with the session cookie attached', async () => {
    const { context, page } = await signIn('alice');
    const schedulesBefore = await probe<{ n: number }>(stack.database, 'SELECT COUNT(*) AS n FROM schedules');
    const seen: { url: string; method: string; status: number }[] = [];
    context.on('response', (response) => {
      const request = response.request();
      if (request.url().startsWith(`${base}/admin/`)) seen.push({ url: request.url(), method: request.method(), status: response.status() });
    });
    const evilPage = await context.newPage();
    await evilPage.goto(`${evil}/`);
    const id = '00000000-0000-4000-8000-000000000001';
    // What a page may send another origin without asking (CORS "simple" requests): POST with a form's content type.
    const posts = [
      'conversation',
      'schedules',
      `schedules/${id}/run`,
      'triggers',
      `tasks/${id}/cancel`,
      `tasks/${id}/steer?text=x`,
      `approvals/${id}/approve`,
      `approvals/${id}/form?content=%7B%7D`,
      `approvals/${id}/choices/0`,
      `sessions/${id}/undo?task_id=${id}`,
      `sessions/${id}/fork`,
      'skills/reload',
      'oauth/logout',
    ];
    const sent = await evilPage.evaluate(
      async ({ base, posts }) => {
        const body = JSON.stringify({ request: 'forged', name: 'forged', cron: '* * * * *', work: { request: 'forged' } });
        for (const path of posts)
          await fetch(`${base}/admin/${path}`, { method: 'POST', mode: 'no-cors', credentials: 'include', headers: { 'Content-Type': 'text/plain' }, body });
        // PATCH and DELETE need a CORS preflight, which the service does not answer with an allowance: never sent.
        const refused: string[] = [];
        for (const method of ['PATCH', 'DELETE'])
          await fetch(`${base}/admin/schedules/00000000-0000-4000-8000-000000000001`, {
            method,
            credentials: 'include',
            headers: { 'Content-Type': 'application/json' },
            body: '{"enabled":false}',
          }).catch(() => refused.push(method));
        return refused;
      },
      { base, posts },
    );
    expect(sent).toEqual(['PATCH', 'DELETE']);
    const forged = seen.filter((entry) => entry.method === 'POST');
    expect(forged.map((entry) => entry.url.slice(`${base}/admin/`.length)).sort()).toEqual([...posts].sort());
    expect(forged.every((entry) => entry.status === 403)).toBe(true);
    expect(seen.filter((entry) => entry.method === 'PATCH' || entry.method === 'DELETE')).toEqual([]);
    // A form posted from there (a top-level navigation) is refused too: the person stays signed in.
    await evilPage.goto(`${evil}/logout-form`);
    await evilPage.waitForURL(`${base}/admin/oauth/logout`);
    expect(await evilPage.textContent('body')).toMatch(/cross-site admin request refused \(Sec-Fetch-Site: (same|cross)-site\)/);
    expect(await sessionCookie(context)).toBeDefined();
    expect(await page.evaluate(async () => (await fetch('/admin/me')).status)).toBe(200);
    expect(await probe<{ n: number }>(stack.database, 'SELECT COUNT(*) AS n FROM schedules')).toEqual(schedulesBefore);
    await context.close();
  });

  it('shows a login name and a request that are markup as text, and runs none of it', async () => {
    stack.ollama.enqueue({ content: 'Plain answer.' });
    const { context, page } = await signIn(MARKUP_USER);
    expect(await page.textContent('#whoami')).toBe(`signed in as ${MARKUP_USER} (admin)`);
    const request = '<script>window.__pwned=2</script><img src=x onerror="window.__pwned=3"> please';
    await page.goto(`${base}/admin#/chat`);
    await page.fill('#prompt', request);
    await page.press('#prompt', 'Enter');
    await page.waitForSelector('#turns li.turn .markdown');
    expect(await page.textContent('#turns li.turn p.request')).toBe(request);
    // The Tasks list shows the request and the owner too.
    await page.goto(`${base}/admin#/tasks`);
    await page.getByText(request).first().waitFor();
    expect(await page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned)).toBeUndefined();
    expect(await page.locator('img[src="x"]').count()).toBe(0);
    await context.close();
  });

  it('lets no parameter steer where the sign-in goes: the issuer gets the registered callback, the person lands on /admin', async () => {
    const steer = `return=${encodeURIComponent(evil)}&redirect_uri=${encodeURIComponent(`${evil}/cb`)}&next=%2F%2Fevil.example`;
    const login = await fetch(`${base}/admin/oauth/login?${steer}`, { redirect: 'manual' });
    expect(login.status).toBe(303);
    const authorize = new URL(login.headers.get('location')!);
    expect(authorize.origin).toBe(issuer.url);
    expect(authorize.searchParams.get('redirect_uri')).toBe(`${base}/admin/oauth/callback`);
    const { context, page } = await signIn('alice', `${base}/admin/oauth/login?${steer}`);
    expect(page.url()).toBe(`${base}/admin`);
    await context.close();
  });

  it('signs in over session cookies another page on this host planted (no fixation, no lock-out)', async () => {
    const context = await browser.newContext();
    const host = new URL(base).hostname;
    // Cookies are not kept apart by port: a page at another port of this host may set them, at a wider path too.
    await context.addCookies([
      { name: 'oam_session', value: 'planted-at-root', domain: host, path: '/' },
      { name: 'oam_session', value: 'planted-at-admin', domain: host, path: '/admin' },
      { name: 'oam_sign_in', value: 'planted', domain: host, path: '/' },
    ]);
    const page = await context.newPage();
    await page.goto(`${base}/admin`);
    expect(await page.evaluate(async () => (await fetch('/admin/me')).status)).toBe(401);
    await page.close();
    const { page: signedIn } = await signIn('alice', `${base}/admin`, context);
    const sessions = (await context.cookies(`${base}/admin`)).filter((cookie) => cookie.name === 'oam_session');
    expect(sessions).toHaveLength(1);
    expect(sessions[0]).toMatchObject({ path: '/admin', httpOnly: true, secure: true });
    expect(sessions[0].value).not.toMatch(/^planted/);
    expect(await signedIn.evaluate(async () => ((await (await fetch('/admin/me')).json()) as { user: string }).user)).toBe('alice');
    // Planted after sign-in, at a narrower path: two cookies reach that route, neither is used, and the answer clears both.
    await context.addCookies([{ name: 'oam_session', value: 'planted-later', domain: host, path: '/admin/me' }]);
    expect(await signedIn.evaluate(async () => (await fetch('/admin/me')).status)).toBe(401);
    expect((await context.cookies(`${base}/admin/me`)).filter((cookie) => cookie.name === 'oam_session')).toEqual([]);
    await context.close();
  });
});
