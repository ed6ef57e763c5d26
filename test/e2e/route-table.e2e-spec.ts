import { beforeAll, describe, expect, it } from '@jest/globals';
import { ADMIN_BODY_BYTES } from '../../src/admin/admin-json-body.js';
import { RequestLimits } from '../../src/config/request-limits.js';
import { ROUTES, routeKey, type Route } from '../../src/http/route-table.js';
import { adminApi } from '../support/automation-api.js';
import { useStack } from '../support/e2e-stack.js';
import { ADMIN, as, PROXY_AUTH } from '../support/proxy-identity.js';

const USER = as('dana@example.com');
const IDENTITIES = { anonymous: {}, user: USER, admin: ADMIN } as const;
type Who = keyof typeof IDENTITIES;
/** Small image and file limits, so that a body past each surface's limit is about a mebibyte. */
const MCP_LIMITS = { images: { max_total_bytes: 4096, max_bytes_per_image: 4096 }, files: { max_bytes: 4096 } };
const TRIGGER_BODY_BYTES = 2048;
const LIMITS = RequestLimits.of({ images: { maxTotalBytes: 4096 }, files: { maxBytes: 4096 } });
const BODY_BYTES: Record<Exclude<Route['body'], 'none'>, number> = {
  'mcp-http': LIMITS.bodyBytes('mcp-http'),
  chat: LIMITS.bodyBytes('chat'),
  a2a: LIMITS.bodyBytes('a2a'),
  'admin-json': ADMIN_BODY_BYTES,
  trigger: TRIGGER_BODY_BYTES,
};
type Verdict = 'served' | 401 | 403 | 'no route';
const ZERO_UUID = '00000000-0000-4000-8000-000000000000';

/**
 * Issue 42: a request to every route of the route table (src/http/route-table.ts) gets the admission
 * the table states, as nobody, as a user and as an admin (behind the SSO proxy, auth.mode
 * proxy_headers), with minimal or bad input: never a 5xx, and never Nest's 404 for a path it has no
 * route for, except where the table says the route exists only under another configuration. A route
 * that reads a body refuses one past the limit the table names with 413.
 */
describe('the route table, route by route', () => {
  const stack = useStack({ config: { auth: PROXY_AUTH, mcp: MCP_LIMITS, triggers: { max_body_bytes: TRIGGER_BODY_BYTES } } });
  /** A trigger of the user's, for the one route whose path must name a real one to reach its signature check. */
  let triggerId: string;

  beforeAll(async () => {
    const created = await adminApi(stack.base, USER)('POST', 'triggers', { name: 'routes', kind: 'github', request: 'Look at {{event}}' });
    expect(created.status).toBe(201);
    triggerId = (created.body as { id: string }).id;
  });

  /** The path with each parameter filled: an id nobody has (or the user's trigger), the first audit event, a file name. */
  const target = (route: Route) =>
    route.path.replace(/\{(\w+)\}/g, (_all, name: string) => {
      if (name === 'id' && route.path.startsWith('/v1/triggers/')) return triggerId;
      return ({ seq: '1', decision: 'approve', option: '1', path: 'a.txt', rest: 'mcp' } as Record<string, string>)[name] ?? ZERO_UUID;
    });

  const send = async (route: Route, who: Who, body?: string) => {
    const res = await fetch(`${stack.base}${target(route)}`, {
      method: route.method,
      headers: {
        ...IDENTITIES[who],
        Accept: 'application/json, text/event-stream',
        ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
      },
      body,
    });
    const text = await res.text();
    return { status: res.status, missingRoute: res.status === 404 && /Cannot (GET|POST|PATCH|DELETE) \//.test(text) };
  };

  /** What the table says a request gets: served (a 2xx, 3xx or a 4xx of the route's own), refused 401/403, or no route at all. */
  const stated = (route: Route, who: Who): Verdict => {
    if (route.only) return 'no route';
    switch (route.access) {
      case 'public':
      case 'discovery':
        return 'served';
      case 'signature':
        return 401;
      case 'caller':
      case 'own-view':
        return who === 'anonymous' ? 401 : 'served';
      case 'admin':
        return who === 'anonymous' ? 401 : who === 'user' ? 403 : 'served';
    }
  };

  const got = ({ status, missingRoute }: { status: number; missingRoute: boolean }): Verdict | `status ${number}` =>
    missingRoute ? 'no route' : status === 401 || status === 403 ? status : status < 500 ? 'served' : `status ${status}`;

  it('admits every route as the table states, to nobody, a user and an admin, with minimal input', async () => {
    const differing: string[] = [];
    for (const route of ROUTES)
      for (const who of Object.keys(IDENTITIES) as Who[]) {
        const reply = await send(route, who, route.body === 'none' ? undefined : '{}');
        const [expected, actual] = [stated(route, who), got(reply)];
        if (expected !== actual) differing.push(`${routeKey(route)} as ${who}: the table says ${expected}, got ${actual} (${reply.status})`);
      }
    expect(differing).toEqual([]);
  }, 120_000);

  it('reads a body up to the limit the table names and refuses one byte more with 413, on every route that reads one', async () => {
    const readers = ROUTES.filter((route) => route.body !== 'none');
    expect(readers.map((route) => route.body).sort()).toEqual(['a2a', 'admin-json', 'admin-json', 'admin-json', 'admin-json', 'chat', 'chat', 'mcp-http', 'trigger']);
    // `{"pad":"…"}`: exactly `bytes` bytes of JSON, which no route takes as valid input (so nothing is stored).
    const padded = (bytes: number) => JSON.stringify({ pad: 'x'.repeat(bytes - 10) });
    const statuses = [];
    for (const route of readers) {
      const limit = BODY_BYTES[route.body as keyof typeof BODY_BYTES];
      const who = route.access === 'signature' ? 'anonymous' : 'admin';
      const [atLimit, past] = [await send(route, who, padded(limit)), await send(route, who, padded(limit + 1))];
      statuses.push([routeKey(route), atLimit.status !== 413 && atLimit.status < 500 ? 'read' : atLimit.status, past.status]);
    }
    expect(statuses).toEqual(readers.map((route) => [routeKey(route), 'read', 413]));
  }, 120_000);
});
