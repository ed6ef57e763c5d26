import { Router, type Express, type RequestHandler } from 'express';
import { ROUTES, routeKey } from './route-table.js';

/**
 * Mounts the route table's `express` rows on the application, each with the handlers given under its
 * key (`POST /a2a`); a row given no handlers, or handlers for a key that is no such row, stops the start,
 * so what Express serves off Nest's router is exactly what the table lists. Each row answers its own
 * method (GET with HEAD) on its path alone, anything else goes on to Nest's router (404 there).
 */
export function mountExpressRoutes(app: Express, handlers: Record<string, RequestHandler[]>): void {
  const rows = ROUTES.filter((route) => route.serving === 'express');
  const missing = rows.map(routeKey).filter((key) => !handlers[key]);
  const unlisted = Object.keys(handlers).filter((key) => !rows.some((row) => routeKey(row) === key));
  if (missing.length > 0 || unlisted.length > 0) {
    throw new Error(`the Express routes differ from the route table: no handlers for [${missing.join(', ')}], not in the table [${unlisted.join(', ')}]`);
  }
  for (const row of rows) {
    const chain = Router().use(handlers[routeKey(row)]);
    const methods = row.method === 'GET' ? ['GET', 'HEAD'] : [row.method];
    // Mounted with `use`, not `get`/`post`: the SDK's handlers are routers that serve their mount path as `/`.
    app.use(row.path, (req, res, next) => (methods.includes(req.method) && req.path === '/' ? chain(req, res, next) : next()));
  }
}
