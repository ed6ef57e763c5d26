import type { IncomingMessage, ServerResponse } from 'node:http';
import type { EdgeRefusal } from './host-origin-guard.js';

/**
 * An endpoint served straight from node:http, ahead of Express and Nest's router, whose per-request
 * cost would exceed the endpoint's own work (ADR 0007). HttpEdge checks its requests like every
 * other route's, then hands them over. The module that serves the protocol provides it (mcp/ for
 * /mcp), so the edge knows no protocol: only which paths are the endpoint's, what to put in a 405's
 * Allow header, and the shape its protocol gives an edge refusal.
 */
export abstract class OffRouterEndpoint {
  /** The request targets (path and query) this endpoint serves. */
  abstract readonly path: RegExp;
  /** The methods a 405 on this endpoint names in its Allow header. */
  abstract readonly allow: string;
  /** The body of a refusal by the edge, in the endpoint's protocol. */
  abstract refusalBody(refusal: EdgeRefusal): unknown;
  abstract handle(req: IncomingMessage, res: ServerResponse): void;
}
