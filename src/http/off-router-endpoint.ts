import type { IncomingMessage, ServerResponse } from 'node:http';
import type { EdgeRefusal } from './host-origin-guard.js';
import { ROUTES } from './route-table.js';

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

/**
 * What an endpoint of `owner` serves, from the route table's `edge` rows: its request targets (the
 * path with or without a trailing slash and a query string, in any case: what Express's default,
 * non-strict routing matched) and the methods a 405 names.
 */
export function edgeRoutesOf(owner: string): Pick<OffRouterEndpoint, 'path' | 'allow'> {
  const rows = ROUTES.filter((route) => route.serving === 'edge' && route.owner === owner);
  const paths = [...new Set(rows.map((route) => route.path))];
  if (paths.length !== 1) throw new Error(`the route table gives ${owner} ${paths.length} edge paths; an off-router endpoint serves one`);
  const literal = paths[0].replace(/\/$/, '').replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return { path: new RegExp(`^${literal}\\/?(?:\\?|$)`, 'i'), allow: rows.map((route) => route.method).join(', ') };
}
