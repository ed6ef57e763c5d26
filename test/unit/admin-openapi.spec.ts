import { describe, expect, it } from '@jest/globals';
import { committedDocument, ResponseSchemas } from '../support/openapi-responses.js';

/**
 * docs/openapi.json (identity-admin.e2e keeps it equal to what the service serves) describes what every
 * admin route answers, so that the console and integrators read documented fields, not guessed ones.
 */
const document = committedDocument();
const adminOperations = Object.entries(document.paths)
  .filter(([path]) => path.startsWith('/admin/'))
  .flatMap(([path, methods]) => Object.entries(methods).map(([method, operation]) => ({ method, path, route: `${method.toUpperCase()} ${path}`, operation })));

describe('the OpenAPI document of the admin API', () => {
  it('lists the admin routes', () => {
    expect(adminOperations.length).toBeGreaterThanOrEqual(23);
  });

  it('gives every admin route a 2xx response with a schema for each type it produces', () => {
    const missing = adminOperations.flatMap(({ route, operation }) => {
      const ok = Object.entries(operation.responses).filter(([status]) => /^2\d\d$/.test(status));
      if (ok.length === 0) return [`${route}: no 2xx response`];
      return ok.flatMap(([status, response]) => {
        const content = Object.entries(response.content ?? {});
        if (content.length === 0) return [`${route} ${status}: no content`];
        return content.filter(([, media]) => media.schema === undefined).map(([type]) => `${route} ${status} ${type}: no schema`);
      });
    });
    expect(missing).toEqual([]);
  });

  it('documents JSON answers as named components, with the refusals of the guard', () => {
    const schemas = new ResponseSchemas(document);
    for (const { method, path, route, operation } of adminOperations) {
      for (const [status, response] of Object.entries(operation.responses)) {
        const json = response.content?.['application/json']?.schema;
        if (!json) continue;
        expect([route, status, json.$ref]).toEqual([route, status, expect.stringMatching(/^#\/components\/schemas\/\w+Dto$/)]);
        // It compiles (each reference in it resolves), and an empty body does not pass for it.
        expect([route, status, schemas.problems(method, path, Number(status), undefined).length > 0]).toEqual([route, status, true]);
      }
      expect([route, Object.keys(operation.responses)]).toEqual([route, expect.arrayContaining(['401', '403'])]);
    }
  });
});

describe('the response check', () => {
  const schemas = new ResponseSchemas(document);
  const me = { user: 'alice@example.com', groups: ['dev'], admin: false, auth_mode: 'proxy_headers' };

  it('passes a body with exactly the documented fields', () => {
    expect(schemas.problems('GET', '/admin/me', 200, me)).toEqual([]);
    expect(schemas.problems('GET', '/admin/sessions/{id}/approval', 200, { session_id: '00000000-0000-4000-8000-000000000000', pending: null })).toEqual([]);
  });

  it('fails a missing required field, an undocumented one, a wrong type, a null where none is allowed, a value outside the enum', () => {
    const { admin: _admin, ...withoutAdmin } = me;
    const problems = (body: unknown) => schemas.problems('GET', '/admin/me', 200, body).join('\n');
    expect(problems(withoutAdmin)).toMatch(/must have required property 'admin'/);
    expect(problems({ ...me, token: 'x' })).toMatch(/must NOT have additional properties.*token/);
    expect(problems({ ...me, groups: 'dev' })).toMatch(/\/groups must be array/);
    expect(problems({ ...me, user: null })).toMatch(/\/user must be string/);
    expect(problems({ ...me, auth_mode: 'basic' })).toMatch(/\/auth_mode must be equal to one of the allowed values/);
    const approval = schemas.problems('GET', '/admin/sessions/{id}/approval', 200, { session_id: 'not-a-uuid', pending: {} }).join('\n');
    expect(approval).toMatch(/\/session_id must match format "uuid"/);
    expect(approval).toMatch(/\/pending must have required property 'approval_id'/);
  });

  it('says when a route or status has no JSON schema', () => {
    expect(schemas.problems('GET', '/admin/nowhere', 200, {})).toEqual(['GET /admin/nowhere 200: no application/json schema in the document']);
    expect(schemas.problems('GET', '/admin/metrics', 200, '')).toEqual(['GET /admin/metrics 200: no application/json schema in the document']);
  });
});
