import { Injectable } from '@nestjs/common';
import type { IncomingMessage } from 'node:http';
import { AuditService } from '../audit/audit.service.js';
import { anonymous, onSurface, type Caller, type Transport } from '../identity/caller.js';
import { IdentityService } from '../identity/identity.service.js';

export type Admission = { caller: Caller } | { refusal: { status: 401; message: string } };

/**
 * The caller of an /mcp, Chat API or A2A request, established from the headers (the HTTP edge has
 * already checked Host and Origin) before the body is read; a refusal is audited, and each surface
 * writes it in its own shape.
 */
@Injectable()
export class SurfaceIdentity {
  constructor(
    private readonly identity: IdentityService,
    private readonly audit: AuditService,
  ) {}

  async admit(req: IncomingMessage, transport: Extract<Transport, 'mcp-http' | 'chat' | 'a2a'>, path: string): Promise<Admission> {
    const identified = await this.identity.forHttp(req);
    if ('refusal' in identified) {
      const { address, action, reason } = identified.refusal;
      await this.audit.record({ caller: anonymous(address, transport), action, outcome: 'rejected', detail: { reason, path } });
      return { refusal: { status: 401, message: `Unauthorized: ${reason}` } };
    }
    return { caller: onSurface(identified.caller, transport) };
  }
}
