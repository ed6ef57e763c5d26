import { Catch, HttpStatus, type ArgumentsHost, type ExceptionFilter } from '@nestjs/common';
import type { Response } from 'express';
import { AgentError, type AgentErrorCode } from '../common/agent-error.js';

/** How each domain error code reads as an HTTP status on the REST surface; exhaustive by construction. */
const STATUS: Record<AgentErrorCode, number> = {
  invalid_input: HttpStatus.BAD_REQUEST,
  session_not_found: HttpStatus.NOT_FOUND,
  resource_not_found: HttpStatus.NOT_FOUND,
  resource_too_large: HttpStatus.PAYLOAD_TOO_LARGE,
  files_expired: HttpStatus.GONE,
  shutting_down: HttpStatus.SERVICE_UNAVAILABLE,
  queue_full: HttpStatus.TOO_MANY_REQUESTS,
  quota_exceeded: HttpStatus.TOO_MANY_REQUESTS,
  internal: HttpStatus.INTERNAL_SERVER_ERROR,
};

@Catch(AgentError)
export class AgentErrorFilter implements ExceptionFilter {
  catch(error: AgentError, host: ArgumentsHost): void {
    host.switchToHttp().getResponse<Response>().status(STATUS[error.code]).json({ error: error.code, message: error.message });
  }
}
