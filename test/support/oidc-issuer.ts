import { exportJWK, generateKeyPair, type JWK } from 'jose';
import { createHash, randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import Provider, { type ClientMetadata, type Configuration, type KoaContextWithOIDC } from 'oidc-provider';
import { freePort } from './service-process.js';

/** The scopes the test issuer grants for the service's resource (the service's default names). */
export const RESOURCE_SCOPES = ['mcp:exec', 'chat:exec', 'a2a:exec', 'admin'];

export type IssuerClient = ClientMetadata;

export async function signingKey(kid: string): Promise<{ privateJwk: JWK; privateKey: CryptoKey; kid: string }> {
  const pair = await generateKeyPair('RS256', { extractable: true });
  return { privateJwk: { ...(await exportJWK(pair.privateKey)), kid, alg: 'RS256', use: 'sig' }, privateKey: pair.privateKey, kid };
}

/**
 * A real OpenID provider (`oidc-provider`, its development login form) on loopback for the tests:
 * authorization code with PKCE, client credentials, RFC 8707 resource indicators (JWT access tokens
 * for the service's resource, with the requested scopes and the user's groups), introspection.
 * `rotate()` restarts it on the same port with another signing key.
 */
export class OidcIssuer {
  port = 0;
  private server: Server | null = null;
  key!: Awaited<ReturnType<typeof signingKey>>;
  /** Groups of each login name (what the groups claim carries). */
  groups: Record<string, string[]> = {};

  /** Access tokens for the resource are opaque (introspected) instead of JWTs, from the next one on. */
  opaque = false;

  constructor(private readonly clients: IssuerClient[]) {}

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  async start(): Promise<this> {
    this.port ||= await freePort();
    this.key ??= await signingKey('key-1');
    const provider = new Provider(this.url, this.configuration());
    const handle = provider.callback();
    this.server = createServer((req, res) => void handle(req, res));
    await new Promise<void>((done) => this.server!.listen(this.port, '127.0.0.1', done));
    return this;
  }

  /** The issuer starts signing with a new key and no longer publishes the old one. */
  async rotate(kid: string): Promise<void> {
    await this.stop();
    this.key = await signingKey(kid);
    await this.start();
  }

  async stop(): Promise<void> {
    const server = this.server;
    this.server = null;
    if (server) await new Promise((done) => server.close(done).closeAllConnections());
  }

  private configuration(): Configuration {
    const groups = () => this.groups;
    return {
      clients: this.clients,
      jwks: { keys: [this.key.privateJwk] as never },
      scopes: ['openid', 'profile', 'email', 'offline_access'],
      claims: { openid: ['sub'], email: ['email'], profile: ['name'] },
      pkce: { required: () => true },
      cookies: { keys: ['test-issuer-cookie-key'] },
      ttl: { AccessToken: 300, ClientCredentials: 300, Interaction: 600, Grant: 600, Session: 600, RefreshToken: 600, IdToken: 300, AuthorizationCode: 60 },
      features: {
        devInteractions: { enabled: true },
        clientCredentials: { enabled: true },
        // The service introspects with its own client: any registered client may ask about any token here.
        introspection: { enabled: true, allowedPolicy: () => true },
        revocation: { enabled: true },
        rpInitiatedLogout: { enabled: true },
        resourceIndicators: {
          enabled: true,
          defaultResource: () => undefined,
          useGrantedResource: () => true,
          getResourceServerInfo: () => ({
            scope: RESOURCE_SCOPES.join(' '),
            accessTokenFormat: this.opaque ? 'opaque' : 'jwt',
            accessTokenTTL: 300,
            jwt: { sign: { alg: 'RS256' } },
          }),
        },
      },
      findAccount: (_ctx: KoaContextWithOIDC, sub: string) => ({ accountId: sub, claims: () => ({ sub, email: `${sub}@example.com`, name: sub }) }),
      // People's tokens carry their groups (as Keycloak's group mapper adds them); machines have none.
      extraTokenClaims: (_ctx: KoaContextWithOIDC, token: { accountId?: string }) => (token.accountId ? { groups: groups()[token.accountId] ?? [] } : undefined),
      // Consent is given by the test login alone: every scope asked for is granted once the user has signed in.
      loadExistingGrant: async (ctx: KoaContextWithOIDC) => {
        const session = ctx.oidc.session;
        const client = ctx.oidc.client;
        if (!session?.accountId || !client) return undefined;
        const grant = new ctx.oidc.provider.Grant({ accountId: session.accountId, clientId: client.clientId });
        const scope = ctx.oidc.params?.scope;
        const requested = (typeof scope === 'string' ? scope : '').split(' ');
        grant.addOIDCScope(requested.filter((scope) => ['openid', 'profile', 'email', 'offline_access'].includes(scope)).join(' '));
        const resource = ctx.oidc.params?.resource;
        if (typeof resource === 'string') grant.addResourceScope(resource, requested.filter((scope) => RESOURCE_SCOPES.includes(scope)).join(' '));
        await grant.save();
        return grant;
      },
    } as Configuration;
  }
}

/** A client-credentials token straight from the token endpoint (what a machine caller's library does). */
export async function clientCredentialsToken(issuer: string, clientId: string, secret: string, params: { scope: string; resource: string }): Promise<string> {
  const response = await fetch(`${issuer}/token`, {
    method: 'POST',
    headers: { authorization: `Basic ${Buffer.from(`${clientId}:${secret}`).toString('base64')}`, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'client_credentials', ...params }),
  });
  const body = (await response.json()) as { access_token?: string };
  if (!body.access_token) throw new Error(`no token: ${JSON.stringify(body)}`);
  return body.access_token;
}

