import { createRemoteJWKSet, errors, jwtVerify, type JWTPayload } from 'jose';
import type { AgentConfig } from '../config/agent-config.js';
import { emailOf } from './caller.js';
import { identityClaimsProblem, MAX_IDENTITY_HEADER_BYTES } from './identity-headers.js';

/**
 * Verifies the signed identity assertion of an SSO proxy (Pomerium, Cloudflare Access, oauth2-proxy
 * ID tokens...) against a pinned JWKS URL, issuer, audience and explicit algorithm list; the JWKS is
 * never derived from the token. Unknown key ids refetch the JWKS at most once per cooldown.
 */
export class JwtAssertions {
  private readonly keys: ReturnType<typeof createRemoteJWKSet>;

  constructor(private readonly auth: AgentConfig['auth']) {
    this.keys = createRemoteJWKSet(new URL(auth.jwksUrl), { cooldownDuration: 30_000, cacheMaxAge: 600_000 });
  }

  async verify(token: string): Promise<{ user: string; groups: string[]; email: string | null } | { error: string }> {
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(token, this.keys, {
        issuer: this.auth.issuer,
        audience: this.auth.audience,
        algorithms: this.auth.algorithms,
        clockTolerance: 60,
        requiredClaims: ['exp'],
      }));
    } catch (error) {
      return { error: error instanceof errors.JOSEError ? error.code : 'unverifiable' };
    }
    const user = payload[this.auth.userClaim] ?? payload.sub;
    if (typeof user !== 'string' || user.length === 0) return { error: `no ${this.auth.userClaim} claim` };
    // As long as a proxy header may be: the user names Tasks, sessions and audit events (320 characters there).
    if (Buffer.byteLength(user) > MAX_IDENTITY_HEADER_BYTES) return { error: `${this.auth.userClaim} claim longer than ${MAX_IDENTITY_HEADER_BYTES} bytes` };
    const problem = identityClaimsProblem([
      { name: this.auth.userClaim, value: user },
      { name: this.auth.groupsClaim, value: payload[this.auth.groupsClaim] },
      { name: this.auth.emailClaim, value: payload[this.auth.emailClaim] },
    ]);
    if (problem) return { error: problem.replace(/^the /, '') };
    const claim = payload[this.auth.groupsClaim];
    const groups = Array.isArray(claim) ? claim.filter((group): group is string => typeof group === 'string') : [];
    return { user, groups, email: emailOf(payload[this.auth.emailClaim]) };
  }
}
