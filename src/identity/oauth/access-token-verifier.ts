import { OAuthError, OAuthErrorCode, type AuthInfo, type OAuthTokenVerifier } from '@modelcontextprotocol/server';
import { createRemoteJWKSet, errors, jwtVerify, type JWTPayload, type JWTVerifyGetKey } from 'jose';
import * as oauth from 'oauth4webapi';
import { emailOf } from '../caller.js';
import { SYSTEM_CLOCK, type Clock } from '../../common/clock.js';
import { identityClaimsProblem, MAX_IDENTITY_HEADER_BYTES } from '../identity-headers.js';
import { insecureAllowed, type IssuerMetadata, type OAuthSettings } from './issuer-metadata.js';

/** Who a verified token names: what becomes the Caller, and what the audit log may keep of the token. */
export interface TokenIdentity {
  user: string;
  groups: string[];
  /** The `email_claim` when it holds an email, for an MCP server's `{email}` header. */
  email: string | null;
  /** The token's `jti`, when it has one: the audit log stores it, never the token. */
  jti: string | null;
}

const INTROSPECTION_TIMEOUT_MS = 5_000;
const JWS_COMPACT = /^[\w-]+\.[\w-]+\.[\w-]*$/;

/** Thrown for a token that cannot be checked now (the issuer's keys or introspection unreachable): 503, not 401. */
export class IssuerUnavailable extends Error {}

const invalid = (description: string) => new OAuthError(OAuthErrorCode.InvalidToken, description);

/**
 * The resource server's token check, behind the MCP SDK's `verifyBearerToken` (which parses the
 * header, compares the resource, enforces the surface's scope and the expiry): a JWT access token is
 * verified locally against the issuer's keys (fetched from its JWKS, cached, fetched again for an
 * unknown key id at most once per `jwks_cooldown_s`; algorithms pinned, `none` and HMAC never
 * accepted), with `iss`, `aud`, `exp` and `nbf` checked within `clock_skew_s`; any other token goes
 * to RFC 7662 introspection when configured, authenticated with the service's client credentials.
 */
export class AccessTokenVerifier implements OAuthTokenVerifier {
  private readonly keys: JWTVerifyGetKey | null;
  private readonly audience: string;
  private readonly resource: URL;
  private readonly introspection: { server: oauth.AuthorizationServer; client: oauth.Client; auth: oauth.ClientAuth } | null;

  /** `keys`: the issuer's key set as jose resolves it; by default fetched from the JWKS URL. `clock`: the time `exp` and `nbf` are checked at. */
  constructor(
    private readonly settings: OAuthSettings,
    metadata: IssuerMetadata,
    keys?: JWTVerifyGetKey,
    private readonly clock: Clock = SYSTEM_CLOCK,
  ) {
    const jwksUrl = metadata.jwksUrl(settings);
    this.keys = keys ?? (jwksUrl ? createRemoteJWKSet(new URL(jwksUrl), { cooldownDuration: settings.jwksCooldownS * 1000, timeoutDuration: 5_000 }) : null);
    this.audience = settings.audience || settings.resource;
    this.resource = new URL(settings.resource);
    const introspectionUrl = metadata.introspectionUrl(settings);
    const { clientId, clientSecret } = settings.introspection;
    this.introspection =
      clientId && introspectionUrl
        ? { server: { ...metadata.server, introspection_endpoint: introspectionUrl }, client: { client_id: clientId }, auth: oauth.ClientSecretBasic(clientSecret) }
        : null;
  }

  async verifyAccessToken(token: string): Promise<AuthInfo> {
    if (JWS_COMPACT.test(token) && this.keys) return this.fromJwt(token);
    if (this.introspection) return this.fromIntrospection(token);
    throw invalid(this.keys ? 'not a JWT access token (no introspection is configured for opaque tokens)' : 'no way to verify tokens (the issuer publishes no keys)');
  }

