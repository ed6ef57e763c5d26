import { Catch, Logger, type ArgumentsHost, type ExceptionFilter } from '@nestjs/common';
import type { Response } from 'express';
import { openAiError } from './chat-views.js';
import { ChatError } from './chat.service.js';

/** Retry-After of a 429 (queue.max_queued_per_user reached), in seconds. */
const QUEUE_FULL_RETRY_AFTER_S = 30;

/**
 * Every error of a Chat API route, in OpenAI's error shape: a ChatError as its status and fields, anything
 * else as a 500 `server_error` (logged, never shown). Once a response has begun (a stream's headers are
 * out) there is no status left to set, and the response is ended.
 */
@Catch()
export class ChatErrorFilter implements ExceptionFilter {
  private readonly logger = new Logger('ChatApi');

  catch(error: unknown, host: ArgumentsHost): void {
    const res = host.switchToHttp().getResponse<Response>();
    const known = error instanceof ChatError;
    if (!known) this.logger.error(`Chat API request failed: ${(error instanceof Error && error.stack) || String(error)}`);
    if (res.headersSent) return void res.end();
    // A user's queue is full: Tasks start one at a time, so a retry makes sense after a while; a quota says when it resets.
    if (known && error.status === 429) res.setHeader('Retry-After', String(error.retryAfterS ?? QUEUE_FULL_RETRY_AFTER_S));
    if (known) res.status(error.status).json(openAiError(error.message, error.type, error.param, error.code));
    else res.status(500).json(openAiError('The request could not be completed; see the service log.', 'server_error', null, 'internal'));
  }
}
