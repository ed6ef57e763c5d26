import { Controller, Get, Param, Post, Req, Res, UseFilters, UseInterceptors } from '@nestjs/common';
import { ApiBody, ApiExtraModels, ApiOkResponse, ApiOperation, ApiParam, ApiProduces, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { AppConfig } from '../config/app-config.js';
import { Admitted, ChatAdmission, ReadsBody, type ChatAdmitted } from './chat-admission.interceptor.js';
import { ChatErrorFilter } from './chat-error.filter.js';
import { ChatCancellationDto, ChatCompletionDto, ChatContentPartDto, ChatCompletionRequestDto, ChatErrorDto, ChatModelListDto } from './chat.dto.js';
import { ChatService } from './chat.service.js';
import { writeSse } from './sse-writer.js';

/**
 * The OpenAI-compatible Chat API. ChatAdmission admits the caller (and reads the body) before a handler
 * runs, ChatErrorFilter answers every error in OpenAI's shape; handlers write their own responses
 * (`@Res()`): a streamed answer is Server-Sent Events, and a refused request was answered by admission.
 */
@ApiTags('chat')
@ApiExtraModels(ChatContentPartDto)
@Controller('v1')
@UseInterceptors(ChatAdmission)
@UseFilters(ChatErrorFilter)
export class ChatController {
  constructor(
    private readonly chat: ChatService,
    private readonly config: AppConfig,
  ) {}

  @Get('models')
  @ApiOperation({ summary: 'The one model: the agent (its id is chat.model_id)' })
  @ApiOkResponse({ type: ChatModelListDto })
  async models(@Admitted() { caller }: ChatAdmitted, @Res() res: Response): Promise<void> {
    res.status(200).json(await this.chat.models(caller));
  }

  @Post('chat/completions')
  @ReadsBody()
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
  async complete(@Admitted() { caller, body }: ChatAdmitted, @Req() req: Request, @Res() res: Response): Promise<void> {
    const gone = new AbortController();
    res.on('close', () => gone.abort());
    const accepted = await this.chat.accept(caller, body, { traceparent: req.headers.traceparent, tracestate: req.headers.tracestate });
    if (accepted.stream) return writeSse(res, this.chat.chunks(accepted, gone.signal), this.config.chat.keepaliveMs, gone.signal);
    const completion = await this.chat.completion(accepted, gone.signal);
    // Null: the client went away before the Task ended, and there is no one to answer.
    if (completion) res.status(200).json(completion);
  }

  @Post('chat/completions/:session_id/cancel')
  @ApiOperation({ summary: "Cancel the session's queued or running Task" })
  @ApiParam({ name: 'session_id', format: 'uuid' })
  @ApiOkResponse({ type: ChatCancellationDto })
  @ApiResponse({ status: 404, type: ChatErrorDto, description: 'No such session of the caller' })
  async cancel(@Param('session_id') sessionId: string, @Admitted() { caller }: ChatAdmitted, @Res() res: Response): Promise<void> {
    res.status(200).json(await this.chat.cancel(caller, sessionId));
  }
}
