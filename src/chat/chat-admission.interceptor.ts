import { createParamDecorator, Injectable, SetMetadata, type CallHandler, type ExecutionContext, type NestInterceptor } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Request, Response } from 'express';
import { of, type Observable } from 'rxjs';
import { RequestAdmission, type SurfaceErrors } from '../http/request-admission.js';
import type { Caller } from '../identity/caller.js';
import { openAiError } from './chat-views.js';
import { COMPLETIONS_ACTION } from './chat.service.js';

/** What a Chat API handler is given: the caller, and on a route that reads one, the request's JSON body. */
export interface ChatAdmitted {
  caller: Caller;
  body: unknown;
}

const READS_BODY = 'chat:reads-body';

/** Marks a route whose JSON body is the request: admission reads it (size limit, budget, JSON) after the caller. */
export const ReadsBody = () => SetMetadata(READS_BODY, true);

/** What the interceptor admitted, per request, for the `@Admitted()` parameter. */
const admittedRequests = new WeakMap<Request, ChatAdmitted>();

/** The handler's parameter: what ChatAdmission admitted for this request. */
export const Admitted = createParamDecorator((_data: unknown, context: ExecutionContext) => admittedRequests.get(context.switchToHttp().getRequest<Request>()));

/** The Chat API's refusals in OpenAI's error shape. */
const CHAT_ERRORS: SurfaceErrors = {
  transport: 'chat',
  bodyRejected: COMPLETIONS_ACTION,
  unadmitted: ({ status, message }) => openAiError(message, status === 403 ? 'permission_error' : 'authentication_error', null, null),
  busy: () => openAiError('Service busy: too many request bodies in flight; retry shortly.', 'server_error', null, 'busy'),
  badBody(problem, maxBytes) {
    const [status, message, code]: [400 | 413, string, string] =
      problem.kind === 'too_large' ? [413, `Request body exceeds ${maxBytes} bytes`, 'request_too_large'] : [400, 'The body must be a JSON object.', 'invalid_json'];
    return { status, body: openAiError(message, 'invalid_request_error', null, code), detail: { reason: message } };
  },
};

/**
 * Admission of every Chat API request, ahead of its handler: the caller from the headers, then, on a
 * `@ReadsBody()` route, the body (RequestAdmission). An interceptor rather than a guard or a pipe: a
 * refusal is answered by the admission step itself, which drains the rest of the body before the
 * connection closes, so the handler must simply not run, and only an interceptor can skip it without
 * an exception (a guard that says no throws a 403 of Nest's own, a pipe can only throw).
 */
@Injectable()
export class ChatAdmission implements NestInterceptor {
  constructor(
    private readonly admission: RequestAdmission,
    private readonly reflector: Reflector,
  ) {}

  async intercept(context: ExecutionContext, next: CallHandler): Promise<Observable<unknown>> {
    const req = context.switchToHttp().getRequest<Request>();
    const res = context.switchToHttp().getResponse<Response>();
    const admitted = this.reflector.get<boolean | undefined>(READS_BODY, context.getHandler())
      ? await this.admission.request(req, res, CHAT_ERRORS, req.path)
      : await this.admission.caller(req, res, CHAT_ERRORS, req.path).then((caller) => caller && { caller, body: undefined });
    // Refused (answered and audited) or gone mid-body: the handler does not run, and nothing is left to write.
    if (!admitted) return of(undefined);
    admittedRequests.set(req, { caller: admitted.caller, body: admitted.body });
    return next.handle();
  }
}
