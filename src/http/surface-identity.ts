import { Injectable } from '@nestjs/common';
import type { IncomingMessage } from 'node:http';
import { AuditService } from '../audit/audit.service.js';
import { anonymous, onSurface, type Caller, type Transport } from '../identity/caller.js';
import { IdentityService } from '../identity/identity.service.js';

export type Admission = { caller: Caller } | { refusal: { status: 401 | 403 | 503; message: string; headers?: Record<string, string | string[]> } };

const STATUS_WORDS = { 401: 'Unauthorized', 403: 'Forbidden', 503: 'Service Unavailable' } as const;

/**
 * The caller of an /mcp, Chat API or A2A request, established from the headers (the HTTP edge has
 * already checked Host and Origin) before the body is read; a refusal is audited here, and written by
 * RequestAdmission in the surface's own shape.
 */
@Injectable()
export class SurfaceIdentity {
  constructor(
    private readonly identity: IdentityService,
    private readonly audit: AuditService,
  ) {}

  async admit(req: IncomingMessage, transport: Extract<Transport, 'mcp-http' | 'chat' | 'a2a'>, path: string): Promise<Admission> {
    const identified = await this.identity.forHttp(req, transport);
    if ('refusal' in identified) {
      const { address, action, reason, status = 401, headers, caller, token } = identified.refusal;
      await this.audit.record({ caller: caller ?? anonymous(address, transport), action, outcome: 'rejected', detail: { reason, path, ...(token && { token }) } });
      return { refusal: { status, message: `${STATUS_WORDS[status]}: ${reason}`, headers } };
    }
    return { caller: onSurface(identified.caller, transport) };
  }
}
