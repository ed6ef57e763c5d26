import { describe, expect, it } from '@jest/globals';
import { EventEmitter } from 'node:events';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { PassThrough } from 'node:stream';
import type { AuditRecord, AuditService } from '../../src/audit/audit.service.js';
import { RequestLimits } from '../../src/config/request-limits.js';
import { BodyBudget } from '../../src/http/body-budget.js';
import { RequestAdmission, type BodyProblem, type SurfaceErrors } from '../../src/http/request-admission.js';
import { SurfaceIdentity } from '../../src/http/surface-identity.js';
import type { Caller, Identified } from '../../src/identity/caller.js';
import type { IdentityService } from '../../src/identity/identity.service.js';

const MiB = 1024 * 1024;
const ALICE: Caller = { user: 'alice', groups: [], admin: false, transport: 'http', address: '127.0.0.1', client: null };

/** What a response was answered with: the admission step writes refusals with writeHead, write and end. */
class RecordedResponse extends EventEmitter {
  status: number | null = null;
  headers: Record<string, unknown> = {};
  text = '';
  ended = false;

  writeHead(status: number, headers: Record<string, unknown>) {
    this.status = status;
    this.headers = headers;
    return this;
  }

  write(chunk: string) {
    this.text += chunk;
    return true;
  }

  end(chunk?: string) {
    if (chunk) this.text += chunk;
    this.ended = true;
    return this;
  }

  get json(): unknown {
    return JSON.parse(this.text);
  }
}

/** A POST whose body arrives on the next turn (`body` null: it never does), so that a reader has listened by then. */
function request(body: string | null, headers: Record<string, string> = {}): PassThrough & IncomingMessage {
  const stream = new PassThrough();
  Object.assign(stream, {
    method: 'POST',
    url: '/surface',
    headers: { 'content-length': String(Buffer.byteLength(body ?? '')), ...headers },
    socket: { remoteAddress: '127.0.0.1' },
  });
  if (body !== null) setImmediate(() => stream.end(body));
  return stream as PassThrough & IncomingMessage;
}

/** A surface whose refusals say what they were asked, so each test sees what the step handed over. */
const TEST_ERRORS: SurfaceErrors = {
  transport: 'chat',
  bodyRejected: 'test.request_rejected',
  unadmitted: (refusal) => ({ unadmitted: refusal.message }),
  busy: () => ({ busy: true }),
  badBody: (problem: BodyProblem, maxBytes: number) => ({
    status: problem.kind === 'too_large' ? 413 : 400,
    body: { refused: problem.kind, maxBytes },
    detail: { reason: problem.kind, ...(problem.kind === 'invalid' && { why: problem.reason }) },
  }),
};

function setUp({
  identified = { caller: ALICE },
  budgetBytes = 4 * MiB,
  limits = new RequestLimits(0, 3 * MiB),
}: { identified?: Identified; budgetBytes?: number; limits?: RequestLimits } = {}) {
  const audited: AuditRecord[] = [];
  const audit = { record: async (record: AuditRecord) => void audited.push(record) } as unknown as AuditService;
  const identity = { forHttp: async () => identified } as unknown as IdentityService;
  const budget = new BodyBudget(budgetBytes);
  const admission = new RequestAdmission(new SurfaceIdentity(identity, audit), budget, audit, limits);
  const res = new RecordedResponse();
  const serve = (req: IncomingMessage, errors: SurfaceErrors = TEST_ERRORS) => admission.request(req, res as unknown as ServerResponse, errors, '/surface');
  /** Whether all of the budget is free: a lease of all of it fits, and is given back at once. */
  const budgetFree = () => {
    const probe = budget.lease();
    const fits = probe.take(budgetBytes);
    probe.release();
    return fits;
  };
  return { audited, admission, res, serve, budgetFree };
}

