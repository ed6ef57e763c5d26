import type { ServerCallContext, User } from '@a2a-js/sdk/server';
import { A2AError } from '@a2a-js/sdk/errors';
import type { Caller } from '../identity/caller.js';
import type { CallerTraceContext } from '../telemetry/trace-context.js';

/**
 * The caller the edge identified, carried through the SDK's call context to the store and executor, with
 * the request's W3C trace context (`traceparent`/`tracestate` headers) that a Task it starts continues.
 */
export class A2aUser implements User {
  constructor(
    readonly caller: Caller,
    readonly trace: CallerTraceContext = {},
  ) {}

  get isAuthenticated(): boolean {
    return true;
  }

  get userName(): string {
    return this.caller.user;
  }
}

/** The caller of a call; every /a2a call passed the edge's identity check, so a context without one is a bug. */
export function callerOf(context: ServerCallContext): Caller {
  const user = context.user;
  if (!(user instanceof A2aUser)) throw new A2AError('no identified caller on this call');
  return user.caller;
}

/** The trace context of the call's HTTP request. */
export function traceOf(context: ServerCallContext): CallerTraceContext {
  return context.user instanceof A2aUser ? context.user.trace : {};
}
