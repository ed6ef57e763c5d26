import { Injectable, type CallHandler, type ExecutionContext, type NestInterceptor } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { catchError, concatMap, from, map, type Observable } from 'rxjs';
import { AuditService } from '../audit/audit.service.js';
import { ADMIN_ACTION, AUDIT_OMITS, type AdminRequest } from './admin-auth.guard.js';

/** The header the console sets on a view's automatic refresh. */
export const CONSOLE_REFRESH = 'x-console-refresh';

/**
 * Audits every admin call after the guard let it through: who read or changed what, with which
 * outcome. Reading the audit log is itself audited. The response waits for the event (fail-closed).
 */
@Injectable()
export class AdminAuditInterceptor implements NestInterceptor {
  constructor(
    private readonly audit: AuditService,
    private readonly reflector: Reflector,
  ) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const req = context.switchToHttp().getRequest<AdminRequest>();
    // The console's own periodic re-reads (every 3 s per open view) are not something a person did:
    // the view's first read is audited, its refreshes are not. Only reads: a change is always audited.
    if (req.method === 'GET' && req.headers[CONSOLE_REFRESH] === '1') return next.handle();
    const action = this.reflector.get<string>(ADMIN_ACTION, context.getHandler()) ?? 'admin.request';
    const omits = this.reflector.get<string[]>(AUDIT_OMITS, context.getHandler()) ?? [];
    const query = Object.fromEntries(Object.entries(req.query).map(([key, value]) => [key, omits.includes(key) ? '[left out: see its own event]' : value]));
    const detail = { method: req.method, path: req.path, query, params: req.params };
    const taskId = typeof req.params.id === 'string' && action.startsWith('admin.task') ? req.params.id : null;
    const record = (outcome: 'ok' | 'error', reason?: string) =>
      this.audit.record({ caller: req.caller!, action, outcome, taskId, detail: reason ? { ...detail, reason } : detail });
    return next.handle().pipe(
      concatMap((value: unknown) => from(record('ok')).pipe(map(() => value))),
      catchError((error: Error) => from(record('error', error.message)).pipe(concatMap(() => Promise.reject(error)))),
    );
  }
}
