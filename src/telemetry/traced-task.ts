/**
 * What telemetry knows of a Task, handed over by the queue (the Task's entity stays inside queue/):
 * its trace ids from its row and what the Task span and the metrics name.
 */
export interface TracedTask {
  id: string;
  sessionId: string;
  traceId: string | null;
  spanId: string | null;
  /** The caller's `traceparent` and `tracestate` the Task continues. */
  traceParent: string | null;
  traceState: string | null;
  /** `mcp-http`, `stdio`, `chat`, `a2a` (null for Tasks older than the column). */
  surface: string | null;
  tier: string;
  mode: 'agent' | 'direct';
  createdAt: string;
  request: string;
}
