import { Injectable } from '@nestjs/common';
import { createHash, createHmac } from 'node:crypto';
import { exportJWK, generateKeyPair, importJWK, SignJWT, type JWK } from 'jose';
import { Clock, nowIso, SYSTEM_CLOCK } from '../common/clock.js';
import { PushDeliveryRepository } from './push-delivery.repository.js';

const KEY_NAME = 'a2a-push';
const ALG = 'ES256';
const JWT_LIFETIME_S = 300;

/**
 * How pushes prove where they come from. A2A: a short-lived ES256 JWT over the request body's hash
 * (the key is generated once and shared by every replica through the database; the public half is
 * served at /.well-known/jwks.json). Webhooks: an HMAC-SHA256 of `<unix time>.<body>` with the
 * webhook's secret, in `X-OAM-Signature: t=<time>,v1=<hex>`.
 */
@Injectable()
export class PushSigning {
  private key: Promise<{ privateKey: CryptoKey; publicJwk: JWK }> | null = null;

  constructor(
    private readonly repository: PushDeliveryRepository,
    private readonly clock: Clock = SYSTEM_CLOCK,
  ) {}

  async jwks(): Promise<{ keys: JWK[] }> {
    return { keys: [(await this.loadKey()).publicJwk] };
  }

  async jwt(claims: { issuer: string; audience: string; body: string; taskId: string; id: string }): Promise<string> {
    const { privateKey, publicJwk } = await this.loadKey();
    const now = Math.floor(this.clock.now() / 1000);
    return new SignJWT({ request_body_sha256: createHash('sha256').update(claims.body).digest('hex'), task_id: claims.taskId })
      .setProtectedHeader({ alg: ALG, kid: publicJwk.kid!, typ: 'JWT' })
      .setIssuer(claims.issuer)
      .setAudience(claims.audience)
      .setJti(claims.id)
      .setIssuedAt(now)
      .setExpirationTime(now + JWT_LIFETIME_S)
      .sign(privateKey);
  }

  webhookSignature(secret: string, body: string, now = Math.floor(this.clock.now() / 1000)): string {
    return `t=${now},v1=${createHmac('sha256', secret).update(`${now}.${body}`).digest('hex')}`;
  }

  private loadKey() {
    this.key ??= (async () => {
      const stored = await this.repository.signingKey(
        KEY_NAME,
        async () => {
          const { privateKey, publicKey } = await generateKeyPair(ALG, { extractable: true });
          const publicJwk = await exportJWK(publicKey);
          const kid = createHash('sha256').update(JSON.stringify(publicJwk)).digest('base64url').slice(0, 16);
          return { privateJwk: JSON.stringify({ ...(await exportJWK(privateKey)), kid, alg: ALG }), publicJwk: JSON.stringify({ ...publicJwk, kid, alg: ALG, use: 'sig' }) };
        },
        nowIso(this.clock),
      );
      return { privateKey: (await importJWK(JSON.parse(stored.privateJwk) as JWK, ALG)) as CryptoKey, publicJwk: JSON.parse(stored.publicJwk) as JWK };
    })().catch((error: unknown) => {
      this.key = null;
      throw error;
    });
    return this.key;
  }
}
