/**
 * Every HTTP route of the service, read top to bottom (ADR 0042). Each row says who serves the
 * route, how a request reaches it and who is let in; the code that mounts routes reads it where it can
 * (`mountExpressRoutes`, `McpHttpEndpoint`), and tests keep the rest true: the Nest controllers' routes
 * and guards (route-table.spec), docs/openapi.json (the same spec), docs/architecture.md's table (the
 * same spec) and a request to every row (route-table.e2e). Every request passes `HttpEdge` first
 * (target, method, Host/Origin, cross-site admin writes): that gate is the same for all rows.
 */

/** How a request reaches the route's handler once HttpEdge let it through. */
export type Serving =
  /** node:http, off Express and Nest's router (ADR 0007): HttpEdge hands it to the `OffRouterEndpoint`. */
  | 'edge'
  /** Express middleware, mounted from this table by `mountExpressRoutes` (main.ts): A2A's SDK handlers, the JWKS, the OpenAPI document. */
  | 'express'
  /** A Nest controller's route: its guards, interceptors and pipes. */
  | 'nest';

/** Who is let in (beyond HttpEdge's checks, which every row has). */
export type Access =
  /** Anyone who reaches the port. */
  | 'public'
  /** Public, except with `auth.mode: oauth`, where a token is needed unless `auth.oauth.public_routes` names `publicRoute`. */
  | 'discovery'
  /** An identified caller (`RequestAdmission` / `SurfaceIdentity`, or `ChatAdmission`): 401 otherwise. */
  | 'caller'
  /** `AdminAuthGuard` with `@OwnView()`: any identified user, who sees only their own data (admins: everyone's); 401 otherwise. With `auth.mode: none`, admins only. */
  | 'own-view'
  /** `AdminAuthGuard`: admins only; 401 unidentified, 403 identified but not an admin. */
  | 'admin'
  /** No identity: the trigger's signature over the raw body is the proof (401 without it). */
  | 'signature';

/** The body a route reads, by whose limit: anything else reads none (Nest's body parser is off). */
export type BodyLimit =
  | 'none'
  /** `RequestLimits.bodyBytes(surface)`, read by `RequestAdmission` (or the console's conversation route, as Chat's). */
  | 'mcp-http'
  | 'chat'
  | 'a2a'
  /** `AdminJsonBody`: 64 KiB of JSON (schedules and triggers). */
  | 'admin-json'
  /** `triggers.max_body_bytes` (at most `mcp.files.max_bytes`), read as bytes before the signature check. */
  | 'trigger';

export interface Route {
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE';
  /** In docs/openapi.json's form: `{name}` for a parameter (`{path}` and `{rest}` take the rest of the path). */
  path: string;
  /** The top-level directory of src/ whose code answers it. */
  owner: string;
  serving: Serving;
  access: Access;
  body: BodyLimit;
  /** Where the route is described: the service's OpenAPI document, or another specification or page. */
  documented: 'openapi' | 'mcp' | 'a2a' | 'rfc7517' | 'rfc9728' | 'console';
  /** The configuration the route exists under; without it the path is not served (404). */
  only?: 'auth.mode oauth';
  /** Its name in `auth.oauth.public_routes`, for a route that list can open. */
  publicRoute?: 'agent_card' | 'models';
}

type Row = [Route['method'], string, string, Serving, Access, BodyLimit, Route['documented'], Pick<Route, 'only' | 'publicRoute'>?];

