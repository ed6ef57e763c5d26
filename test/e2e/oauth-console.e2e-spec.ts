import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Browser, Page } from 'playwright-core';
import { probe } from '../support/database-probe.js';
import { useStack } from '../support/e2e-stack.js';
import { OidcIssuer } from '../support/oidc-issuer.js';
import { openBrowser } from '../support/browser.js';

const CONSOLE = { id: 'agent-console', secret: 'console-secret-0123456789' };

/** The admin console in auth.mode oauth, in a real browser: sign-in at the issuer (code + PKCE), the session cookie, sign-out. */
describe('auth.mode oauth: the console signs a person in at the issuer', () => {
  let issuer: OidcIssuer;
  let browser: Browser;
  let base = '';
  const stack = useStack({
    // The issuer first, with the console's redirect URIs on the service's origin; the configuration names the issuer.
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
      issuer.groups = { alice: ['agent-admins'], bob: ['dev'] };
      const oauth = { issuer: issuer.url, resource: base, admin_groups: ['agent-admins'], console: { client_id: CONSOLE.id, client_secret: CONSOLE.secret } };
      return { auth: { mode: 'oauth', oauth } };
    },
  });
  // After the stack's own afterAll: the service is gone by then.
  afterAll(() => issuer?.stop());

  /** The issuer's development login form: any password. */
  const logInAtIssuer = async (page: Page, login: string) => {
    await page.waitForURL(`${issuer.url}/**`);
    await page.fill('input[name="login"]', login);
    await page.fill('input[name="password"]', 'any');
    await page.click('button[type="submit"]');
  };

  beforeAll(async () => {
    browser = stack.closeOnStop(await openBrowser());
  });

  it('signs an admin in with the authorization-code flow, keeps the session in a Secure HttpOnly SameSite cookie, and signs out', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    page.setDefaultTimeout(10_000);
    await page.goto(`${base}/admin`);
    await page.click('#oauth-sign-in');
    const authorize = new URL(page.url());
    expect(authorize.origin).toBe(issuer.url);
    await logInAtIssuer(page, 'alice');
    await page.waitForURL(`${base}/admin`);
    await page.waitForSelector('#whoami:has-text("signed in as alice")');

    const [cookie] = (await context.cookies(`${base}/admin`)).filter((entry) => entry.name === 'oam_session');
    expect(cookie).toMatchObject({ httpOnly: true, secure: true, sameSite: 'Strict', path: '/admin' });
    // The cookie is the session of the admin API only: a script cannot read it, and the other surfaces do not take it.
    expect(await page.evaluate(() => document.cookie)).toBe('');
    expect(await page.evaluate(async () => (await fetch('/v1/models')).status)).toBe(401);
    expect(await page.evaluate(async () => (await fetch('/admin/me')).status)).toBe(200);

    await page.click('#sign-out');
    // oidc-provider asks whether to end its own session too, then comes back to the console.
    await page.waitForURL(`${issuer.url}/**`);
    await page.click('button[autofocus], button[type="submit"]');
    await page.waitForURL(`${base}/admin`);
    await page.waitForSelector('#oauth-sign-in');
    expect((await context.cookies(`${base}/admin`)).filter((entry) => entry.name === 'oam_session')).toEqual([]);
    await context.close();
  });

  it('refuses a callback that no sign-in in this browser started (forged or replayed), and audits it', async () => {
    const res = await fetch(`${base}/admin/oauth/callback?code=stolen&state=guessed&iss=${encodeURIComponent(issuer.url)}`);
    expect(res.status).toBe(400);
    // Issue 37 (round three): text the caller chose is never sniffed as HTML, nor framed.
    expect(res.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(res.headers.get('x-frame-options')).toBe('DENY');
    expect(await res.text()).toMatch(/^console sign-in failed: no sign-in in progress in this browser/);
    expect(res.headers.get('set-cookie')).not.toMatch(/oam_session=[^;]/);
    const login = await fetch(`${base}/admin/oauth/login`, { redirect: 'manual' });
    const pending = login.headers.get('set-cookie')!.split(';')[0];
    const forged = await fetch(`${base}/admin/oauth/callback?code=stolen&state=guessed&iss=${encodeURIComponent(issuer.url)}`, { headers: { cookie: pending } });
    expect(forged.status).toBe(400);
    expect(await forged.text()).toMatch(/state/);
    const [{ n }] = await probe<{ n: number }>(stack.database, "SELECT COUNT(*) AS n FROM audit_events WHERE action = 'admin.sign_in' AND outcome = 'rejected'");
    expect(Number(n)).toBe(2);
  });

  it('tells a signed-in person who is not an admin so, and offers to sign in as someone else', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    page.setDefaultTimeout(10_000);
    await page.goto(`${base}/admin`);
    await page.click('#oauth-sign-in');
    await logInAtIssuer(page, 'bob');
    await page.waitForURL(`${base}/admin`);
    await page.waitForSelector('text=not as an admin');
    await context.close();
  });
});
