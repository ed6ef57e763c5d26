/**
 * What JSON-RPC 2.0 (§4, §5.1) requires of a request object before its method is looked at, checked
 * ahead of the SDK: its 1.0 handler maps every malformed envelope to invalid params (-32602), where
 * JSON-RPC and A2A 1.0 (§9.5, InvalidRequestError) name -32600. The problem, or null for a request.
 */
export function envelopeProblem(body: unknown): string | null {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return 'the request must be one JSON-RPC request object (batches are not supported)';
  const request = body as Record<string, unknown>;
  if (request.jsonrpc !== '2.0') return 'jsonrpc must be exactly "2.0"';
  if (typeof request.method !== 'string' || request.method === '') return 'method must be a non-empty string';
  if ('id' in request && !validId(request.id)) return 'id must be a string, an integer or null';
  return null;
}

/** The request's id when it may be echoed in the error (a valid one), else null as JSON-RPC asks. */
export function echoableId(body: unknown): string | number | null {
  const id = typeof body === 'object' && body !== null && !Array.isArray(body) ? (body as Record<string, unknown>).id : null;
  return validId(id) ? (id as string | number | null) : null;
}

const validId = (id: unknown) => id === null || typeof id === 'string' || (typeof id === 'number' && Number.isInteger(id));
