import { Injectable } from '@nestjs/common';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { AuditService } from '../audit/audit.service.js';
import { RequestLimits } from '../config/request-limits.js';
import type { Caller, Transport } from '../identity/caller.js';
import { BodyBudget, type BodyLease } from './body-budget.js';
import { readJsonBody, type BodyResult } from './json-body.js';
import { refuse } from './refusal.js';
import { SurfaceIdentity, type Admission } from './surface-identity.js';

/** The surfaces that read their own requests: /mcp, the Chat API, A2A. */
export type SurfaceTransport = Extract<Transport, 'mcp-http' | 'chat' | 'a2a'>;

/** A caller refused from the headers (already audited by SurfaceIdentity). */
export type CallerRefusal = Extract<Admission, { refusal: unknown }>['refusal'];

/** A body read whole that the surface may refuse: none at all, too large, not JSON (or not UTF-8), nested too deep. */
export type BodyProblem = Extract<BodyResult, { kind: 'none' | 'too_large' | 'invalid' | 'too_deep' }>;

/** How a surface answers a body it refuses, and what the audit event of the refusal says. */
export interface BodyRefusal {
  status: 400 | 413;
  body: unknown;
  detail: Record<string, unknown>;
}

/** How a surface's refusal of a caller looks: all a surface that reads no body supplies. */
export interface CallerErrors {
  readonly transport: SurfaceTransport;
  /** The body of the refusal; its status and headers (WWW-Authenticate) are the identity's. */
  unadmitted(refusal: CallerRefusal): unknown;
}

/** How a surface's refusals look, each in its protocol's error shape (JSON-RPC, OpenAI's). */
export interface SurfaceErrors extends CallerErrors {
  /** The audit action of a refused body (`mcp.request_rejected`...). */
  readonly bodyRejected: string;
  /** The body of a 503 when all bodies in flight would exceed server.max_buffered_bytes (overload, not audited). */
  busy(): unknown;
  /** The answer to a body the surface refuses; null serves an empty body as none (the MCP SDK answers that itself). */
  badBody(problem: BodyProblem, maxBytes: number): BodyRefusal | null;
}

/**
 * An admitted request: its caller, its parsed body (undefined for an empty one the surface serves), and
 * the body's share of server.max_buffered_bytes, given back when the response closes (or earlier, by a
 * surface that holds the connection open long after the body is read).
 */
export interface AdmittedRequest {
  caller: Caller;
  body: unknown;
  lease: BodyLease;
}

/**
 * The one admission step of /mcp, the Chat API and A2A, after the HTTP edge's checks: the caller from
 * the headers before a byte of the body is read, then the body under a BodyBudget lease and the
 * surface's size limit (RequestLimits). What it refuses it answers itself, in the surface's error shape
 * (`refuse`: Connection: close, the rest of the body drained), after auditing it (overload, a 503 busy,
 * is counted by BodyBudget instead); the surface gets null then, and has nothing left to write. A client
 * that leaves mid-body gets null too, and no answer.
 */
@Injectable()
export class RequestAdmission {
  constructor(
    private readonly identity: SurfaceIdentity,
    private readonly budget: BodyBudget,
    private readonly audit: AuditService,
    private readonly limits: RequestLimits,
  ) {}

  /** The caller of a request whose body the surface does not read; null when refused. `path` is what the audit records. */
  async caller(req: IncomingMessage, res: ServerResponse, errors: CallerErrors, path: string): Promise<Caller | null> {
    const admission = await this.identity.admit(req, errors.transport, path);
    if ('caller' in admission) return admission.caller;
    const { refusal } = admission;
    refuse(req, res, refusal.status, errors.unadmitted(refusal), refusal.headers);
    return null;
  }

  /** The caller and the JSON body; null when refused (answered and audited) or when the client left. */
  async request(req: IncomingMessage, res: ServerResponse, errors: SurfaceErrors, path: string): Promise<AdmittedRequest | null> {
    const caller = await this.caller(req, res, errors, path);
    if (!caller) return null;
    const maxBytes = this.limits.bodyBytes(errors.transport);
    // What the body holds counts against server.max_buffered_bytes until the answer is written.
    const lease = this.budget.lease();
    res.once('close', lease.release);
    const body = await readJsonBody(req, maxBytes, lease);
    if (body.kind === 'aborted') return null;
    if (body.kind === 'busy') return (refuse(req, res, 503, errors.busy(), { 'Retry-After': '1' }), null);
    if (body.kind === 'json') return { caller, body: body.value, lease };
    const refused = errors.badBody(body, maxBytes);
    if (!refused) return { caller, body: undefined, lease };
    await this.audit.record({ caller, action: errors.bodyRejected, outcome: 'rejected', detail: refused.detail });
    refuse(req, res, refused.status, refused.body);
    return null;
  }
}