  private async fromJwt(token: string): Promise<AuthInfo> {
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(token, this.keys!, {
        issuer: this.settings.issuer,
        audience: this.audience,
        algorithms: this.settings.algorithms,
        clockTolerance: this.settings.clockSkewS,
        currentDate: new Date(this.clock.now()),
        requiredClaims: ['exp'],
      }));
    } catch (error) {
      throw this.jwtFailure(error);
    }
    return this.authInfo(token, payload, this.qualified(scopesOf(payload)));
  }

  private jwtFailure(error: unknown): Error {
    if (error instanceof errors.JWKSTimeout || !(error instanceof errors.JOSEError))
      return new IssuerUnavailable(`the issuer's keys could not be fetched (${(error as Error).message})`);
    // A JWKS answer that is not a key set (an HTML error page, a 5xx) surfaces as the generic error.
    if (error.code === 'ERR_JOSE_GENERIC') return new IssuerUnavailable(`the issuer's keys could not be fetched (${error.message})`);
    if (error instanceof errors.JWTClaimValidationFailed) return invalid(`the token's ${error.claim} claim is not accepted (${error.reason})`);
    return invalid(`${DESCRIPTIONS[error.code] ?? 'the token could not be verified'} (${error.code})`);
  }

  private async fromIntrospection(token: string): Promise<AuthInfo> {
    const { server, client, auth } = this.introspection!;
    let answer: oauth.IntrospectionResponse;
    try {
      const response = await oauth.introspectionRequest(server, client, auth, token, {
        signal: AbortSignal.timeout(INTROSPECTION_TIMEOUT_MS),
        [oauth.allowInsecureRequests]: insecureAllowed(server.introspection_endpoint!),
      });
      answer = await oauth.processIntrospectionResponse(server, client, response);
    } catch (error) {
      throw new IssuerUnavailable(`token introspection failed (${(error as Error).message})`);
    }
    if (!answer.active) throw invalid('the token is not active (introspection)');
    // Introspection vouches for the token; what it says must still be about this issuer and this resource.
    if (answer.iss !== undefined && answer.iss !== this.settings.issuer) throw invalid('the token was issued by another issuer');
    const audiences = typeof answer.aud === 'string' ? [answer.aud] : (answer.aud ?? []);
    if (!audiences.includes(this.audience)) throw invalid('the token was not issued for this resource (aud)');
    const now = this.clock.now() / 1000;
    if (typeof answer.nbf === 'number' && answer.nbf > now + this.settings.clockSkewS) throw invalid('the token is not valid yet (nbf)');
    return this.authInfo(token, answer, this.qualified((answer.scope ?? '').split(' ').filter(Boolean)));
  }

  /**
   * Entra ID has clients ask for a scope by its full name (`https://agent.example.com/Mcp.Exec`) and writes
   * the short one (`Mcp.Exec`) into the token: a configured full name is met by its last segment.
   */
  private qualified(scopes: string[]): string[] {
    const full = Object.values(this.settings.scopes).filter((scope) => scope.includes('/') && scopes.includes(scope.slice(scope.lastIndexOf('/') + 1)));
    return [...new Set([...scopes, ...full])];
  }

  private authInfo(token: string, claims: JWTPayload, scopes: string[]): AuthInfo {
    const identity = this.identityOf(claims);
    return {
      token,
      clientId: typeof claims.client_id === 'string' ? claims.client_id : typeof claims.azp === 'string' ? claims.azp : '',
      scopes,
      // The SDK compares expiresAt with its clock strictly; the configured skew applies to it too.
      expiresAt: typeof claims.exp === 'number' ? claims.exp + this.settings.clockSkewS : undefined,
      // jose (or introspection) has checked `aud`; the SDK's resource comparison then has this service's resource.
      resource: this.resource,
      extra: { identity },
    };
  }

  private identityOf(claims: JWTPayload): TokenIdentity {
    const { userClaim, groupsClaim, emailClaim } = this.settings;
    const named = claims[userClaim];
    let user: string;
    if (typeof named === 'string' && named.length > 0) user = named;
    // A machine caller (client credentials) has no subject: it is named by its client, apart from any person.
    else if (claims.sub === undefined && typeof claims.client_id === 'string' && claims.client_id) user = `client:${claims.client_id}`;
    else throw invalid(`the token has no ${userClaim} claim`);
    // As long as a proxy header may be: the user names Tasks, sessions and audit events.
    if (Buffer.byteLength(user) > MAX_IDENTITY_HEADER_BYTES) throw invalid(`the ${userClaim} claim is longer than ${MAX_IDENTITY_HEADER_BYTES} bytes`);
    const problem = identityClaimsProblem([
      { name: userClaim, value: user },
      { name: groupsClaim, value: claims[groupsClaim] },
      { name: emailClaim, value: claims[emailClaim] },
    ]);
    if (problem) throw invalid(problem);
    const claim = claims[groupsClaim];
    const groups = Array.isArray(claim) ? claim.filter((group): group is string => typeof group === 'string') : [];
    return { user, groups, email: emailOf(claims[emailClaim]), jti: typeof claims.jti === 'string' ? claims.jti.slice(0, 200) : null };
  }
}

/**
 * The scopes a JWT grants: `scope` (RFC 9068, space-separated), `scp` (Okta: a list; Entra ID: a
 * string) and `roles` (Entra ID's application permissions, what a client-credentials token carries).
 */
function scopesOf(payload: JWTPayload): string[] {
  const words = (value: unknown) => (typeof value === 'string' ? value.split(' ') : Array.isArray(value) ? value.filter((item): item is string => typeof item === 'string') : []);
  return [...new Set([...words(payload.scope), ...words(payload.scp), ...(Array.isArray(payload.roles) ? words(payload.roles) : [])])].filter(Boolean);
}

const DESCRIPTIONS: Record<string, string> = {
  ERR_JWT_EXPIRED: 'the token has expired',
  ERR_JWS_SIGNATURE_VERIFICATION_FAILED: 'the signature does not verify',
  ERR_JWKS_NO_MATCHING_KEY: "the token is not signed by one of the issuer's keys",
  ERR_JWKS_MULTIPLE_MATCHING_KEYS: "the token's key id matches more than one key",
  ERR_JOSE_ALG_NOT_ALLOWED: 'the signing algorithm is not allowed',
  ERR_JWS_INVALID: 'not a valid signed token',
  ERR_JWT_INVALID: 'not a valid JWT',
};
