import { beforeAll, describe, expect, it } from '@jest/globals';
import { createLocalJWKSet, exportJWK, generateKeyPair, SignJWT, type JWK } from 'jose';
import type { IncomingMessage } from 'node:http';
import { agentCardOf } from '../../src/a2a/agent-card.js';
import { validateConfig } from '../../src/config/agent-config.js';
import type { IdentityRefusal } from '../../src/identity/caller.js';
import { AccessTokenVerifier } from '../../src/identity/oauth/access-token-verifier.js';
import { BearerAdmission } from '../../src/identity/oauth/bearer-admission.js';
import { IssuerMetadata } from '../../src/identity/oauth/issuer-metadata.js';
import type { Surface } from '../../src/identity/oauth/oauth-surfaces.js';
import { ManualClock } from '../support/manual-clock.js';

const ISSUER = 'https://sso.example.com/realms/acme';
const RESOURCE = 'https://agent.example.com';
const METADATA_URL = `${RESOURCE}/.well-known/oauth-protected-resource`;
const now = () => Math.floor(Date.now() / 1000);

const settingsWith = (oauth: Record<string, unknown> = {}) =>
  validateConfig({ server: { host: '0.0.0.0' }, auth: { mode: 'oauth', oauth: { issuer: ISSUER, resource: RESOURCE, admin_groups: ['agent-admins'], ...oauth } } }).auth.oauth;

/** A request as node:http hands it over: only what identification reads. */
function request(headers: Record<string, string | string[]> = {}, target: { method?: string; url?: string } = {}): IncomingMessage {
  const distinct = Object.fromEntries(Object.entries(headers).map(([name, value]) => [name, Array.isArray(value) ? value : [value]]));
  const joined = Object.fromEntries(Object.entries(headers).map(([name, value]) => [name, Array.isArray(value) ? value.join(', ') : value]));
  return {
    headersDistinct: distinct,
    headers: joined,
    socket: { remoteAddress: '10.0.0.7' },
    method: target.method ?? 'POST',
    url: target.url ?? '/mcp',
  } as unknown as IncomingMessage;
}