describe('RequestAdmission (the one admission step of /mcp, the Chat API and A2A)', () => {
  it('admits: the caller on its surface, the parsed body, and its lease, which holds the bytes until the response closes', async () => {
    const { audited, res, serve, budgetFree } = setUp();
    const admitted = await serve(request('{"messages":[]}'));
    expect(admitted).toMatchObject({ caller: { ...ALICE, transport: 'chat' }, body: { messages: [] } });
    expect(res.status).toBeNull();
    expect(audited).toEqual([]);
    expect(budgetFree()).toBe(false);
    res.emit('close');
    expect(budgetFree()).toBe(true);
  });

  it("refuses a caller from the headers with the identity's status and headers, in the surface's shape, audited once, before the body is read", async () => {
    const identified: Identified = { refusal: { reason: 'missing bearer token', action: 'auth.fail', address: '10.0.0.9', headers: { 'WWW-Authenticate': 'Bearer' } } };
    const { audited, res, serve, budgetFree } = setUp({ identified });
    const req = request('{"messages":[]}');
    expect(await serve(req)).toBeNull();
    expect(res.status).toBe(401);
    expect(res.headers).toMatchObject({ 'WWW-Authenticate': 'Bearer', Connection: 'close' });
    expect(res.json).toEqual({ unadmitted: 'Unauthorized: missing bearer token' });
    expect(audited).toEqual([
      {
        caller: expect.objectContaining({ user: 'anonymous', address: '10.0.0.9', transport: 'chat' }),
        action: 'auth.fail',
        outcome: 'rejected',
        detail: { reason: 'missing bearer token', path: '/surface' },
      },
    ]);
    expect(budgetFree()).toBe(true);
    // The body still to come is drained, and only then does the response end (closing earlier would reset a client still sending).
    expect(res.ended).toBe(false);
    await new Promise((resolve) => req.once('end', resolve));
    expect(res.ended).toBe(true);
    // A route that reads no body gets the same refusal, and null.
    const second = setUp({ identified });
    expect(await second.admission.caller(request(null), second.res as unknown as ServerResponse, TEST_ERRORS, '/surface')).toBeNull();
    expect(second.res.status).toBe(401);
    expect(second.res.json).toEqual({ unadmitted: 'Unauthorized: missing bearer token' });
  });

  it('answers the caller of a route that reads no body, leaving the body unread and writing nothing', async () => {
    const { admission, res, audited } = setUp();
    expect(await admission.caller(request(null), res as unknown as ServerResponse, TEST_ERRORS, '/surface')).toEqual({ ...ALICE, transport: 'chat' });
    expect(res.status).toBeNull();
    expect(audited).toEqual([]);
  });

  it('answers 503 with Retry-After when the body would not fit in what all bodies together may hold, and does not audit overload', async () => {
    const { audited, res, serve } = setUp({ budgetBytes: 10 });
    expect(await serve(request('{"messages":["more than ten bytes"]}'))).toBeNull();
    expect(res.status).toBe(503);
    expect(res.headers).toMatchObject({ 'Retry-After': '1', Connection: 'close' });
    expect(res.json).toEqual({ busy: true });
    expect(audited).toEqual([]);
  });

  it("refuses a body too large, not JSON, nested too deep, or empty, in the surface's shape, with the surface's audit event", async () => {
    const cases: [IncomingMessage, number, BodyProblem['kind']][] = [
      [request('{}', { 'content-length': String(5 * MiB + 1) }), 413, 'too_large'],
      [request('{"messages":'), 400, 'invalid'],
      [request(`{"a":${'['.repeat(80)}${']'.repeat(80)}}`), 400, 'too_deep'],
      [request(''), 400, 'none'],
    ];
    for (const [req, status, kind] of cases) {
      const { audited, res, serve, budgetFree } = setUp();
      expect(await serve(req)).toBeNull();
      expect(res.status).toBe(status);
      expect(res.headers).toMatchObject({ Connection: 'close' });
      // The limit of the Chat API and A2A holds the files too: 3 MiB of them as Base64, plus 1 MiB.
      expect(res.json).toEqual({ refused: kind, maxBytes: 5 * MiB });
      expect(audited).toEqual([
        {
          caller: { ...ALICE, transport: 'chat' },
          action: 'test.request_rejected',
          outcome: 'rejected',
          detail: { reason: kind, ...(kind === 'invalid' && { why: 'the body is not valid JSON' }) },
        },
      ]);
      res.emit('close');
      expect(budgetFree()).toBe(true);
    }
  });

  it('serves an empty body as none where the surface says so (MCP, whose SDK answers it)', async () => {
    const { audited, res, serve } = setUp();
    const admitted = await serve(request(''), { ...TEST_ERRORS, badBody: (problem) => (problem.kind === 'none' ? null : TEST_ERRORS.badBody(problem, 0)) });
    expect(admitted).toMatchObject({ caller: { user: 'alice' }, body: undefined });
    expect(res.status).toBeNull();
    expect(audited).toEqual([]);
  });

  it("reads /mcp's body with /mcp's limit, which holds no files, and the Chat API's with its files", async () => {
    // About 2 MiB: above /mcp's 1 MiB (no images configured, no files: the rest of a request), within the Chat API's 5 MiB.
    const body = JSON.stringify({ text: 'x'.repeat(2 * MiB) });
    const mcp = setUp();
    expect(await mcp.serve(request(body), { ...TEST_ERRORS, transport: 'mcp-http' })).toBeNull();
    expect(mcp.res.json).toEqual({ refused: 'too_large', maxBytes: MiB });
    const chat = setUp();
    expect(await chat.serve(request(body))).toMatchObject({ body: { text: expect.any(String) } });
    expect(chat.res.status).toBeNull();
  });

  it('answers nothing and audits nothing for a client that leaves mid-body, and gives its share back', async () => {
    const { audited, res, serve, budgetFree } = setUp();
    const req = request(null, { 'content-length': '100' });
    const admitted = serve(req);
    setImmediate(() => (req.write('{"messages'), req.destroy()));
    expect(await admitted).toBeNull();
    expect(res.status).toBeNull();
    expect(audited).toEqual([]);
    res.emit('close');
    expect(budgetFree()).toBe(true);
  });
});

describe('RequestLimits (every body limit, computed in one place)', () => {
  it('gives /mcp and a stdio line room for the images as Base64, the Chat API and A2A for the files too, and the boot check the largest', () => {
    const limits = new RequestLimits(3 * MiB, 6 * MiB);
    expect([limits.bodyBytes('mcp-http'), limits.bodyBytes('stdio')]).toEqual([5 * MiB, 5 * MiB]);
    expect([limits.bodyBytes('chat'), limits.bodyBytes('a2a'), limits.largest]).toEqual([13 * MiB, 13 * MiB, 13 * MiB]);
    // Base64 rounds up to whole 4-character groups.
    expect(new RequestLimits(1, 0).bodyBytes('mcp-http')).toBe(4 + MiB);
  });
});
