/**
 * Domain errors carry a code; each edge (MCP tool result, JSON-RPC error, HTTP status) maps the codes
 * once, exhaustively, in its own module.
 */
export type AgentErrorCode =
  'invalid_input' | 'session_not_found' | 'resource_not_found' | 'resource_too_large' | 'files_expired' | 'shutting_down' | 'queue_full' | 'already_decided' | 'internal';

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
