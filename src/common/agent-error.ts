/**
 * Domain errors carry a code; each edge (MCP tool result, JSON-RPC error, HTTP status) maps the codes
 * once, exhaustively, in its own module.
 */
export type AgentErrorCode =
  'invalid_input' | 'session_not_found' | 'resource_not_found' | 'resource_too_large' | 'files_expired' | 'shutting_down' | 'queue_full' | 'quota_exceeded' | 'internal';

export class AgentError extends Error {
  constructor(
    readonly code: AgentErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'AgentError';
  }
}

export const isAgentError = (error: unknown): error is AgentError => error instanceof AgentError;

/** A user past their token quota for the day (issue 39): the message names the quota; `resetsAt` is when it resets. */
export class QuotaExceeded extends AgentError {
  constructor(
    message: string,
    readonly resetsAt: Date,
  ) {
    super('quota_exceeded', message);
  }

  /** Whole seconds until the reset, at least 1: a `Retry-After`. */
  retryAfterS(now = Date.now()): number {
    return Math.max(1, Math.ceil((this.resetsAt.getTime() - now) / 1000));
  }
}
