import 'reflect-metadata';
import { beforeAll, describe, expect, it } from '@jest/globals';
import express from 'express';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { OWN_VIEW } from '../../src/admin/admin-auth.guard.js';
import { mountExpressRoutes } from '../../src/http/express-routes.js';
import { PUBLIC_PATHS } from '../../src/identity/oauth/bearer-admission.js';
import { edgeRoutesOf } from '../../src/http/off-router-endpoint.js';
import { ROUTES, routeKey, type Route } from '../../src/http/route-table.js';
import { nestRoutes, type NestRoute } from '../support/nest-routes.js';
import { committedDocument } from '../support/openapi-responses.js';
import { committedRouteTable, renderRouteTable } from '../support/route-table-doc.js';

/**
 * The route table (src/http/route-table.ts) against what the code declares elsewhere: the Nest
 * controllers' routes and their admission, the OpenAPI document, the architecture page. The Express
 * and edge rows are mounted from the table itself; route-table.e2e sends a request to every row.
 */
const keys = (routes: readonly { method: string; path: string }[]) => routes.map(routeKey).sort();
const nestRows = ROUTES.filter((route) => route.serving === 'nest');

/** What a controller route runs before its handler says who it lets in. */
function accessOf(route: NestRoute): Route['access'] | 'public, signature or discovery' {
  if (route.guards.includes('AdminAuthGuard')) return route.metadata[OWN_VIEW] === true ? 'own-view' : 'admin';
  if (route.interceptors.includes('ChatAdmission')) return 'caller';
  return 'public, signature or discovery';
}

describe('the route table', () => {
  let controllers: NestRoute[];

  beforeAll(async () => {
    controllers = await nestRoutes();
  });

  it('names each route once', () => {
    expect(new Set(ROUTES.map(routeKey)).size).toBe(ROUTES.length);
    expect(ROUTES.length).toBeGreaterThan(60);
  });

  it('lists exactly the routes of the Nest controllers, each with the module it is in as its owner', () => {
    expect(keys(nestRows)).toEqual(keys(controllers));
    const owners = new Map(controllers.map((route) => [routeKey(route), route.module]));
    expect(nestRows.filter((route) => owners.get(routeKey(route)) !== route.owner).map(routeKey)).toEqual([]);
  });

  it('states the admission each controller route has (AdminAuthGuard, @OwnView, ChatAdmission), and the Chat body limit where ChatAdmission reads it', () => {
    const byKey = new Map(nestRows.map((route) => [routeKey(route), route]));
    const differing = controllers.flatMap((route) => {
      const row = byKey.get(routeKey(route));
      // A controller route the table misses fails the listing test above.
      if (!row) return [];
      const stated = ['public', 'signature', 'discovery'].includes(row.access) ? 'public, signature or discovery' : row.access;
      return stated === accessOf(route) ? [] : [`${routeKey(route)}: the table says ${row.access}, the controller admits ${accessOf(route)}`];
    });
    expect(differing).toEqual([]);
    const readsChatBody = controllers.filter((route) => route.metadata['chat:reads-body'] === true).map(routeKey);
    expect(readsChatBody.filter((key) => byKey.get(key)?.body !== 'chat')).toEqual([]);
  });

  it('documents in docs/openapi.json exactly its rows described by the OpenAPI document, with the same method and path', () => {
    const documented = Object.entries(committedDocument().paths).flatMap(([path, methods]) => Object.keys(methods).map((method) => ({ method: method.toUpperCase(), path })));
    expect(keys(ROUTES.filter((route) => route.documented === 'openapi'))).toEqual(keys(documented));
    // And the controllers left out of the document (@ApiExcludeController) are the Nest rows described elsewhere.
    const excluded = controllers.filter((route) => route.excluded).map(routeKey);
    expect(excluded.sort()).toEqual(keys(nestRows.filter((route) => route.documented !== 'openapi')));
  });

  it('names the routes auth.oauth.public_routes can open as BearerAdmission opens them (a GET of that path)', () => {
    const openable = ROUTES.filter((route) => route.publicRoute !== undefined);
    expect(openable.every((route) => route.method === 'GET')).toBe(true);
    expect(Object.fromEntries(openable.map((route) => [route.path, route.publicRoute]))).toEqual(PUBLIC_PATHS);
  });

  it('is the route section of docs/architecture.md (the expected section is printed on a mismatch)', () => {
    const page = readFileSync(join(import.meta.dirname, '../../docs/architecture.md'), 'utf8');
    const expected = renderRouteTable();
    if (committedRouteTable(page) !== expected) console.log(`docs/architecture.md's route table should read:\n\n${expected}\n`);
    expect(committedRouteTable(page)).toBe(expected);
  });
});

describe('mounting from the table', () => {
  it('refuses Express handlers that miss a row of the table or name a route it does not list', () => {
    const app = express();
    expect(() => mountExpressRoutes(app, { 'GET /nowhere': [] })).toThrow(
      /no handlers for \[GET \/\.well-known\/agent-card\.json, POST \/a2a, GET \/\.well-known\/jwks\.json, GET \/admin\/openapi\.json\], not in the table \[GET \/nowhere\]/,
    );
  });

  it("gives /mcp's endpoint its path (a trailing slash, a query, any case) and its one method", () => {
    const { path, allow } = edgeRoutesOf('mcp');
    expect(['/mcp', '/mcp/', '/MCP?x=1', '/mcp/?'].filter((target) => path.test(target))).toHaveLength(4);
    expect(['/mcpx', '/mcp/x', '/a/mcp'].filter((target) => path.test(target))).toEqual([]);
    expect(allow).toBe('POST');
    expect(() => edgeRoutesOf('chat')).toThrow(/0 edge paths/);
  });
});
