import { bearerAuthChallengeResponse, getOAuthProtectedResourceMetadataUrl, OAuthError, OAuthErrorCode, verifyBearerToken, type AuthInfo } from '@modelcontextprotocol/server';
import { createHash } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { anonymous, type Caller, type Identified, type IdentityRefusal } from '../caller.js';
import { AccessTokenVerifier, IssuerUnavailable, type TokenIdentity } from './access-token-verifier.js';
import type { IssuerMetadata, OAuthSettings } from './issuer-metadata.js';
import { scopeOf, type Surface } from './oauth-surfaces.js';
import { clearReaching, cookieSentTwice, readCookie, SESSION_COOKIE } from './session-cookie.js';

/** A signed token is a few kilobytes; an Entra ID token with many groups stays under this. */
const MAX_AUTHORIZATION_BYTES = 16 * 1024;

/** Routes `auth.oauth.public_routes` may open: the same requests the surfaces serve there. */
export const PUBLIC_PATHS: Record<string, string> = { '/.well-known/agent-card.json': 'agent_card', '/v1/models': 'models' };

/**
 * `auth.mode: oauth`: the caller of a request is the subject of its `Authorization: Bearer` token
 * (on the admin surface, also the console's session cookie, which holds one), read from the headers
 * before any body byte. The MCP SDK's `verifyBearerToken` runs the checks and
 * `bearerAuthChallengeResponse` words the refusal: 401 with a `WWW-Authenticate` challenge naming the
 * protected resource metadata and the surface's scope (RFC 6750, RFC 9728), 403 `insufficient_scope`
 * for a valid token without it.
 */
export class BearerAdmission {
  readonly resourceMetadataUrl: string;
  private readonly verifier: AccessTokenVerifier;
  private readonly resource: URL;

  constructor(
    private readonly settings: OAuthSettings,
    metadata: IssuerMetadata,
    verifier = new AccessTokenVerifier(settings, metadata),
  ) {
    this.verifier = verifier;
    this.resource = new URL(settings.resource);
    this.resourceMetadataUrl = getOAuthProtectedResourceMetadataUrl(this.resource);
  }

  async identify(req: IncomingMessage, surface: Surface): Promise<Identified> {
    const address = req.socket.remoteAddress || null;
    const scope = scopeOf(surface, this.settings.scopes);
    const refusal = (fields: Omit<IdentityRefusal, 'action' | 'address'> & { action?: IdentityRefusal['action'] }): Identified => ({
      refusal: { action: 'auth.fail', address, ...fields },
    });
    const header = req.headersDistinct.authorization;
    if (header && header.length > 1) return refusal({ reason: 'Authorization sent more than once', headers: this.challenge(scope) });
    if (!header && surface === 'http' && cookieSentTwice(req, SESSION_COOKIE)) {
      // Ambiguous (another page on this host may have set one): neither is used, and both are cleared, so a new sign-in works.
      const headers = { ...this.challenge(scope), 'Set-Cookie': clearReaching(SESSION_COOKIE, req.url ?? '/') };
      return refusal({ reason: 'the session cookie was sent more than once; both were cleared: sign in again', headers });
    }
    const presented = header?.[0] ?? sessionToken(req, surface);
    if (presented === undefined) {
      if (this.isPublic(req)) return { caller: anonymous(address, surface) };
      // No credentials at all: RFC 6750 §3.1 says no error code, only where to get a token and for which scope.
      return refusal({ reason: 'no bearer token', headers: this.challenge(scope) });
    }
    const fingerprint = `sha256:${createHash('sha256').update(presented).digest('hex').slice(0, 16)}`;
    if (Buffer.byteLength(presented) > MAX_AUTHORIZATION_BYTES)
      return refusal({ reason: `Authorization longer than ${MAX_AUTHORIZATION_BYTES} bytes`, headers: this.challenge(scope), token: fingerprint });
    // The verifier's answer is kept: a token short of the scope still names whom the refusal is for.
    let info: AuthInfo | undefined;
    const verifier = { verifyAccessToken: async (token: string) => (info = await this.verifier.verifyAccessToken(token)) };
    // The admin surface's scope may also be met by an admin group, so the SDK checks no scope there and the group rule runs below.
    const requiredScopes = surface === 'http' ? [] : [scope];
    try {
      await verifyBearerToken(presented, { verifier, requiredScopes, resourceMetadataUrl: this.resourceMetadataUrl, expectedResource: this.resource });
    } catch (error) {
      if (error instanceof IssuerUnavailable) return refusal({ reason: error.message, status: 503, headers: { 'Retry-After': '5' }, token: fingerprint });
      // eslint-disable-next-line @typescript-eslint/no-unsafe-enum-comparison -- the SDK types OAuthError.code as a string that holds its enum's values
      const named = info && error instanceof OAuthError && error.code === OAuthErrorCode.InsufficientScope ? this.named(info, surface, address) : null;
      return refusal({ ...this.answer(error, scope), action: named ? 'auth.insufficient_scope' : 'auth.fail', caller: named?.caller, token: named?.jti ?? fingerprint });
    }
    const { caller, jti } = this.named(info!, surface, address);
    if (surface === 'http' && !caller.admin) {
      const error = new OAuthError(OAuthErrorCode.InsufficientScope, `admin rights are required: the ${scope} scope or a group in auth.oauth.admin_groups`);
      return refusal({ ...this.answer(error, scope), action: 'auth.insufficient_scope', caller, token: jti ?? fingerprint });
    }
    return { caller };
  }

  /** The SDK's answer to a failed check, as a refusal: its status, its challenge, its description. */
  private answer(error: unknown, scope: string): Pick<IdentityRefusal, 'reason' | 'status' | 'headers'> {
    const response = bearerAuthChallengeResponse(error, { requiredScopes: [scope], resourceMetadataUrl: this.resourceMetadataUrl });
    const status = response.status === 403 ? 403 : 401;
    const challenge = response.headers.get('www-authenticate');
    const reason = error instanceof OAuthError ? error.message : 'the token could not be verified';
    return { reason, status, headers: challenge ? { 'WWW-Authenticate': challenge } : this.challenge(scope) };
  }

  private challenge(scope: string): Record<string, string> {
    return { 'WWW-Authenticate': `Bearer resource_metadata="${this.resourceMetadataUrl}", scope="${scope}"` };
  }

  private named(info: AuthInfo, surface: Surface, address: string | null): { caller: Caller; jti: string | null } {
    const { user, groups, email, jti } = (info.extra as { identity: TokenIdentity }).identity;
    const admin = info.scopes.includes(this.settings.scopes.admin) || groups.some((group) => this.settings.adminGroups.includes(group));
    return { caller: { user, email, groups, admin, transport: surface, address, client: null }, jti: jti && `jti:${jti}` };
  }

  private isPublic(req: IncomingMessage): boolean {
    const route = PUBLIC_PATHS[(req.url ?? '').split('?')[0]];
    return req.method === 'GET' && route !== undefined && this.settings.publicRoutes.includes(route);
  }
}

/** On the admin surface only, the console's session cookie stands for the header (same token, same checks). */
function sessionToken(req: IncomingMessage, surface: Surface): string | undefined {
  if (surface !== 'http') return undefined;
  const token = readCookie(req, SESSION_COOKIE);
  return token === undefined ? undefined : `Bearer ${token}`;
}
