import { Injectable, SetMetadata, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { HttpException, HttpStatus } from '@nestjs/common';
import type { Request, Response } from 'express';
import { AuditService } from '../audit/audit.service.js';
import { anonymous, type Caller } from '../identity/caller.js';
import { IdentityService } from '../identity/identity.service.js';

export const ADMIN_ACTION = 'admin:action';
/** The audit action an admin route records (`admin.audit_read`, `admin.task_cancel`...). */
export const AdminAction = (action: string) => SetMetadata(ADMIN_ACTION, action);

export type AdminRequest = Request & { caller?: Caller };

const ERRORS = { 401: 'unauthorized', 403: 'forbidden', 503: 'unavailable' } as const;

/**
 * Every /admin route: the caller must be identified (401) and an admin (403): a group in
 * `auth.admin_groups`, or with `auth.mode: none` the configured admin token. Refusals are audited.
 */
@Injectable()
export class AdminAuthGuard implements CanActivate {
  constructor(
    private readonly identity: IdentityService,
    private readonly audit: AuditService,
    private readonly reflector: Reflector,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const req = context.switchToHttp().getRequest<AdminRequest>();
    const action = this.reflector.get<string>(ADMIN_ACTION, context.getHandler()) ?? 'admin.request';
    const identified = await this.identity.forHttp(req);
    if ('refusal' in identified) {
      const { reason, address, action: authAction, status = 401, headers = {}, caller, token } = identified.refusal;
      await this.audit.record({ caller: caller ?? anonymous(address), action: authAction, outcome: 'rejected', detail: { reason, path: req.path, ...(token && { token }) } });
      // The WWW-Authenticate challenge of auth.mode oauth.
      context.switchToHttp().getResponse<Response>().set(headers);
      throw new HttpException({ error: ERRORS[status], message: reason }, status);
    }
    const caller = identified.caller;
    if (!caller.admin) {
      await this.audit.record({ caller, action, outcome: 'rejected', detail: { reason: 'not an admin', path: req.path } });
      throw new HttpException({ error: 'forbidden', message: 'admin rights are required' }, HttpStatus.FORBIDDEN);
    }
    req.caller = caller;
    return true;
  }
}
