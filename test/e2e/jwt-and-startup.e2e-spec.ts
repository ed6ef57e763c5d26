import { afterAll, describe, expect, it } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { createServer, request as httpRequest, type Server } from 'node:http';
import { resolve } from 'node:path';
import { exportJWK, generateKeyPair, SignJWT, type JWK } from 'jose';
import { useStack } from '../support/e2e-stack.js';
import { freePort, writeConfig } from '../support/service-process.js';

const ROOT = resolve(import.meta.dirname, '../..');
const ISSUER = 'https://sso.example.com';
const AUDIENCE = 'agent.example.com';

describe('signed proxy assertions (auth.mode proxy_jwt, T2.6, T2.7)', () => {
  let jwks: Server;
  let jwksFetches = 0;
  let jwksPort = 0;
  let keys: { privateKey: CryptoKey; publicJwk: JWK };
  let otherKey: CryptoKey;

  const stack = useStack({
    // The keys and the JWKS endpoint first: the service's configuration names its port.
    config: async () => {
      const pair = await generateKeyPair('ES256', { extractable: true });
      keys = { privateKey: pair.privateKey, publicJwk: { ...(await exportJWK(pair.publicKey)), kid: 'k1', alg: 'ES256' } };
      otherKey = (await generateKeyPair('ES256')).privateKey;
      jwks = createServer((_req, res) => {
        jwksFetches++;
        res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify({ keys: [keys.publicJwk] }));
      });
      await new Promise<void>((done) => jwks.listen(0, '127.0.0.1', done));
      jwksPort = (jwks.address() as { port: number }).port;
      return {
        auth: { mode: 'proxy_jwt', jwks_url: `http://127.0.0.1:${jwksPort}/jwks.json`, issuer: ISSUER, audience: AUDIENCE, algorithms: ['ES256'], admin_groups: ['admins'] },
      };
    },
  });
  // After the stack's own afterAll: the service is gone by then.
  afterAll(() => new Promise((done) => jwks.close(done)));

  const token = (claims: Record<string, unknown> = {}, options: { key?: CryptoKey; kid?: string; expiresAt?: string | number; issuer?: string; audience?: string } = {}) =>
    new SignJWT({ email: 'dana@example.com', groups: ['admins'], ...claims })
      .setProtectedHeader({ alg: 'ES256', kid: options.kid ?? 'k1' })
      .setIssuer(options.issuer ?? ISSUER)
      .setAudience(options.audience ?? AUDIENCE)
      .setIssuedAt()
      .setExpirationTime(options.expiresAt ?? '5m')
      .sign(options.key ?? keys.privateKey);
  const statusWith = async (assertion: string | null) => (await fetch(`${stack.base}/admin/audit/verify`, { headers: assertion ? { 'X-Jwt-Assertion': assertion } : {} })).status;

  it('accepts a valid assertion and takes the user and groups from it', async () => {
    expect(await statusWith(await token())).toBe(200);
    expect(await statusWith(await token({ groups: ['dev'] }))).toBe(403);
  });

  it('refuses every bad assertion with 401', async () => {
    const valid = await token();
    const [header, payload] = valid.split('.');
    const unsigned = `${Buffer.from(JSON.stringify({ alg: 'none' })).toString('base64url')}.${payload}.`;
    const hs256 = await new SignJWT({ email: 'dana@example.com', groups: ['admins'] })
      .setProtectedHeader({ alg: 'HS256', kid: 'k1' })
      .setIssuer(ISSUER)
      .setAudience(AUDIENCE)
      .setExpirationTime('5m')
      .sign(new TextEncoder().encode(JSON.stringify(keys.publicJwk)));
    const cases: [string, string | null][] = [
      ['missing', null],
      ['bad signature', await token({}, { key: otherKey })],
      [
        'tampered payload',
        `${header}.${Buffer.from(JSON.stringify({ email: 'eve@example.com', groups: ['admins'], iss: ISSUER, aud: AUDIENCE, exp: 9999999999 })).toString('base64url')}.${valid.split('.')[2]}`,
      ],
      ['wrong audience', await token({}, { audience: 'other.example.com' })],
      ['wrong issuer', await token({}, { issuer: 'https://evil.example.com' })],
      ['expired beyond tolerance', await token({}, { expiresAt: Math.floor(Date.now() / 1000) - 300 })],
      ['not yet valid', await token({ nbf: Math.floor(Date.now() / 1000) + 600 })],
      ['alg none', unsigned],
      ['HS256 with the public key (algorithm confusion)', hs256],
      ['unknown key id', await token({}, { kid: 'k9', key: otherKey })],
      ['garbage', 'not.a.jwt'],
      ['a user claim longer than a proxy header may be', await token({ email: `${'d'.repeat(300)}@example.com` })],
    ];
    for (const [name, assertion] of cases) expect([name, await statusWith(assertion)]).toEqual([name, 401]);
  });

  it('refuses an assertion header sent twice, even with two valid assertions', async () => {
    const valid = await token();
    const status = await new Promise<number>((resolve, reject) => {
      const req = httpRequest({ host: '127.0.0.1', port: stack.service.port, path: '/admin/audit/verify', headers: { 'X-Jwt-Assertion': [valid, valid] } }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on('error', reject);
      req.end();
    });
    expect(status).toBe(401);
    expect(await statusWith(`${valid}, ${valid}`)).toBe(401);
    expect(await statusWith(valid)).toBe(200);
  });

  it('keeps verifying with cached keys while the JWKS endpoint is down (T2.7)', async () => {
    jwks.closeAllConnections();
    await new Promise((done) => jwks.close(done));
    expect(await statusWith(await token())).toBe(200);
    expect(await statusWith(await token({}, { key: otherKey }))).toBe(401);
    await new Promise<void>((done) => jwks.listen(jwksPort, '127.0.0.1', done));
  });

  it('refetches the JWKS for unknown key ids at most once per cooldown (T2.7)', async () => {
    const before = jwksFetches;
    const bogus = await token({}, { kid: 'rotating', key: otherKey });
    await Promise.all(Array.from({ length: 50 }, () => statusWith(bogus)));
    expect(jwksFetches - before).toBeLessThanOrEqual(1);
  });
});

