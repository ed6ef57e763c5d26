import { createHmac, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { Webhook, WebhookVerificationError } from 'standardwebhooks';

export type TriggerKind = 'github' | 'standard';

/** A delivery whose signature holds: its id (what a redelivery repeats) and its event name. */
export type Verified = { deliveryId: string; event: string } | { problem: string };

const ID = /^[\x21-\x7e]{1,200}$/;
const EVENT = /^[A-Za-z0-9_.:-]{1,100}$/;

const header = (headers: IncomingHttpHeaders, name: string) => {
  const value = headers[name];
  return typeof value === 'string' ? value : undefined;
};

/**
 * Checks a delivery's signature over the raw body, as its sender signs it. GitHub: `X-Hub-Signature-256:
 * sha256=<hex HMAC-SHA256 of the body>` compared in constant time, the id in `X-GitHub-Delivery`, the event
 * in `X-GitHub-Event`. Standard Webhooks: `webhook-id`, `webhook-timestamp` (five minutes either way) and
 * `webhook-signature` (`v1,<base64>` entries) checked by the `standardwebhooks` library; the event is the
 * payload's `type` when it has one (`payload` is asked only once the signature holds: a sender without the
 * secret costs an HMAC, never a parse). The problem is for the audit log, never echoed with the body.
 */
export function verifyDelivery(kind: TriggerKind, secret: string, headers: IncomingHttpHeaders, body: Buffer, payload: () => unknown): Verified {
  return kind === 'github' ? verifyGithub(secret, headers, body) : verifyStandard(secret, headers, body, payload);
}

function verifyGithub(secret: string, headers: IncomingHttpHeaders, body: Buffer): Verified {
  const signature = header(headers, 'x-hub-signature-256');
  if (!signature) return { problem: 'no X-Hub-Signature-256' };
  const expected = Buffer.from(`sha256=${createHmac('sha256', secret).update(body).digest('hex')}`);
  const given = Buffer.from(signature);
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return { problem: 'X-Hub-Signature-256 does not match the body' };
  const deliveryId = header(headers, 'x-github-delivery');
  const event = header(headers, 'x-github-event');
  if (!deliveryId || !ID.test(deliveryId)) return { problem: 'no valid X-GitHub-Delivery' };
  if (!event || !EVENT.test(event)) return { problem: 'no valid X-GitHub-Event' };
  return { deliveryId, event };
}

function verifyStandard(secret: string, headers: IncomingHttpHeaders, body: Buffer, payload: () => unknown): Verified {
  const deliveryId = header(headers, 'webhook-id');
  if (!deliveryId || !ID.test(deliveryId)) return { problem: 'no valid webhook-id' };
  try {
    // The library's own JSON.parse would throw on a signed body that is not JSON (the edge answers that 400) and parse it twice.
    new Webhook(secret).verify(
      body,
      {
        'webhook-id': deliveryId,
        'webhook-timestamp': header(headers, 'webhook-timestamp') ?? '',
        'webhook-signature': header(headers, 'webhook-signature') ?? '',
      },
      { jsonParse: false },
    );
  } catch (error) {
    return { problem: error instanceof WebhookVerificationError ? error.message : 'the signature could not be checked' };
  }
  const value = payload();
  const type = typeof value === 'object' && value !== null ? (value as { type?: unknown }).type : undefined;
  return { deliveryId, event: typeof type === 'string' && EVENT.test(type) ? type : 'webhook' };
}
