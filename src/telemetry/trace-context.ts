import { randomBytes } from 'node:crypto';

/** The W3C trace context a caller sent with its request (MCP `_meta`, or the HTTP headers of Chat and A2A). */
export interface CallerTraceContext {
  traceparent?: unknown;
  tracestate?: unknown;
}

/** A Task's place in a trace, stored on its row: its own span, and the caller's it continues. */
export interface TaskTraceIds {
  traceId: string;
  spanId: string;
  /** The caller's `traceparent`, normalised; null when the Task starts a trace of its own. */
  traceParent: string | null;
  traceState: string | null;
}

/** A parsed `traceparent`: version 00's fields (a later version's are read the same, as W3C asks). */
export interface ParsedTraceparent {
  traceId: string;
  spanId: string;
  sampled: boolean;
}

const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/;
const ALL_ZERO = /^0+$/;
/** W3C tracestate: at most 32 `key=value` members; keys lower-case (with an optional `tenant@`), values printable ASCII without `,` or `=`. */
const STATE_MEMBER = /^(?:[a-z][a-z0-9_\-*/]{0,255}|[a-z0-9][a-z0-9_\-*/]{0,240}@[a-z][a-z0-9_\-*/]{0,13})=[\x20-\x2b\x2d-\x3c\x3e-\x7e]{0,255}[\x21-\x2b\x2d-\x3c\x3e-\x7e]$/;
const MAX_STATE_CHARS = 512;
const MAX_STATE_MEMBERS = 32;

/**
 * A caller's `traceparent`, or null when it is absent or not valid (W3C Trace Context level 2, §3.2:
 * a receiver ignores a header it cannot parse and starts a new trace; it never fails the request).
 */
export function parseTraceparent(value: unknown): ParsedTraceparent | null {
  if (typeof value !== 'string' || value.length > 512) return null;
  const match = TRACEPARENT.exec(value.trim());
  if (!match) return null;
  const [, version, traceId, spanId, flags, rest] = match;
  if (version === 'ff' || (version === '00' && rest !== undefined)) return null;
  if (ALL_ZERO.test(traceId) || ALL_ZERO.test(spanId)) return null;
  return { traceId, spanId, sampled: (Number.parseInt(flags, 16) & 1) === 1 };
}

/** A caller's `tracestate`, kept only when every member is well-formed and it fits the column; else dropped whole (§3.3.1.5). */
export function parseTracestate(value: unknown): string | null {
  if (typeof value !== 'string') return null;
  const members = value
    .split(',')
    .map((member) => member.trim())
    .filter((member) => member !== '');
  if (members.length === 0 || members.length > MAX_STATE_MEMBERS || !members.every((member) => STATE_MEMBER.test(member))) return null;
  const state = members.join(',');
  return state.length <= MAX_STATE_CHARS ? state : null;
}

/** The `traceparent` a span context is sent as. */
export const formatTraceparent = (traceId: string, spanId: string, sampled: boolean) => `00-${traceId}-${spanId}-${sampled ? '01' : '00'}`;

/**
 * The trace ids a new Task gets: its own span id in the caller's trace when the caller sent one, else
 * a new trace when tracing is on; null when neither (nothing to correlate, nothing to show).
 */
export function taskTraceIds(caller: CallerTraceContext | undefined, tracing: boolean): TaskTraceIds | null {
  const parent = parseTraceparent(caller?.traceparent);
  if (!parent && !tracing) return null;
  return {
    traceId: parent?.traceId ?? randomBytes(16).toString('hex'),
    spanId: randomBytes(8).toString('hex'),
    traceParent: parent ? formatTraceparent(parent.traceId, parent.spanId, parent.sampled) : null,
    traceState: parent ? parseTracestate(caller?.tracestate) : null,
  };
}

/** A span as stored ids: the Task's span on its row, or a caller's. */
export interface SpanRef {
  traceId: string;
  spanId: string;
  sampled: boolean;
  traceState?: string | null;
}

/** The caller's span a stored `traceparent` names. */
export function callerRef(traceParent: string | null, traceState: string | null): SpanRef | null {
  const parsed = parseTraceparent(traceParent);
  return parsed && { ...parsed, traceState };
}
