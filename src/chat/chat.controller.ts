import { Controller, Get, Logger, Param, Post, Req, Res } from '@nestjs/common';
import { ApiBody, ApiExtraModels, ApiOkResponse, ApiOperation, ApiParam, ApiProduces, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { AppConfig } from '../config/app-config.js';
import { SurfaceIdentity } from '../http/surface-identity.js';
import { refuse } from '../http/refusal.js';
import type { Caller } from '../identity/caller.js';
import { maxRequestBodyBytes } from '../config/request-limits.js';
import { BodyBudget } from '../http/body-budget.js';
import { readJsonBody } from '../http/json-body.js';
import { ChatCancellationDto, ChatCompletionDto, ChatContentPartDto, ChatCompletionRequestDto, ChatErrorDto, ChatModelListDto } from './chat.dto.js';
import { ChatError, ChatService } from './chat.service.js';
import { openAiError } from './chat-views.js';
import { writeSse } from './sse-writer.js';

/** Retry-After of a 429 (queue.max_queued_per_user reached), in seconds. */
const QUEUE_FULL_RETRY_AFTER_S = 30;

/**
 * The OpenAI-compatible Chat API. Handlers write their own responses: errors are OpenAI's shape on
 * every path past the HTTP edge (identity, body size, input), and a streamed answer is Server-Sent Events.
 */
@ApiTags('chat')
@ApiExtraModels(ChatContentPartDto)
@Controller('v1')
export class ChatController {
  private readonly logger = new Logger('ChatApi');
  private readonly maxBodyBytes: number;

  constructor(
    private readonly chat: ChatService,
    private readonly identity: SurfaceIdentity,
    private readonly config: AppConfig,
    private readonly budget: BodyBudget,
  ) {
    this.maxBodyBytes = maxRequestBodyBytes(config.mcp.images.maxTotalBytes, config.mcp.files.maxBytes);
  }

  @Get('models')
  @ApiOperation({ summary: 'The one model: the agent (its id is chat.model_id)' })
  @ApiOkResponse({ type: ChatModelListDto })
  async models(@Req() req: Request, @Res() res: Response): Promise<void> {
    const caller = await this.admit(req, res);
    if (caller) await this.answer(res, () => this.chat.models(caller));
  }

  @Post('chat/completions')
  @ApiOperation({
    summary: 'Run a request as an agent Task: the completion when the Task ends, or (stream: true) Server-Sent Events as it runs',
    description:
      'The last message is the request; without session_id a new session starts with the earlier messages as its history. ' +
      'Streamed chunks carry the extension fields delta.agent (task_id, session_id, status) and delta.agent_steps (execution steps); ' +
      'a comment line `: keep-alive` is sent at least every chat.keepalive_ms. A client that disconnects does not cancel the Task.',
  })
  @ApiBody({ type: ChatCompletionRequestDto })
  @ApiProduces('application/json', 'text/event-stream')
  @ApiOkResponse({ type: ChatCompletionDto })
  @ApiResponse({ status: 400, type: ChatErrorDto, description: 'Invalid input; nothing is stored' })
  async complete(@Req() req: Request, @Res() res: Response): Promise<void> {
    const caller = await this.admit(req, res);
    if (!caller) return;
    // What the body holds counts against server.max_buffered_bytes until the answer is written.
    const lease = this.budget.lease();
    res.once('close', lease.release);
    const body = await readJsonBody(req, this.maxBodyBytes, lease);
    if (body.kind === 'aborted') return;
    if (body.kind === 'busy')
      return refuse(req, res, 503, openAiError('Service busy: too many request bodies in flight; retry shortly.', 'server_error', null, 'busy'), { 'Retry-After': '1' });
    if (body.kind !== 'json') return this.chat.refuseBody(caller, body.kind, this.maxBodyBytes).then(({ status, error }) => refuse(req, res, status, error));
    const gone = new AbortController();
    res.on('close', () => gone.abort());
    await this.answer(res, async () => {
      const { task, stream } = await this.chat.accept(caller, body.value);
      if (stream) return writeSse(res, this.chat.chunks(task, gone.signal), this.config.chat.keepaliveMs, gone.signal);
      return this.chat.completion(task, gone.signal);
    });
  }

  @Post('chat/completions/:session_id/cancel')
  @ApiOperation({ summary: "Cancel the session's queued or running Task" })
  @ApiParam({ name: 'session_id', format: 'uuid' })
  @ApiOkResponse({ type: ChatCancellationDto })
  @ApiResponse({ status: 404, type: ChatErrorDto, description: 'No such session of the caller' })
  async cancel(@Param('session_id') sessionId: string, @Req() req: Request, @Res() res: Response): Promise<void> {
    const caller = await this.admit(req, res);
    if (caller) await this.answer(res, () => this.chat.cancel(caller, sessionId));
  }

  private async admit(req: Request, res: Response): Promise<Caller | null> {
    const admission = await this.identity.admit(req, 'chat', req.path);
    if ('caller' in admission) return admission.caller;
    const { status, message, headers } = admission.refusal;
    // Refused from the headers: the body is never read (Connection: close).
    refuse(req, res, status, openAiError(message, status === 403 ? 'permission_error' : 'authentication_error', null, null), headers);
    return null;
  }

  /** Writes the handler's JSON (nothing when it wrote the response itself, or the client left), or its ChatError. */
  private async answer(res: Response, handler: () => Promise<object | null | void>): Promise<void> {
    try {
      const result = await handler();
      if (result && !res.headersSent) res.status(200).json(result);
    } catch (error) {
      const known = error instanceof ChatError;
      if (!known) this.logger.error(`Chat API request failed: ${(error as Error).stack ?? String(error)}`);
      if (res.headersSent) return void res.end();
      // A user's queue is full: Tasks start one at a time, so a retry makes sense after a while.
      if (known && error.status === 429) res.setHeader('Retry-After', String(QUEUE_FULL_RETRY_AFTER_S));
      if (known) res.status(error.status).json(openAiError(error.message, error.type, error.param, error.code));
      else res.status(500).json(openAiError('The request could not be completed; see the service log.', 'server_error', null, 'internal'));
    }
  }
}
