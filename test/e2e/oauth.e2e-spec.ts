import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { TaskState, type Task } from '@a2a-js/sdk';
import { ClientFactory, ClientFactoryOptions, createAuthenticatingFetchWithRetry, DefaultAgentCardResolver, JsonRpcTransportFactory } from '@a2a-js/sdk/client';
import { Client, ClientCredentialsProvider, StreamableHTTPClientTransport, UnauthorizedError, type OAuthClientProvider } from '@modelcontextprotocol/client';
import { Client as LegacyClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as LegacyHttpTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { generateKeyPair, SignJWT } from 'jose';
import OpenAI from 'openai';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { a2aSend, a2aText } from '../support/a2a-clients.js';
import { fieldsOf, MODERN, textOf, waitForTerminal } from '../support/mcp-clients.js';
import { E2eStack, useStack } from '../support/e2e-stack.js';
import { clientCredentialsToken, OidcIssuer, signInAt, userToken } from '../support/oidc-issuer.js';
import { freePort } from '../support/service-process.js';

const run = promisify(execFile);
const CLIENT_INFO = { name: 'oauth-e2e', version: '1.0.0' };
const REDIRECT = 'http://127.0.0.1:33418/callback';
const MACHINE = { id: 'machine', secret: 'machine-secret-0123456789' };
const INTROSPECTOR = { id: 'agent-service', secret: 'introspection-secret-0123456789' };

/**
 * An MCP client's OAuth state, as a real client keeps it: pre-registered as `mcp-cli` (a public
 * client, PKCE), its tokens, its PKCE verifier and the discovery it did; `authorizationUrl` is where
 * it would open the browser.
 */
class TestClientProvider implements OAuthClientProvider {
  authorizationUrl: URL | null = null;
  private saved: Record<string, unknown> = {};
  readonly redirectUrl = REDIRECT;
  readonly clientMetadata = {
    client_name: 'oauth-e2e',
    redirect_uris: [REDIRECT],
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    token_endpoint_auth_method: 'none',
  };
  clientInformation = () => (this.saved.client as never) ?? { client_id: 'mcp-cli' };
  saveClientInformation = (info: unknown) => void (this.saved.client = info);
  tokens = () => this.saved.tokens as never;
  saveTokens = (tokens: unknown) => void (this.saved.tokens = tokens);
  redirectToAuthorization = (url: URL) => void (this.authorizationUrl = url);
  saveCodeVerifier = (verifier: string) => void (this.saved.verifier = verifier);
  codeVerifier = () => this.saved.verifier as string;
  discoveryState = () => this.saved.discovery as never;
  saveDiscoveryState = (state: unknown) => void (this.saved.discovery = state);
}

describe('auth.mode oauth: the service as an OAuth 2.1 resource server', () => {
  let issuer: OidcIssuer;
  // Up before the stack, whose config names it; stopped at the end.
  beforeAll(async () => {
    issuer = await new OidcIssuer([
      { client_id: 'mcp-cli', token_endpoint_auth_method: 'none', redirect_uris: [REDIRECT], grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'] },
      { client_id: MACHINE.id, client_secret: MACHINE.secret, grant_types: ['client_credentials'], redirect_uris: [], response_types: [] },
      { client_id: INTROSPECTOR.id, client_secret: INTROSPECTOR.secret, grant_types: [], redirect_uris: [], response_types: [] },
    ]).start();
    issuer.groups = { alice: ['agent-admins', 'dev'], bob: ['dev'] };
  });
  afterAll(() => issuer?.stop());
  const stack = useStack({
    // The resource is the service's own origin.
    config: (_ollamaUrl, base) => ({
      auth: {
        mode: 'oauth',
        oauth: {
          issuer: issuer.url,
          resource: base,
          admin_groups: ['agent-admins'],
          // Fetch the keys again for any unknown key id at once, so that the rotation below needs no wait.
          jwks_cooldown_s: 0,
          introspection: { client_id: INTROSPECTOR.id, client_secret: INTROSPECTOR.secret },
        },
      },
      queue: { progress_poll_ms: 20 },
    }),
  });
  const { ollama } = stack;
  let base = '';

  beforeAll(() => void (base = stack.base));

  const connect = async (authProvider: OAuthClientProvider) => {
    const client = new Client(CLIENT_INFO, { versionNegotiation: { mode: { pin: MODERN } } });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${base}/mcp`), { authProvider }));
    return client;
  };

  /** What Claude Code does: connect without a header, get the 401, sign the person in at the issuer, connect again. */
  const signedInClient = async (login: string) => {
    const provider = new TestClientProvider();
    const transport = new StreamableHTTPClientTransport(new URL(`${base}/mcp`), { authProvider: provider });
    const first = new Client(CLIENT_INFO, { versionNegotiation: { mode: { pin: MODERN } } });
    await expect(first.connect(transport)).rejects.toBeInstanceOf(UnauthorizedError);
    const callback = await signInAt(provider.authorizationUrl!, login);
    await transport.finishAuth(callback.searchParams);
    return connect(provider);
  };

  const machineToken = (scope: string, resource = base) => clientCredentialsToken(issuer.url, MACHINE.id, MACHINE.secret, { scope, resource });
  const personToken = (login: string, scope: string) => userToken(issuer.url, login, { clientId: 'mcp-cli', redirectUri: REDIRECT, scope, resource: base });
  const mcpPost = (token?: string) =>
    fetch(`${base}/mcp`, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/json',
        Accept: 'application/json, text/event-stream',
        'MCP-Protocol-Version': MODERN,
        'Mcp-Method': 'tools/list',
        ...(token ? { Authorization: `Bearer ${token}` } : {}),
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/list',
        params: {
          _meta: { 'io.modelcontextprotocol/protocolVersion': MODERN, 'io.modelcontextprotocol/clientInfo': CLIENT_INFO, 'io.modelcontextprotocol/clientCapabilities': {} },
        },
      }),
    });
  /** A JWT as the issuer would sign it (its own key unless told otherwise), for the cases no issuer would mint. */
  const forged = async (claims: Record<string, unknown>, options: { key?: CryptoKey; expiresAt?: number } = {}) =>
    new SignJWT({ scope: 'mcp:exec', client_id: 'mcp-cli', ...claims })
      .setProtectedHeader({ alg: 'RS256', kid: issuer.key.kid, typ: 'at+jwt' })
      .setIssuer(issuer.url)
      .setAudience(base)
      .setSubject('mallory')
      .setIssuedAt()
      .setExpirationTime(options.expiresAt ?? Math.floor(Date.now() / 1000) + 300)
      .sign(options.key ?? issuer.key.privateKey);
  const a2aFor = (token: string) => {
    const fetchImpl = createAuthenticatingFetchWithRetry(fetch, { headers: async () => ({ Authorization: `Bearer ${token}` }), shouldRetryWithHeaders: async () => undefined });
    return new ClientFactory(
      ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
        transports: [new JsonRpcTransportFactory({ fetchImpl })],
        cardResolver: new DefaultAgentCardResolver({ fetchImpl }),
      }),
    ).createFromUrl(base);
  };
  const audit = async (query: string) => {
    const admin = await machineToken('admin');
    return (await (await fetch(`${base}/admin/audit?${query}`, { headers: { Authorization: `Bearer ${admin}` } })).json()) as {
      items: { action: string; actor: string; detail: Record<string, unknown> }[];
    };
  };

  it('takes an MCP client from a bare 401 to a successful agent_run: resource metadata, the issuer, sign-in with PKCE, the bearer token', async () => {
    const bare = await mcpPost();
    expect(bare.status).toBe(401);
    expect(bare.headers.get('www-authenticate')).toBe(`Bearer resource_metadata="${base}/.well-known/oauth-protected-resource", scope="mcp:exec"`);
    const metadata = await (await fetch(`${base}/.well-known/oauth-protected-resource`)).json();
    expect(metadata).toEqual({
      resource: base,
      authorization_servers: [issuer.url],
      scopes_supported: ['mcp:exec', 'chat:exec', 'a2a:exec', 'admin'],
      resource_name: 'ollama-agent-mcp',
      bearer_methods_supported: ['header'],
    });
    expect(await (await fetch(`${base}/.well-known/oauth-protected-resource/mcp`)).json()).toEqual(metadata);

    const client = await signedInClient('alice');
    ollama.enqueue({ content: 'done for alice' });
    const accepted = fieldsOf(textOf(await client.callTool({ name: 'agent_run', arguments: { request: 'hello' } })));
    const status = (id: string) => client.callTool({ name: 'agent_status', arguments: { task_id: id } }).then(textOf);
    expect(await waitForTerminal(status, accepted.task_id)).toMatchObject({ status: 'completed', result: 'done for alice' });
    await client.close();
  });

  it('signs in a 2025-11-25 (initialize-era) client the same way: the v1 SDK client, as Claude Code still is', async () => {
    const provider = new TestClientProvider();
    const transport = new LegacyHttpTransport(new URL(`${base}/mcp`), { authProvider: provider });
    await expect(new LegacyClient(CLIENT_INFO).connect(transport)).rejects.toThrow(/Unauthorized/);
    const callback = await signInAt(provider.authorizationUrl!, 'carol');
    await transport.finishAuth(callback.searchParams.get('code')!);
    const client = new LegacyClient(CLIENT_INFO);
    await client.connect(new LegacyHttpTransport(new URL(`${base}/mcp`), { authProvider: provider }));
    expect((await client.listTools()).tools.map((tool) => tool.name).sort()).toEqual(['agent_run', 'agent_status']);
    await client.close();
  });

  it('serves a machine caller with the client-credentials grant', async () => {
    const client = await connect(new ClientCredentialsProvider({ clientId: MACHINE.id, clientSecret: MACHINE.secret, scope: 'mcp:exec', expectedIssuer: issuer.url }));
    expect((await client.listTools()).tools.map((tool) => tool.name).sort()).toEqual(['agent_run', 'agent_status']);
    await client.close();
  });

  it('refuses an expired token, one for another audience, one signed by another key and alg none, with invalid_token, each audited without the token', async () => {
    const otherKey = (await generateKeyPair('RS256')).privateKey;
    const valid = await forged({});
    const unsigned = `${Buffer.from(JSON.stringify({ alg: 'none', typ: 'at+jwt' })).toString('base64url')}.${valid.split('.')[1]}.`;
    const cases: [string, string, RegExp][] = [
      ['expired', await forged({}, { expiresAt: Math.floor(Date.now() / 1000) - 120 }), /exp/],
      ['another audience', await machineToken('mcp:exec', 'https://other.example.com'), /aud/],
      ['another key', await forged({}, { key: otherKey }), /signature/],
      ['alg none', unsigned, /algorithm|JWS|JWT/i],
    ];
    expect((await mcpPost(valid)).status).toBe(200);
    for (const [name, token, reason] of cases) {
      const res = await mcpPost(token);
      expect({ name, status: res.status }).toEqual({ name, status: 401 });
      const challenge = res.headers.get('www-authenticate')!;
      expect(challenge).toMatch(
        /^Bearer error="invalid_token", error_description="[^"]+", scope="mcp:exec", resource_metadata="http:\/\/127\.0\.0\.1:\d+\/\.well-known\/oauth-protected-resource"$/,
      );
      expect({ name, body: await res.json() }).toMatchObject({ name, body: { error: { code: -32600, message: expect.stringMatching(reason) } } });
    }
    const refused = (await audit('action=auth.fail&limit=20')).items;
    const serialized = JSON.stringify(refused);
    for (const [, token] of cases) expect(serialized).not.toContain(token.split('.')[2] || token.split('.')[1]);
    expect(refused.filter((event) => /^sha256:[0-9a-f]{16}$/.test(String(event.detail.token))).length).toBeGreaterThanOrEqual(cases.length);
  });

  it('answers a token with chat:exec only 403 insufficient_scope on /mcp (step-up), and serves it on the Chat API', async () => {
    const token = await machineToken('chat:exec');
    const res = await mcpPost(token);
    expect(res.status).toBe(403);
    expect(res.headers.get('www-authenticate')).toMatch(/^Bearer error="insufficient_scope", error_description="Insufficient scope", scope="mcp:exec", resource_metadata="[^"]+"$/);
    const [event] = (await audit('action=auth.insufficient_scope&limit=1')).items;
    expect(event).toMatchObject({ actor: 'machine', detail: { path: '/mcp', token: expect.stringMatching(/^jti:/) } });

    ollama.enqueue({ content: 'chat answer' });
    const chat = new OpenAI({ baseURL: `${base}/v1`, apiKey: token, maxRetries: 0 });
    const completion = await chat.chat.completions.create({ model: 'ollama-agent', messages: [{ role: 'user', content: 'hi' }] });
    expect(completion.choices[0].message.content).toBe('chat answer');
    // /v1/models is not in auth.oauth.public_routes here: it needs a token too.
    const models = await fetch(`${base}/v1/models`);
    expect(models.status).toBe(401);
    expect(models.headers.get('www-authenticate')).toContain('scope="chat:exec"');
  });

  it("keeps two people apart on every surface, and one person's session the same on MCP, the Chat API and A2A", async () => {
    const alice = await signedInClient('alice');
    const bob = await signedInClient('bob');
    ollama.enqueue({ content: 'alice over MCP' });
    const accepted = fieldsOf(textOf(await alice.callTool({ name: 'agent_run', arguments: { request: 'first' } })));
    const status = (client: Client) => (id: string) => client.callTool({ name: 'agent_status', arguments: { task_id: id } }).then(textOf);
    await waitForTerminal(status(alice), accepted.task_id);
    expect(fieldsOf(await status(bob)(accepted.task_id)).message).toMatch(/が見つかりません/);

    const aliceChat = new OpenAI({ baseURL: `${base}/v1`, apiKey: await personToken('alice', 'chat:exec a2a:exec'), maxRetries: 0 });
    const bobChat = new OpenAI({ baseURL: `${base}/v1`, apiKey: await personToken('bob', 'chat:exec'), maxRetries: 0 });
    ollama.enqueue({ content: 'alice over the Chat API' });
    const continued = await aliceChat.chat.completions.create({ model: 'ollama-agent', messages: [{ role: 'user', content: 'second' }], session_id: accepted.session_id } as never);
    expect(continued).toMatchObject({ session_id: accepted.session_id, status: 'completed' });
    await expect(
      bobChat.chat.completions.create({ model: 'ollama-agent', messages: [{ role: 'user', content: 'hijack' }], session_id: accepted.session_id } as never),
    ).rejects.toMatchObject({
      status: 400,
      code: 'session_not_found',
    });

    const aliceA2a = await a2aFor(aliceChat.apiKey as string);
    ollama.enqueue({ content: 'alice over A2A' });
    const task = (await aliceA2a.sendMessage(a2aSend([a2aText('third')], { contextId: accepted.session_id }))) as Task;
    expect(task).toMatchObject({ contextId: accepted.session_id, status: { state: TaskState.TASK_STATE_COMPLETED } });
    // Bob's token has no a2a:exec: not even the Agent Card.
    await expect(a2aFor(bobChat.apiKey as string)).rejects.toThrow(/: 403/);
    await alice.close();
    await bob.close();
  });

  it('lets an admin group reach /admin and refuses a plain user with insufficient_scope', async () => {
    const admin = await fetch(`${base}/admin/me`, { headers: { Authorization: `Bearer ${await personToken('alice', 'chat:exec')}` } });
    expect(admin.status).toBe(200);
    expect(await admin.json()).toMatchObject({ user: 'alice', groups: ['agent-admins', 'dev'], auth_mode: 'oauth' });
    const plain = await fetch(`${base}/admin/me`, { headers: { Authorization: `Bearer ${await personToken('bob', 'chat:exec')}` } });
    expect(plain.status).toBe(403);
    expect(plain.headers.get('www-authenticate')).toMatch(/error="insufficient_scope".*scope="admin"/);
    expect((await fetch(`${base}/admin/me`)).status).toBe(401);
  });

  it('verifies opaque tokens by introspection', async () => {
    issuer.opaque = true;
    try {
      const token = await machineToken('mcp:exec');
      expect(token.split('.')).toHaveLength(1);
      expect((await mcpPost(token)).status).toBe(200);
      expect((await mcpPost(`${token}x`)).status).toBe(401);
      expect((await mcpPost(await machineToken('chat:exec'))).status).toBe(403);
    } finally {
      issuer.opaque = false;
    }
  });

  it('describes the same security on the Agent Card: the OAuth 2.0 authorization-code and client-credentials flows with the a2a scope', async () => {
    const card = await (
      await fetch(`${base}/.well-known/agent-card.json`, { headers: { Authorization: `Bearer ${await machineToken('a2a:exec')}`, 'A2A-Version': '1.0' } })
    ).json();
    const flows = { tokenUrl: `${issuer.url}/token`, scopes: { 'a2a:exec': expect.any(String) } };
    // The A2A 1.0 JSON (protobuf JSON) form: each scheme and flow named by its oneof field.
    expect(card.securitySchemes).toEqual({
      oauth2: {
        oauth2SecurityScheme: {
          description: expect.any(String),
          oauth2MetadataUrl: `${issuer.url}/.well-known/oauth-authorization-server`,
          flows: { authorizationCode: { authorizationUrl: `${issuer.url}/auth`, pkceRequired: true, ...flows } },
        },
      },
      oauth2_client_credentials: {
        oauth2SecurityScheme: { description: expect.any(String), oauth2MetadataUrl: `${issuer.url}/.well-known/oauth-authorization-server`, flows: { clientCredentials: flows } },
      },
    });
    expect(card.securityRequirements).toEqual([{ schemes: { oauth2: { list: ['a2a:exec'] } } }, { schemes: { oauth2_client_credentials: { list: ['a2a:exec'] } } }]);
    expect((await fetch(`${base}/.well-known/agent-card.json`)).headers.get('www-authenticate')).toContain('scope="a2a:exec"');
  });

  it('has the doctor check that the issuer metadata and keys can be fetched', async () => {
    const { stdout } = await run(process.execPath, ['dist/doctor.js'], { env: { PATH: process.env.PATH, AGENT_CONFIG: stack.config.file }, timeout: 60_000 }).catch(
      (failed: { stdout: string }) => failed,
    );
    const lines = stdout.split('\n').filter((line) => / issuer/.test(line));
    expect(lines).toEqual([
      `ok    issuer: metadata of ${issuer.url} read from ${issuer.url}/.well-known/oauth-authorization-server`,
      `ok    issuer keys: 1 signing key at ${issuer.url}/jwks`,
    ]);
  });

  it('does not start when the issuer cannot be read, naming the key', async () => {
    const unread = new E2eStack({ config: { auth: { mode: 'oauth', oauth: { issuer: `http://127.0.0.1:${await freePort()}`, resource: 'http://127.0.0.1:1' } } } });
    try {
      await expect(unread.start()).rejects.toThrow(/auth\.oauth\.issuer: the metadata of http:\/\/127\.0\.0\.1:\d+ could not be read/);
    } finally {
      await unread.stop();
    }
  });

  it('follows a key rotation at the issuer: the new key is fetched, tokens signed with the old one stop working', async () => {
    const before = await machineToken('mcp:exec');
    expect((await mcpPost(before)).status).toBe(200);
    await issuer.rotate('key-2');
    const after = await machineToken('mcp:exec');
    expect((await mcpPost(after)).status).toBe(200);
    const old = await mcpPost(before);
    expect(old.status).toBe(401);
    expect(old.headers.get('www-authenticate')).toContain('error="invalid_token"');
  });
});
