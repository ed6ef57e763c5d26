import type { ServerContext } from '@modelcontextprotocol/server';
import { TASKS_EXTENSION } from '../common/server-info.js';

/** The per-request `_meta` envelope of 2026-07-28; the SDK types it as `{}`, so its keys are named here. */
interface RequestEnvelope {
  'io.modelcontextprotocol/clientCapabilities'?: { extensions?: Record<string, unknown> };
  'io.modelcontextprotocol/clientInfo'?: { name: string; version: string };
}

const envelopeOf = (ctx: ServerContext) => (ctx.mcpReq.envelope ?? {}) as RequestEnvelope;

/** Whether this very request declared the Tasks extension (legacy requests have no envelope). */
export const declaresTasks = (ctx: ServerContext) => envelopeOf(ctx)['io.modelcontextprotocol/clientCapabilities']?.extensions?.[TASKS_EXTENSION] !== undefined;

export const envelopeClientInfo = (ctx: ServerContext) => envelopeOf(ctx)['io.modelcontextprotocol/clientInfo'];

/** The W3C trace context in the request's `_meta` (`traceparent`, `tracestate`; SEP-414), unchecked: the queue validates it. */
export const requestTraceContext = (ctx: ServerContext) => {
  const meta: Record<string, unknown> = ctx.mcpReq._meta ?? {};
  return { traceparent: meta.traceparent, tracestate: meta.tracestate };
};
