import { Controller, HttpCode, Param, Post, Req, Res } from '@nestjs/common';
import { ApiOperation, ApiParam, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { isUtf8 } from 'node:buffer';
import { AppConfig } from '../config/app-config.js';
import { BodyBudget } from '../http/body-budget.js';
import { readBodyBytes } from '../http/json-body.js';
import { MAX_JSON_DEPTH, nestsDeeperThan } from '../http/json-depth.js';
import { refuse } from '../http/refusal.js';
import { TrustedProxies } from '../identity/trusted-proxies.js';
import { TriggerDeliveryDto } from './trigger-delivery.dto.js';
import { TriggerRefusals, UNKNOWN_TRIGGER } from './trigger-refusals.js';
import { verifyDelivery } from './trigger-signature.js';
import { TriggersService } from './triggers.service.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * `POST /v1/triggers/:id`: an event from outside (GitHub, a Standard Webhooks sender) starts a Task for
 * the trigger's owner. The sender has no identity here; its signature over the raw body is the proof,
 * so the body is read as bytes (at most `triggers.max_body_bytes`, refused with 413 before the rest is
 * read) before anything is parsed. The rate limit counts signed deliveries only (in the database, across
 * replicas: TriggersService.deliver), so a sender without the secret cannot spend it. Refusals answer
 * without echoing the body and are audited, past `triggers.refused_per_minute` a minute in one summary;
 * a client address past that many refusals for a trigger is answered 429 before its body is read
 * (TriggerRefusals), so a flood costs neither a body read, an HMAC nor an audit event each.
 */
@ApiTags('triggers')
@Controller('v1/triggers')
export class TriggersController {
  private readonly maxBodyBytes: number;
  private readonly proxies: TrustedProxies;

  constructor(
    private readonly triggers: TriggersService,
    private readonly refusals: TriggerRefusals,
    private readonly budget: BodyBudget,
    config: AppConfig,
  ) {
    // The event becomes a file of the session workspace, so the files limit bounds it too.
    this.maxBodyBytes = Math.min(config.triggers.maxBodyBytes, config.mcp.files.maxBytes);
    // Behind the configured proxy a sender is told apart by its forwarded address, as the audit log names it.
    this.proxies = new TrustedProxies(config.auth.trustedProxies);
  }

  @Post(':id')
  @HttpCode(202)
  @ApiOperation({ summary: "A signed event (GitHub or Standard Webhooks) starts one Task for the trigger's owner; a delivery id seen before starts none" })
  @ApiParam({ name: 'id', format: 'uuid' })
  @ApiResponse({ status: 202, type: TriggerDeliveryDto, description: 'The delivery was taken: its run, and its Task unless the queue refused it (`state`, `reason`)' })
  @ApiResponse({ status: 200, type: TriggerDeliveryDto, description: 'The same delivery id came before: the first delivery’s run; nothing new is queued' })
  @ApiResponse({ status: 400, description: 'No body, a body that is not JSON, or JSON nested deeper than 64 levels' })
  @ApiResponse({ status: 401, description: 'A missing or bad signature (audited; nothing queued)' })
  @ApiResponse({ status: 404, description: 'No enabled trigger with this id' })
  @ApiResponse({ status: 413, description: 'The body is larger than triggers.max_body_bytes (refused before it is read)' })
  @ApiResponse({
    status: 429,
    description:
      'A signed delivery past triggers.rate_per_minute for this trigger in the last minute, across replicas; or, before the body is read, a client address past triggers.refused_per_minute refused deliveries for this trigger this minute (audited; nothing queued); Retry-After says when to try again',
  })
  async deliver(@Param('id') id: string, @Req() req: Request, @Res() res: Response): Promise<void> {
    const forwardedFor = req.headersDistinct['x-forwarded-for'];
    const address = this.proxies.clientAddress(req.socket.remoteAddress ?? '', forwardedFor?.length === 1 ? forwardedFor[0] : undefined);
    const trigger = UUID.test(id) ? await this.triggers.forDelivery(id) : null;
    const bucket = trigger?.id ?? UNKNOWN_TRIGGER;
    const refused = async (status: number, reason: string, headers: Record<string, string> = {}) => {
      await this.refusals.refused({ bucket, trigger: UUID.test(id) ? id : 'invalid', address, status, reason, ownFault: status !== 429 });
      refuse(req, res, status, { error: reason }, headers);
    };
    const wait = this.refusals.wait(bucket, address);
    if (wait > 0) return refused(429, 'too many refused deliveries from this address', { 'Retry-After': String(wait) });
    if (!trigger) return refused(404, 'no such trigger');
    const lease = this.budget.lease();
    res.once('close', lease.release);
    const read = await readBodyBytes(req, this.maxBodyBytes, lease);
    if (read.kind === 'aborted') return;
    if (read.kind === 'too_large') return refused(413, `the body is larger than ${this.maxBodyBytes} bytes (triggers.max_body_bytes, mcp.files.max_bytes)`);
    if (read.kind === 'busy') return refuse(req, res, 503, { error: 'busy' }, { 'Retry-After': '1' });
    if (read.kind === 'none') return refused(400, 'no body');
    // Parsed once, and only past the signature: an unsigned body is never parsed.
    let body: { payload: unknown } | undefined;
    const payloadOf = () => (body ??= { payload: parsed(read.bytes) }).payload;
    const verified = verifyDelivery(trigger.kind, trigger.secret, req.headers, read.bytes, payloadOf);
    if ('problem' in verified) return refused(401, `bad signature: ${verified.problem}`);
    const payload = payloadOf();
    if (payload === undefined) return refused(400, 'the body is not JSON');
    // As on every JSON surface (MAX_JSON_DEPTH): a template field renders as JSON, recursively.
    if (nestsDeeperThan(payload, MAX_JSON_DEPTH)) return refused(400, `the body nests deeper than ${MAX_JSON_DEPTH} levels`);
    const outcome = await this.triggers.deliver(trigger, { ...verified, payload, body: read.bytes });
    if (outcome.kind === 'limited') return refused(429, 'too many deliveries for this trigger', { 'Retry-After': String(outcome.retryAfter) });
    const { run } = outcome;
    const replay = outcome.kind === 'replay';
    res.status(replay ? 200 : 202).json({ run_id: run.id, delivery_id: run.deliveryId, state: run.state, task_id: run.taskId, replay, reason: run.reason });
  }
}

/** The body as JSON, or undefined (a GitHub hook sending form data, or anything else). */
function parsed(bytes: Buffer): unknown {
  if (!isUtf8(bytes)) return undefined;
  try {
    return JSON.parse(bytes.toString('utf8')) as unknown;
  } catch {
    return undefined;
  }
}