describe('startup refuses identity settings that would let anyone in (T1.3, T2.8)', () => {
  const start = async (auth: Record<string, unknown>, server: Record<string, unknown> = {}) => {
    const config = await writeConfig('http://127.0.0.1:9', { auth, server });
    return spawnSync(process.execPath, ['dist/main.js'], {
      cwd: ROOT,
      env: { PATH: process.env.PATH, AGENT_CONFIG: config.file, AGENT__SERVER__PORT: String(await freePort()) },
      timeout: 15_000,
      encoding: 'utf8',
    });
  };

  it.each([
    [{ mode: 'proxy_headers' }, /auth.trusted_proxies: required/],
    [{ mode: 'proxy_headers', trusted_proxies: ['0.0.0.0/0'] }, /"0.0.0.0\/0" would trust every client/],
    [{ mode: 'proxy_headers', trusted_proxies: ['::/0'] }, /"::\/0" would trust every client/],
    [{ mode: 'proxy_headers', trusted_proxies: ['*'] }, /"\*" would trust every client/],
    [{ mode: 'proxy_jwt' }, /auth.jwks_url: a pinned JWKS URL is required/],
  ])('refuses %j', async (auth, message) => {
    const result = await start(auth);
    expect(result.status).toBe(1);
    expect(result.stderr).toMatch(message);
  });

  it('refuses credentials in ollama.host, saying how to send them instead, without printing them', async () => {
    const config = await writeConfig('http://ollama-user:hunter2-secret@127.0.0.1:9');
    const result = spawnSync(process.execPath, ['dist/main.js'], {
      cwd: ROOT,
      env: { PATH: process.env.PATH, AGENT_CONFIG: config.file, AGENT__SERVER__PORT: String(await freePort()) },
      timeout: 15_000,
      encoding: 'utf8',
    });
    expect(result.status).toBe(1);
    expect(result.stderr).toMatch(/ollama.host: must not hold credentials .*ollama.headers/);
    expect(result.stderr + result.stdout).not.toContain('hunter2-secret');
  });

  it('refuses auth.mode none on a non-loopback address', async () => {
    const result = await start({ mode: 'none' }, { host: '0.0.0.0' });
    expect(result.status).toBe(1);
    expect(result.stderr).toMatch(/auth.mode: none serves one local user and requires server.host on loopback/);
  });
});