describe('OAuth bearer admission (token checks, challenges, scopes per surface)', () => {
  let key: CryptoKey;
  let otherKey: CryptoKey;
  let jwk: JWK;
  let admission: BearerAdmission;

  const token = (claims: Record<string, unknown> = {}, options: { alg?: string; kid?: string; key?: CryptoKey | Uint8Array; iss?: string; aud?: string; exp?: number } = {}) =>
    new SignJWT({ scope: 'mcp:exec', client_id: 'claude-code', jti: 'token-1', groups: ['dev'], ...claims })
      .setProtectedHeader({ alg: options.alg ?? 'RS256', kid: options.kid ?? 'k1', typ: 'at+jwt' })
      .setIssuer(options.iss ?? ISSUER)
      .setAudience(options.aud ?? RESOURCE)
      .setSubject('alice')
      .setIssuedAt()
      .setExpirationTime(options.exp ?? now() + 300)
      .sign(options.key ?? key);
  const admissionWith = (oauth: Record<string, unknown> = {}, clock?: ManualClock) => {
    const settings = settingsWith(oauth);
    const metadata = new IssuerMetadata({ issuer: ISSUER }, `${ISSUER}/.well-known/openid-configuration`);
    return new BearerAdmission(settings, metadata, new AccessTokenVerifier(settings, metadata, createLocalJWKSet({ keys: [jwk] }), clock));
  };
  const identify = (headers: Record<string, string | string[]>, surface: Surface = 'mcp-http', target?: { method?: string; url?: string }, using = admission) =>
    using.identify(request(headers, target), surface);
  const refusalOf = async (...args: Parameters<typeof identify>): Promise<IdentityRefusal> => {
    const identified = await identify(...args);
    if (!('refusal' in identified)) throw new Error(`admitted ${identified.caller.user}`);
    return identified.refusal;
  };
  const bearer = (value: string) => ({ authorization: `Bearer ${value}` });

  beforeAll(async () => {
    const pair = await generateKeyPair('RS256', { extractable: true });
    key = pair.privateKey;
    jwk = { ...(await exportJWK(pair.publicKey)), kid: 'k1', alg: 'RS256' };
    otherKey = (await generateKeyPair('RS256')).privateKey;
    admission = admissionWith();
  });

  it('admits a valid token as the same Caller the other modes produce', async () => {
    expect(await identify(bearer(await token()))).toEqual({
      caller: { user: 'alice', email: null, groups: ['dev'], admin: false, transport: 'mcp-http', address: '10.0.0.7', client: null },
    });
  });

  it("carries the email_claim's email for an MCP server's {email} header, and no claim that is not an email", async () => {
    const emailOf = async (claims: Record<string, unknown>, using = admission) => {
      const identified = await identify(bearer(await token(claims)), 'mcp-http', undefined, using);
      return 'caller' in identified ? identified.caller.email : 'refused';
    };
    expect(await emailOf({ email: 'alice@example.com' })).toBe('alice@example.com');
    expect(await emailOf({ email: 'not an email' })).toBeNull();
    expect(await emailOf({ email: ['alice@example.com'] })).toBeNull();
    expect(await emailOf({ mail: 'a@example.com', email: 'b@example.com' }, admissionWith({ email_claim: 'mail' }))).toBe('a@example.com');
  });

  it('answers no token with the RFC 9728 challenge and no error code (RFC 6750 §3.1)', async () => {
    expect(await refusalOf({})).toEqual({
      reason: 'no bearer token',
      action: 'auth.fail',
      address: '10.0.0.7',
      headers: { 'WWW-Authenticate': `Bearer resource_metadata="${METADATA_URL}", scope="mcp:exec"` },
    });
    expect((await refusalOf({}, 'chat')).headers!['WWW-Authenticate']).toContain('scope="chat:exec"');
  });

  it.each([
    ['expired beyond the clock skew', () => token({}, { exp: now() - 61 }), /exp/],
    ['from another issuer', () => token({}, { iss: 'https://evil.example.com' }), /iss/],
    ['for another audience', () => token({}, { aud: 'https://other.example.com' }), /aud/],
    ['not valid yet', () => token({ nbf: now() + 600 }), /nbf/],
    ['signed by another key', () => token({}, { key: otherKey }), /signature/],
    ['signed by an unknown key id', () => token({}, { kid: 'k2' }), /not signed by one of the issuer's keys/],
    ['HS256 with the public key as secret', async () => token({}, { alg: 'HS256', key: new TextEncoder().encode(JSON.stringify(jwk)) }), /algorithm is not allowed/],
    ['alg none', async () => `${Buffer.from('{"alg":"none"}').toString('base64url')}.${(await token()).split('.')[1]}.`, /algorithm is not allowed|not a valid/],
    [
      'without exp',
      async () => new SignJWT({ scope: 'mcp:exec' }).setProtectedHeader({ alg: 'RS256', kid: 'k1' }).setIssuer(ISSUER).setAudience(RESOURCE).setSubject('alice').sign(key),
      /exp/,
    ],
    ['opaque, with no introspection configured', async () => 'opaque-token-value', /not a JWT access token/],
  ])('refuses a token %s: 401 invalid_token, audited by a hash', async (_name, make, reason) => {
    const refusal = await refusalOf(bearer(await make()));
    expect(refusal).toMatchObject({ action: 'auth.fail', reason: expect.stringMatching(reason), token: expect.stringMatching(/^sha256:[0-9a-f]{16}$/) });
    expect(refusal.status ?? 401).toBe(401);
    expect(refusal.headers!['WWW-Authenticate']).toMatch(
      new RegExp(`^Bearer error="invalid_token", error_description="[^"]*", scope="mcp:exec", resource_metadata="${METADATA_URL}"$`),
    );
  });

  it('accepts a token expired within clock_skew_s', async () => {
    expect(await identify(bearer(await token({}, { exp: now() - 30 })))).toHaveProperty('caller');
    expect(await identify(bearer(await token({}, { exp: now() - 30 })), 'mcp-http', undefined, admissionWith({ clock_skew_s: 0 }))).toHaveProperty('refusal');
  });

  it("checks exp and nbf at the service's clock: a token expires as the clock passes exp and the skew, with no wait", async () => {
    const clock = new ManualClock(Date.now());
    const timed = admissionWith({ clock_skew_s: 60 }, clock);
    const valid = await token({ nbf: now() + 30 }, { exp: now() + 300 });
    // nbf 30 s ahead is within the 60 s skew: admitted now; exp 300 s ahead, plus the skew, ends it.
    expect(await identify(bearer(valid), 'mcp-http', undefined, timed)).toHaveProperty('caller');
    clock.advance(300_000 + 59_000);
    expect(await identify(bearer(valid), 'mcp-http', undefined, timed)).toHaveProperty('caller');
    clock.advance(2_000);
    expect((await refusalOf(bearer(valid), 'mcp-http', undefined, timed)).reason).toMatch(/exp/);
  });

  it('answers a valid token without the surface scope 403 insufficient_scope, naming the caller and the jti', async () => {
    const refusal = await refusalOf(bearer(await token({ scope: 'chat:exec' })));
    expect(refusal).toMatchObject({ status: 403, action: 'auth.insufficient_scope', caller: { user: 'alice' }, token: 'jti:token-1' });
    expect(refusal.headers!['WWW-Authenticate']).toBe(
      `Bearer error="insufficient_scope", error_description="Insufficient scope", scope="mcp:exec", resource_metadata="${METADATA_URL}"`,
    );
    expect(await identify(bearer(await token({ scope: 'chat:exec' })), 'chat')).toHaveProperty('caller.user', 'alice');
  });

  it('reads scopes from scope, scp (a list or a string) and roles', async () => {
    for (const claims of [
      { scope: undefined, scp: ['mcp:exec'] },
      { scope: undefined, scp: 'openid mcp:exec' },
      { scope: undefined, roles: ['mcp:exec'] },
    ]) {
      expect(await identify(bearer(await token(claims)))).toHaveProperty('caller.user', 'alice');
    }
  });

  it('takes renamed scopes, the configured user and groups claims, and names machine callers by client', async () => {
    const renamed = admissionWith({ scopes: { mcp: 'Agent.Mcp' }, user_claim: 'preferred_username', groups_claim: 'grp' });
    expect(await identify(bearer(await token({ scope: 'Agent.Mcp', preferred_username: 'alice.smith', grp: ['x'] })), 'mcp-http', undefined, renamed)).toMatchObject({
      caller: { user: 'alice.smith', groups: ['x'] },
    });
    expect((await refusalOf(bearer(await token({ scope: 'Agent.Mcp' })), 'mcp-http', undefined, renamed)).reason).toMatch(/no preferred_username claim/);
    // Entra ID: clients ask for the full name, the token carries the short one.
    const entra = admissionWith({ scopes: { mcp: `${RESOURCE}/Mcp.Exec` } });
    expect(await identify(bearer(await token({ scope: undefined, scp: 'Mcp.Exec' })), 'mcp-http', undefined, entra)).toHaveProperty('caller.user', 'alice');
    expect(await identify(bearer(await token({ scope: undefined, scp: 'Chat.Exec' })), 'mcp-http', undefined, entra)).toHaveProperty('refusal.status', 403);
    const machine = await new SignJWT({ scope: 'mcp:exec', client_id: 'ci-bot' })
      .setProtectedHeader({ alg: 'RS256', kid: 'k1' })
      .setIssuer(ISSUER)
      .setAudience(RESOURCE)
      .setExpirationTime('5m')
      .sign(key);
    expect(await identify(bearer(machine))).toHaveProperty('caller.user', 'client:ci-bot');
  });

  it.each([
    ['a user claim with CR LF, ESC and U+202E', { preferred_username: 'eve\r\nX-Injected: 1\u001b[2K\u202e' }, /preferred_username claim .*control or bidirectional/],
    ['a user claim with a tab', { preferred_username: 'eve\tadmin' }, /preferred_username claim .*control or bidirectional/],
    ['a user claim with DEL', { preferred_username: 'eve\u007f' }, /preferred_username claim .*control or bidirectional/],
    ['a group with U+2066', { preferred_username: 'eve', groups: ['dev', 'ops\u2066'] }, /groups claim .*control or bidirectional/],
    ['an email with NUL', { preferred_username: 'eve', email: 'eve\u0000@example.com' }, /email claim .*control or bidirectional/],
  ])('refuses %s 401 invalid_token, as the identity headers refuse it (issue 37, S3)', async (_, claims, reason) => {
    const strict = admissionWith({ user_claim: 'preferred_username' });
    const refusal = await refusalOf(bearer(await token(claims)), 'mcp-http', undefined, strict);
    expect(refusal).toMatchObject({ status: 401, action: 'auth.fail', reason: expect.stringMatching(reason) });
    expect(refusal.headers!['WWW-Authenticate']).toContain('error="invalid_token"');
  });

  it('lets the admin scope or an admin group reach the admin surface, and refuses anyone else 403 with scope="admin"', async () => {
    expect(await identify(bearer(await token({ scope: 'admin' })), 'http')).toMatchObject({ caller: { admin: true } });
    expect(await identify(bearer(await token({ scope: '', groups: ['agent-admins'] })), 'http')).toMatchObject({ caller: { admin: true } });
    const refusal = await refusalOf(bearer(await token()), 'http');
    expect(refusal).toMatchObject({ status: 403, action: 'auth.insufficient_scope', caller: { user: 'alice', admin: false } });
    expect(refusal.headers!['WWW-Authenticate']).toMatch(/error="insufficient_scope".*scope="admin"/);
  });

  it("takes the console's session cookie on the admin surface only", async () => {
    const cookie = { cookie: `theme=dark; oam_session=${await token({ scope: 'admin' })}` };
    expect(await identify(cookie, 'http')).toMatchObject({ caller: { user: 'alice', admin: true } });
    expect((await refusalOf(cookie, 'mcp-http')).reason).toBe('no bearer token');
  });

  it('refuses an Authorization header sent twice and an oversized one', async () => {
    const valid = `Bearer ${await token()}`;
    expect((await refusalOf({ authorization: [valid, valid] })).reason).toBe('Authorization sent more than once');
    expect((await refusalOf(bearer('x'.repeat(17 * 1024)))).reason).toMatch(/longer than/);
  });

  it('opens /v1/models and the Agent Card without a token only when auth.oauth.public_routes says so', async () => {
    const open = admissionWith({ public_routes: ['models'] });
    expect(await identify({}, 'chat', { method: 'GET', url: '/v1/models' }, open)).toMatchObject({ caller: { user: 'anonymous' } });
    expect(await identify({}, 'a2a', { method: 'GET', url: '/.well-known/agent-card.json' }, open)).toHaveProperty('refusal');
    expect(await identify({}, 'chat', { method: 'GET', url: '/v1/models' })).toHaveProperty('refusal');
    // A token sent to an open route is still checked.
    expect(await identify(bearer('garbage'), 'chat', { method: 'GET', url: '/v1/models' }, open)).toHaveProperty('refusal');
  });
});

describe('auth.oauth configuration', () => {
  const problemsOf = (oauth: Record<string, unknown>, auth: Record<string, unknown> = {}) => {
    try {
      validateConfig({ auth: { mode: 'oauth', ...auth, oauth } });
      return [];
    } catch (error) {
      return (error as { problems: string[] }).problems;
    }
  };

  it('has defaults for everything but the issuer and the resource, which it requires', () => {
    expect(settingsWith()).toMatchObject({
      userClaim: 'sub',
      groupsClaim: 'groups',
      scopes: { mcp: 'mcp:exec', chat: 'chat:exec', a2a: 'a2a:exec', admin: 'admin' },
      clockSkewS: 60,
      algorithms: ['RS256', 'PS256', 'ES256'],
      publicRoutes: [],
    });
    expect(problemsOf({})).toEqual([expect.stringMatching(/^auth\.oauth\.issuer: required/), expect.stringMatching(/^auth\.oauth\.resource: required/)]);
  });

  it('refuses what would weaken the checks', () => {
    const valid = { issuer: ISSUER, resource: RESOURCE };
    expect(problemsOf({ ...valid, issuer: 'http://sso.example.com' })).toEqual([
      expect.stringMatching(/^auth\.oauth\.issuer: must be an https:\/\/ URL \(http:\/\/ only on loopback/),
    ]);
    expect(problemsOf({ ...valid, issuer: `${ISSUER}?x=1` })).toEqual(['auth.oauth.issuer: must not have a query string']);
    expect(problemsOf({ ...valid, algorithms: ['RS256', 'HS256', 'none'] })).toEqual(['auth.oauth.algorithms: HS256, none not allowed (asymmetric algorithms only)']);
    expect(problemsOf({ ...valid, scopes: { mcp: 'mcp exec' } })).toEqual([expect.stringMatching(/^auth\.oauth\.scopes\.mcp: must be one scope name/)]);
    expect(problemsOf({ ...valid, public_routes: ['admin'] })).toEqual(['auth.oauth.public_routes: expected a list of agent_card, models']);
    expect(problemsOf({ ...valid, introspection: { client_id: 'svc' } })).toEqual(['auth.oauth.introspection.client_secret: required with introspection.client_id']);
    expect(problemsOf({ ...valid, console: { client_id: RESOURCE } })).toEqual(['auth.oauth.console.client_id: must differ from the audience access tokens name']);
    expect(problemsOf(valid, { admin_groups: ['admins'] })).toEqual(['auth.admin_groups: not used when auth.mode is oauth: set auth.oauth.admin_groups']);
    expect(problemsOf({ ...valid, issuer: 'http://127.0.0.1:8080' })).toEqual([]);
  });
});

describe('the Agent Card in auth.mode oauth', () => {
  it('offers both OAuth 2.0 flows with the a2a scope, and OpenID Connect when the issuer was found by OpenID discovery', () => {
    const config = validateConfig({ auth: { mode: 'oauth', oauth: { issuer: ISSUER, resource: RESOURCE, scopes: { a2a: 'Agent.A2a' } } } });
    const server = { issuer: ISSUER, authorization_endpoint: `${ISSUER}/protocol/openid-connect/auth`, token_endpoint: `${ISSUER}/protocol/openid-connect/token` };
    const discovery = `${ISSUER}/.well-known/openid-configuration`;
    const card = agentCardOf(config, new IssuerMetadata(server, discovery));
    expect(Object.keys(card.securitySchemes)).toEqual(['oauth2', 'oauth2_client_credentials', 'openid']);
    expect(card.securitySchemes.oauth2.scheme).toMatchObject({
      value: {
        oauth2MetadataUrl: discovery,
        flows: {
          flow: {
            $case: 'authorizationCode',
            value: { authorizationUrl: server.authorization_endpoint, tokenUrl: server.token_endpoint, pkceRequired: true, scopes: { 'Agent.A2a': expect.any(String) } },
          },
        },
      },
    });
    expect(card.securitySchemes.openid.scheme).toEqual({
      $case: 'openIdConnectSecurityScheme',
      value: { description: expect.stringContaining('Agent.A2a'), openIdConnectUrl: discovery },
    });
    expect(card.securityRequirements.map((requirement) => requirement.schemes)).toEqual([
      { oauth2: { list: ['Agent.A2a'] } },
      { oauth2_client_credentials: { list: ['Agent.A2a'] } },
      { openid: { list: ['Agent.A2a'] } },
    ]);
    const rfc8414 = agentCardOf(config, new IssuerMetadata(server, `https://sso.example.com/.well-known/oauth-authorization-server/realms/acme`));
    expect(Object.keys(rfc8414.securitySchemes)).toEqual(['oauth2', 'oauth2_client_credentials']);
  });
});