/** method, path, owner, serving, access, body, documented[, extra] */
const ROWS: Row[] = [
  // MCP (Streamable HTTP, stateless): the SDK answers GET and DELETE with 405, so POST is the route.
  ['POST', '/mcp', 'mcp', 'edge', 'caller', 'mcp-http', 'mcp'],
  // A2A 1.0: the Agent Card and JSON-RPC, through the SDK's Express handlers; the key push JWTs are signed with.
  ['GET', '/.well-known/agent-card.json', 'a2a', 'express', 'discovery', 'none', 'a2a', { publicRoute: 'agent_card' }],
  ['POST', '/a2a', 'a2a', 'express', 'caller', 'a2a', 'a2a'],
  ['GET', '/.well-known/jwks.json', 'push', 'express', 'public', 'none', 'rfc7517'],
  // OAuth protected resource metadata (RFC 9728), where an MCP client looks after a 401.
  ['GET', '/.well-known/oauth-protected-resource', 'identity', 'nest', 'public', 'none', 'rfc9728', { only: 'auth.mode oauth' }],
  ['GET', '/.well-known/oauth-protected-resource/{rest}', 'identity', 'nest', 'public', 'none', 'rfc9728', { only: 'auth.mode oauth' }],
  // Probes.
  ['GET', '/healthz', 'health', 'nest', 'public', 'none', 'openapi'],
  ['GET', '/readyz', 'health', 'nest', 'public', 'none', 'openapi'],
  // The OpenAI-compatible Chat API.
  ['GET', '/v1/models', 'chat', 'nest', 'caller', 'none', 'openapi', { publicRoute: 'models' }],
  ['POST', '/v1/chat/completions', 'chat', 'nest', 'caller', 'chat', 'openapi'],
  ['POST', '/v1/chat/completions/{session_id}/cancel', 'chat', 'nest', 'caller', 'none', 'openapi'],
  // Signed events from outside.
  ['POST', '/v1/triggers/{id}', 'triggers', 'nest', 'signature', 'trigger', 'openapi'],
  // The front page and the admin console's page and assets (the data comes from the guarded routes below).
  ['GET', '/', 'admin', 'nest', 'public', 'none', 'console'],
  ['GET', '/admin', 'admin', 'nest', 'public', 'none', 'console'],
  ['GET', '/admin/console.js', 'admin', 'nest', 'public', 'none', 'console'],
  ['GET', '/admin/console-views.js', 'admin', 'nest', 'public', 'none', 'console'],
  ['GET', '/admin/console-conversation.js', 'admin', 'nest', 'public', 'none', 'console'],
  ['GET', '/admin/console-automation.js', 'admin', 'nest', 'public', 'none', 'console'],
  ['GET', '/admin/console.css', 'admin', 'nest', 'public', 'none', 'console'],
  ['GET', '/admin/vendor/marked.js', 'admin', 'nest', 'public', 'none', 'console'],
  ['GET', '/admin/vendor/purify.js', 'admin', 'nest', 'public', 'none', 'console'],
  ['GET', '/admin/openapi.json', 'admin', 'express', 'public', 'none', 'console'],
  // The console's OIDC sign-in (404 unless auth.mode oauth with auth.oauth.console.client_id).
  ['GET', '/admin/oauth/login', 'admin', 'nest', 'public', 'none', 'console'],
  ['GET', '/admin/oauth/callback', 'admin', 'nest', 'public', 'none', 'console'],
  ['POST', '/admin/oauth/logout', 'admin', 'nest', 'public', 'none', 'console'],
  // The admin API: who is asking, and the service's state.
  ['GET', '/admin/me', 'admin', 'nest', 'own-view', 'none', 'openapi'],
  ['GET', '/admin/readyz', 'admin', 'nest', 'admin', 'none', 'openapi'],
  ['GET', '/admin/metrics', 'admin', 'nest', 'admin', 'none', 'openapi'],
  ['GET', '/admin/mcp-servers', 'admin', 'nest', 'admin', 'none', 'openapi'],
  ['GET', '/admin/eval-results', 'admin', 'nest', 'admin', 'none', 'openapi'],
  ['GET', '/admin/skills', 'admin', 'nest', 'own-view', 'none', 'openapi'],
  ['POST', '/admin/skills/reload', 'admin', 'nest', 'admin', 'none', 'openapi'],
  ['GET', '/admin/usage', 'admin', 'nest', 'own-view', 'none', 'openapi'],
  // The audit log.
  ['GET', '/admin/audit', 'admin', 'nest', 'admin', 'none', 'openapi'],
  ['GET', '/admin/audit/export', 'admin', 'nest', 'admin', 'none', 'openapi'],
  ['GET', '/admin/audit/verify', 'admin', 'nest', 'admin', 'none', 'openapi'],
  ['GET', '/admin/audit/{seq}', 'admin', 'nest', 'admin', 'none', 'openapi'],
  // Tasks and sessions.
  ['GET', '/admin/tasks', 'admin', 'nest', 'own-view', 'none', 'openapi'],
  ['GET', '/admin/tasks/{id}', 'admin', 'nest', 'own-view', 'none', 'openapi'],
  ['POST', '/admin/tasks/{id}/cancel', 'admin', 'nest', 'own-view', 'none', 'openapi'],
  ['POST', '/admin/tasks/{id}/steer', 'admin', 'nest', 'own-view', 'none', 'openapi'],
  ['GET', '/admin/tasks/{id}/diff', 'admin', 'nest', 'own-view', 'none', 'openapi'],
  ['GET', '/admin/tasks/{id}/stream', 'admin', 'nest', 'own-view', 'none', 'openapi'],
  ['GET', '/admin/sessions/{id}', 'admin', 'nest', 'own-view', 'none', 'openapi'],
  ['GET', '/admin/sessions/{id}/files', 'admin', 'nest', 'own-view', 'none', 'openapi'],
  ['GET', '/admin/sessions/{id}/files/{path}', 'admin', 'nest', 'own-view', 'none', 'openapi'],
  ['GET', '/admin/sessions/{id}/history', 'admin', 'nest', 'admin', 'none', 'openapi'],
  ['POST', '/admin/sessions/{id}/undo', 'admin', 'nest', 'own-view', 'none', 'openapi'],
  ['POST', '/admin/sessions/{id}/fork', 'admin', 'nest', 'own-view', 'none', 'openapi'],
  ['GET', '/admin/sessions/{id}/approval', 'admin', 'nest', 'admin', 'none', 'openapi'],
  // Approvals, questions and forms.
  ['GET', '/admin/approvals', 'admin', 'nest', 'own-view', 'none', 'openapi'],
  ['POST', '/admin/approvals/{id}/form', 'admin', 'nest', 'own-view', 'none', 'openapi'],
  ['POST', '/admin/approvals/{id}/{decision}', 'admin', 'nest', 'own-view', 'none', 'openapi'],
  ['POST', '/admin/approvals/{id}/choices/{option}', 'admin', 'nest', 'own-view', 'none', 'openapi'],
  // The console's conversation view: a request typed there is a Chat request.
  ['GET', '/admin/conversation/options', 'admin', 'nest', 'own-view', 'none', 'openapi'],
  ['POST', '/admin/conversation', 'admin', 'nest', 'own-view', 'chat', 'openapi'],
  // Schedules and triggers (issue 38).
  ['POST', '/admin/schedules', 'admin', 'nest', 'own-view', 'admin-json', 'openapi'],
  ['GET', '/admin/schedules', 'admin', 'nest', 'own-view', 'none', 'openapi'],
  ['GET', '/admin/schedules/{id}', 'admin', 'nest', 'own-view', 'none', 'openapi'],
  ['PATCH', '/admin/schedules/{id}', 'admin', 'nest', 'own-view', 'admin-json', 'openapi'],
  ['DELETE', '/admin/schedules/{id}', 'admin', 'nest', 'own-view', 'none', 'openapi'],
  ['POST', '/admin/schedules/{id}/run', 'admin', 'nest', 'own-view', 'none', 'openapi'],
  ['GET', '/admin/schedules/{id}/runs', 'admin', 'nest', 'own-view', 'none', 'openapi'],
  ['POST', '/admin/triggers', 'admin', 'nest', 'own-view', 'admin-json', 'openapi'],
  ['GET', '/admin/triggers', 'admin', 'nest', 'own-view', 'none', 'openapi'],
  ['GET', '/admin/triggers/{id}', 'admin', 'nest', 'own-view', 'none', 'openapi'],
  ['PATCH', '/admin/triggers/{id}', 'admin', 'nest', 'own-view', 'admin-json', 'openapi'],
  ['DELETE', '/admin/triggers/{id}', 'admin', 'nest', 'own-view', 'none', 'openapi'],
  ['GET', '/admin/triggers/{id}/runs', 'admin', 'nest', 'own-view', 'none', 'openapi'],
];

export const ROUTES: readonly Route[] = Object.freeze(
  ROWS.map(([method, path, owner, serving, access, body, documented, extra]) => Object.freeze({ method, path, owner, serving, access, body, documented, ...extra })),
);

/** `GET /a2a`: how a route is named in this table, the mounting code and the tests. */
export const routeKey = (route: { method: string; path: string }) => `${route.method} ${route.path}`;
