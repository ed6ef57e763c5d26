import { Get, Param, Post, Req, Res } from '@nestjs/common';
import { ApiBody, ApiOkResponse, ApiOperation, ApiProduces, ApiResponse } from '@nestjs/swagger';
import type { Response } from 'express';
import { AuditService } from '../audit/audit.service.js';
import { ChatCompletionRequestDto } from '../chat/chat.dto.js';
import { ChatError } from '../chat/chat.service.js';
import { writeSse } from '../chat/sse-writer.js';
import { personLocale } from '../common/person-locale.js';
import { AppConfig } from '../config/app-config.js';
import { RequestLimits } from '../config/request-limits.js';
import { BodyBudget } from '../http/body-budget.js';
import { readJsonBody } from '../http/json-body.js';
import { refuse } from '../http/refusal.js';
import { AdminAction, OwnView, type AdminRequest } from './admin-auth.guard.js';
import { UuidParamDto } from './admin.dto.js';
import { AdminRoutes, ApiAdminErrors, INVALID } from './admin-routes.decorator.js';
import { ConversationOptionsDto, ConversationTaskDto } from './console-conversation.dto.js';
import { CONSOLE_REQUEST, ConsoleConversationService } from './console-conversation.service.js';

/**
 * The console's conversation view (issue 36): options, a request typed there, and a Task followed live.
 * Not audited by the admin interceptor: a request is audited as the Chat API audits one (accepted with
 * its Task, or refused), and a follow is a read of what the Task page has already read (and audited).
 */
@AdminRoutes('admin', 'console', { audited: false })
export class ConsoleConversationController {
  private readonly keepaliveMs: number;
  private readonly maxBytes: number;

  constructor(
    private readonly conversation: ConsoleConversationService,
    private readonly budget: BodyBudget,
    private readonly audit: AuditService,
    limits: RequestLimits,
    config: AppConfig,
  ) {
    this.keepaliveMs = config.chat.keepaliveMs;
    this.maxBytes = limits.bodyBytes('chat');
  }

  @Get('conversation/options')
  @OwnView()
  @AdminAction('console.options')
  @ApiOperation({ summary: 'What the conversation view may offer with this configuration: the model tiers, and whether Fork works' })
  @ApiOkResponse({ type: ConversationOptionsDto })
  options(): ConversationOptionsDto {
    return this.conversation.options();
  }

  @Post('conversation')
  @OwnView()
  @AdminAction(CONSOLE_REQUEST)
  @ApiOperation({
    summary:
      'A request typed in the console: the body is a Chat completions request (messages, session_id to continue, model for the tier, agent_mode, files), queued as a Task of the caller on the console’s surface',
  })
  @ApiBody({ type: ChatCompletionRequestDto })
  @ApiResponse({ status: 202, type: ConversationTaskDto, description: 'Queued; follow it with GET /admin/tasks/{id}/stream' })
  @ApiAdminErrors(
    [400, 'The body is not JSON, or the request is invalid (as the Chat API answers it); nothing is stored'],
    [413, 'The body is larger than the Chat API takes'],
    [429, 'The caller has queue.max_queued_per_user Tasks waiting'],
    [503, 'Too many request bodies in flight, or the service is shutting down'],
  )
  async send(@Req() req: AdminRequest, @Res() res: Response): Promise<void> {
    const caller = req.caller!;
    const lease = this.budget.lease();
    res.once('close', lease.release);
    const body = await readJsonBody(req, this.maxBytes, lease);
    if (body.kind === 'aborted') return;
    if (body.kind === 'busy') return refuse(req, res, 503, { error: 'busy', message: 'Service busy: too many request bodies in flight; retry shortly.' }, { 'Retry-After': '1' });
    if (body.kind !== 'json') {
      const [status, message] = body.kind === 'too_large' ? [413, `The request body exceeds ${this.maxBytes} bytes.`] : [400, 'The body must be a JSON object.'];
      await this.audit.record({ caller, action: CONSOLE_REQUEST, outcome: 'rejected', detail: { reason: message } });
      return refuse(req, res, status, { error: status === 413 ? 'request_too_large' : 'invalid_input', message });
    }
    try {
      res.status(202).json(await this.conversation.send(caller, body.value, personLocale(req)));
    } catch (error) {
      if (!(error instanceof ChatError)) throw error;
      res.status(error.status).json({ error: error.code ?? error.type, message: error.message });
    }
  }

  @Get('tasks/:id/stream')
  @OwnView()
  @AdminAction('console.task_stream')
  @ApiOperation({
    summary:
      'A Task as it runs, as Server-Sent Events: the Chat API’s stream chunks (delta.agent, delta.agent_steps, the answer as content deltas), then data: [DONE] once it has ended (a user: their own)',
  })
  @ApiProduces('text/event-stream')
  @ApiOkResponse({ schema: { type: 'string' }, description: '`data: <chat.completion.chunk JSON>` events, `: keep-alive` comments, then `data: [DONE]`' })
  @ApiAdminErrors(INVALID, [404, 'No such Task (or another user’s)'])
  async stream(@Param() { id }: UuidParamDto, @Req() req: AdminRequest, @Res() res: Response): Promise<void> {
    const gone = new AbortController();
    res.on('close', () => gone.abort());
    const chunks = await this.conversation.stream(req.caller!, id, gone.signal, personLocale(req));
    if (!chunks) return void res.status(404).json({ error: 'not_found', message: `no task ${id}` });
    await writeSse(res, chunks, this.keepaliveMs, gone.signal);
  }
}
