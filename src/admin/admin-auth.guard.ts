import { applyDecorators, Injectable, SetMetadata, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { ApiExtension } from '@nestjs/swagger';
import { Reflector } from '@nestjs/core';
import { HttpException, HttpStatus } from '@nestjs/common';
import type { Request, Response } from 'express';
import { AuditService } from '../audit/audit.service.js';
import { AppConfig } from '../config/app-config.js';
import { anonymous, type Caller } from '../identity/caller.js';
import { IdentityService } from '../identity/identity.service.js';

export const ADMIN_ACTION = 'admin:action';
/** The audit action an admin route records (`admin.audit_read`, `admin.task_cancel`...). */
export const AdminAction = (action: string) => SetMetadata(ADMIN_ACTION, action);

export const AUDIT_OMITS = 'admin:audit_omits';
/** Query parameters the admin audit event leaves out (a form's content: its own event keeps it, secret fields masked). */
export const AuditOmits = (...keys: string[]) => SetMetadata(AUDIT_OMITS, keys);

export const OWN_VIEW = 'admin:own_view';
/**
 * A console route any identified user may call (behind the SSO proxy): it shows (and acts on) only the
 * caller's own Tasks, sessions and approvals; admins see everyone's. Every other /admin route is for admins only.
 */
export const OwnView = () => applyDecorators(SetMetadata(OWN_VIEW, true), ApiExtension('x-own-view', true));

export type AdminRequest = Request & { caller?: Caller };

const ERRORS = { 401: 'unauthorized', 403: 'forbidden', 503: 'unavailable' } as const;

/**
 * Every /admin route: the caller must be identified (401) and, unless the route is an own view, an
 * admin (403): a group in `auth.admin_groups`, or with `auth.mode: none` the admin token. Refusals are audited.
 */
@Injectable()
export class AdminAuthGuard implements CanActivate {
  constructor(
    private readonly identity: IdentityService,
    private readonly audit: AuditService,
    private readonly reflector: Reflector,
    private readonly config: AppConfig,
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
    // With auth.mode none the one local user opens the console with the admin token (the sign-in URL of
    // the log): there, without it, every route is refused, own views included.
    const ownView = this.config.auth.mode !== 'none' && this.reflector.get<boolean>(OWN_VIEW, context.getHandler()) === true;
    if (!caller.admin && !ownView) {
      await this.audit.record({ caller, action, outcome: 'rejected', detail: { reason: 'not an admin', path: req.path } });
      throw new HttpException({ error: 'forbidden', message: this.notAdmin(req) }, HttpStatus.FORBIDDEN);
    }
    req.caller = caller;
    return true;
  }

  /** What to do about a 403, per mode: which token, where it is, and its rule; or which groups. */
  private notAdmin(req: Request): string {
    const { mode, adminGroups } = this.config.auth;
    if (mode !== 'none') {
      const groups = adminGroups.length > 0 ? `one of auth.admin_groups (${adminGroups.join(', ')})` : 'a group in auth.admin_groups, which is empty';
      return `admin rights are required: admins are members of ${groups}`;
    }
    const sent = /^Bearer ./.test(req.headers.authorization ?? '') ? 'the token sent is not the admin token' : 'no admin token was sent';
    return (
      `admin rights are required: ${sent}. Open the sign-in URL from the service's start-up log ("admin sign-in: open …/admin#token=…"), ` +
      'or use auth.admin_token (at least 24 characters; when it is not set, the first start keeps a token in admin-token beside the database)'
    );
  }
}
