import { Controller, Get, HttpCode, Logger, NotFoundException, Optional, Post, Req, Res } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import * as client from 'openid-client';
import { AuditService } from '../audit/audit.service.js';
import { AppConfig } from '../config/app-config.js';
import { anonymous } from '../identity/caller.js';
import { insecureAllowed, IssuerMetadata, reasonOf, type OAuthSettings } from '../identity/oauth/issuer-metadata.js';
import { clearCookie, clearReaching, readCookie, SESSION_COOKIE, setCookie, SIGN_IN_COOKIE } from '../identity/oauth/session-cookie.js';

const SIGN_IN_PATH = '/admin/oauth';
const CALLBACK_PATH = `${SIGN_IN_PATH}/callback`;
const SIGN_IN_TTL_S = 600;
/** When the issuer states no lifetime for the access token, the session lasts this long (the token's own exp still rules). */
const DEFAULT_SESSION_S = 3600;

interface PendingSignIn {
  verifier: string;
  state: string;
  nonce: string;
}

/**
 * The admin console's sign-in in `auth.mode: oauth`: the authorization-code flow with PKCE (S256),
 * state and nonce, against the same issuer, for an access token naming this service as its resource
 * (RFC 8707) with the console's scopes. The token is the session: it is kept in
 * an HttpOnly, Secure, SameSite=Strict cookie scoped to /admin and checked on every admin request
 * exactly like a bearer token, so the session ends when the token expires (or at sign-out). In the
 * other modes, and without `auth.oauth.console.client_id`, its routes answer 404.
 */
@ApiExcludeController()
@Controller('admin/oauth')
export class AdminSignInController {
  private readonly logger = new Logger('ConsoleSignIn');
  private readonly settings: OAuthSettings;
  private readonly client: client.Configuration | null;
  private readonly redirectUri: string;
  private readonly home: string;

  constructor(
    config: AppConfig,
    private readonly audit: AuditService,
    @Optional() metadata?: IssuerMetadata,
  ) {
    this.settings = config.auth.oauth;
    const base = this.settings.resource.replace(/\/$/, '');
    this.redirectUri = `${base}${CALLBACK_PATH}`;
    this.home = `${base}/admin`;
    const { clientId, clientSecret } = this.settings.console;
    this.client =
      clientId && metadata
        ? new client.Configuration(metadata.server, clientId, clientSecret || undefined, clientSecret ? client.ClientSecretBasic(clientSecret) : client.None())
        : null;
    if (this.client && insecureAllowed(this.settings.issuer)) client.allowInsecureRequests(this.client);
  }

  @Get('login')
  async login(@Res() res: Response): Promise<void> {
    const config = this.configured();
    const pending: PendingSignIn = { verifier: client.randomPKCECodeVerifier(), state: client.randomState(), nonce: client.randomNonce() };
    const url = client.buildAuthorizationUrl(config, {
      redirect_uri: this.redirectUri,
      // No admin scope is asked for: an issuer may grant any scope a client asks for; admins are told by their groups
      // (or by an admin scope the issuer adds by its own policy, or that auth.oauth.console.scopes names).
      scope: this.settings.console.scopes,
      code_challenge: await client.calculatePKCECodeChallenge(pending.verifier),
      code_challenge_method: 'S256',
      state: pending.state,
      nonce: pending.nonce,
      resource: this.settings.resource,
    });
    const cookie = setCookie(SIGN_IN_COOKIE, Buffer.from(JSON.stringify(pending)).toString('base64url'), { path: SIGN_IN_PATH, maxAgeS: SIGN_IN_TTL_S, sameSite: 'Lax' });
    // Any sign-in cookie another page planted where the callback would also get it goes first (else: two, refused).
    res.set({ 'Set-Cookie': [cookie, ...clearReaching(SIGN_IN_COOKIE, CALLBACK_PATH, SIGN_IN_PATH)], 'Cache-Control': 'no-store' }).redirect(303, url.href);
  }

  @Get('callback')
  async callback(@Req() req: Request, @Res() res: Response): Promise<void> {
    const config = this.configured();
    const pending = pendingOf(readCookie(req, SIGN_IN_COOKIE));
    const done = clearCookie(SIGN_IN_COOKIE, SIGN_IN_PATH);
    const currentUrl = new URL(this.redirectUri);
    currentUrl.search = new URL(req.originalUrl, 'http://callback').search;
    let tokens: Awaited<ReturnType<typeof client.authorizationCodeGrant>>;
    try {
      if (!pending) throw new Error('no sign-in in progress in this browser (or it took longer than 10 minutes)');
      tokens = await client.authorizationCodeGrant(
        config,
        currentUrl,
        { pkceCodeVerifier: pending.verifier, expectedState: pending.state, expectedNonce: pending.nonce, idTokenExpected: true },
        { resource: this.settings.resource },
      );
    } catch (error) {
      const reason = `console sign-in failed: ${reasonOf(error)}`;
      this.logger.warn(reason);
      await this.audit.record({ caller: anonymous(req.socket.remoteAddress ?? null), action: 'admin.sign_in', outcome: 'rejected', detail: { reason } });
      // nosniff: the text holds what the issuer (or a forged callback URL) chose; no browser may take it for HTML.
      res
        .status(400)
        .set({ 'Set-Cookie': done, 'Content-Type': 'text/plain; charset=utf-8', 'Cache-Control': 'no-store', 'X-Content-Type-Options': 'nosniff', 'X-Frame-Options': 'DENY' })
        .send(`${reason}\n\nStart again: ${this.home}\n`);
      return;
    }
    const session = setCookie(SESSION_COOKIE, tokens.access_token, { path: '/admin', maxAgeS: tokens.expires_in ?? DEFAULT_SESSION_S, sameSite: 'Strict' });
    // Whether the token makes its holder an admin is decided where every admin request is: the console asks /admin/me next.
    // The new session replaces whatever session cookie was planted before (no fixation, and no two of them).
    res.set({ 'Set-Cookie': [done, session, ...clearReaching(SESSION_COOKIE, CALLBACK_PATH, '/admin')], 'Cache-Control': 'no-store' }).redirect(303, this.home);
  }

  /** Ends the console's session here, and at the issuer when it has an end-session endpoint (where the console goes next). */
  @Post('logout')
  @HttpCode(200)
  logout(@Res() res: Response): void {
    const config = this.configured();
    const endSession = config.serverMetadata().end_session_endpoint
      ? client.buildEndSessionUrl(config, { client_id: config.clientMetadata().client_id, post_logout_redirect_uri: this.home }).href
      : this.home;
    res.set({ 'Set-Cookie': clearCookie(SESSION_COOKIE, '/admin'), 'Cache-Control': 'no-store' }).json({ redirect: endSession });
  }

  private configured(): client.Configuration {
    if (!this.client) throw new NotFoundException('the console has no sign-in here: it needs auth.mode oauth and auth.oauth.console.client_id');
    return this.client;
  }
}

function pendingOf(cookie: string | undefined): PendingSignIn | null {
  if (!cookie) return null;
  try {
    const value = JSON.parse(Buffer.from(cookie, 'base64url').toString('utf8')) as Partial<PendingSignIn>;
    return typeof value.verifier === 'string' && typeof value.state === 'string' && typeof value.nonce === 'string' ? (value as PendingSignIn) : null;
  } catch {
    return null;
  }
}
