import * as oauth from 'oauth4webapi';
import type { AgentConfig } from '../../config/agent-config.js';

export type OAuthSettings = AgentConfig['auth']['oauth'];

const DISCOVERY_TIMEOUT_MS = 10_000;

/** The well-known documents tried, in order: RFC 8414 first (what MCP clients read), then OpenID discovery. */
const ALGORITHMS = ['oauth2', 'oidc'] as const;

/** Plain http is accepted by the configuration only for an issuer on loopback (a local test issuer). */
export const insecureAllowed = (url: string) => new URL(url).protocol === 'http:';

/**
 * The authorization server's metadata (RFC 8414, or OpenID Connect discovery), fetched once at
 * start-up: the `issuer` it states must be the configured one, byte for byte (the mix-up defence of
 * RFC 8414 §3.3). The JWKS and introspection URLs default from it.
 */
export class IssuerMetadata {
  constructor(
    readonly server: oauth.AuthorizationServer,
    /** The document it was read from, for the Agent Card's security schemes. */
    readonly documentUrl: string,
  ) {}

  static async discover(settings: OAuthSettings, timeoutMs = DISCOVERY_TIMEOUT_MS): Promise<IssuerMetadata> {
    const issuer = new URL(settings.issuer);
    const failures: string[] = [];
    for (const algorithm of ALGORITHMS) {
      try {
        const response = await oauth.discoveryRequest(issuer, {
          algorithm,
          signal: AbortSignal.timeout(timeoutMs),
          [oauth.allowInsecureRequests]: insecureAllowed(settings.issuer),
        });
        const server = await oauth.processDiscoveryResponse(issuer, response);
        return new IssuerMetadata(server, response.url);
      } catch (error) {
        failures.push(`${algorithm === 'oidc' ? 'openid-configuration' : 'oauth-authorization-server'}: ${reasonOf(error)}`);
      }
    }
    throw new Error(`the metadata of ${settings.issuer} could not be read (${failures.join('; ')})`);
  }

  /** Where the issuer's signing keys are: `auth.oauth.jwks_url`, else the metadata's `jwks_uri`. */
  jwksUrl(settings: OAuthSettings): string | null {
    return settings.jwksUrl || this.server.jwks_uri || null;
  }

  introspectionUrl(settings: OAuthSettings): string | null {
    return settings.introspection.url || this.server.introspection_endpoint || null;
  }
}

export function reasonOf(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = error.cause instanceof Error ? `: ${error.cause.message}` : '';
  return `${error.message}${cause}`;
}