/** A person's token for `scope` at `resource`: the authorization-code flow with PKCE by a public client, login by the test. */
export async function userToken(issuer: string, login: string, params: { clientId: string; redirectUri: string; scope: string; resource: string }): Promise<string> {
  const verifier = randomBytes(32).toString('base64url');
  const authorize = new URL(`${issuer}/auth`);
  const state = randomBytes(8).toString('hex');
  authorize.search = new URLSearchParams({
    client_id: params.clientId,
    response_type: 'code',
    redirect_uri: params.redirectUri,
    scope: params.scope,
    resource: params.resource,
    state,
    code_challenge: createHash('sha256').update(verifier).digest('base64url'),
    code_challenge_method: 'S256',
  }).toString();
  const callback = await signInAt(authorize, login);
  if (callback.searchParams.get('state') !== state) throw new Error(`sign-in failed: ${callback}`);
  const response = await fetch(`${issuer}/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'authorization_code',
      code: callback.searchParams.get('code')!,
      redirect_uri: params.redirectUri,
      client_id: params.clientId,
      code_verifier: verifier,
      resource: params.resource,
    }),
  });
  const body = (await response.json()) as { access_token?: string };
  if (!body.access_token) throw new Error(`no token: ${JSON.stringify(body)}`);
  return body.access_token;
}

/** A cookie jar of one origin, enough to walk the issuer's login form with fetch. */
class Cookies {
  private readonly jar = new Map<string, string>();
  take(response: Response): void {
    for (const line of response.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const at = pair.indexOf('=');
      this.jar.set(pair.slice(0, at), pair.slice(at + 1));
    }
  }
  header(): string {
    return [...this.jar].map(([name, value]) => `${name}=${value}`).join('; ');
  }
}

/**
 * A person signing in at the issuer: follows the authorization URL, fills the development login
 * form (any password), and returns the redirect back to the client (with `code` and `state`).
 */
export async function signInAt(authorizationUrl: string | URL, login: string): Promise<URL> {
  const cookies = new Cookies();
  let url = new URL(authorizationUrl);
  let body: URLSearchParams | undefined;
  for (let hop = 0; hop < 20; hop++) {
    const response = await fetch(url, {
      method: body ? 'POST' : 'GET',
      body,
      redirect: 'manual',
      headers: { cookie: cookies.header(), ...(body ? { 'content-type': 'application/x-www-form-urlencoded' } : {}) },
    });
    cookies.take(response);
    body = undefined;
    const location = response.headers.get('location');
    if (location) {
      const next = new URL(location, url);
      if (next.origin !== url.origin || !/^\/(auth|interaction)/.test(next.pathname)) return next;
      url = next;
      continue;
    }
    const html = await response.text();
    const action = /<form[^>]*action="([^"]+)"/.exec(html)?.[1];
    if (!action) throw new Error(`the issuer answered ${response.status} without a form: ${html.slice(0, 500)}`);
    url = new URL(action.replaceAll('&amp;', '&'), url);
    body = /name="login"/.test(html) ? new URLSearchParams({ prompt: 'login', login, password: 'any' }) : new URLSearchParams({ prompt: 'consent' });
  }
  throw new Error('the sign-in did not come back to the client');
}
