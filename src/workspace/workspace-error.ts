/** A refused or failed workspace operation; the message goes back to the model as the tool result. */
export class WorkspaceError extends Error {
  constructor(
    readonly code: 'path_denied' | 'not_found' | 'exists' | 'invalid' | 'sandbox_unavailable' | 'quota_exceeded' | 'too_large' | 'timeout',
    message: string,
  ) {
    super(message);
    this.name = 'WorkspaceError';
  }
}
