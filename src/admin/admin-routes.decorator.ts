import { applyDecorators, Controller, UseGuards, UseInterceptors } from '@nestjs/common';
import { ApiSecurity, ApiTags } from '@nestjs/swagger';
import { AdminAuditInterceptor } from './admin-audit.interceptor.js';
import { AdminAuthGuard } from './admin-auth.guard.js';

/**
 * An admin controller: its routes under `path`, admins only (AdminAuthGuard), listed in the OpenAPI
 * document under `tag` with the admin security scheme, and each call audited unless `audited` is false
 * (readiness and metrics, which scrapers poll and which change nothing).
 */
export function AdminRoutes(path: string, tag: string, { audited = true }: { audited?: boolean } = {}): ClassDecorator {
  const decorators = [ApiTags(tag), ApiSecurity('admin'), UseGuards(AdminAuthGuard)];
  if (audited) decorators.push(UseInterceptors(AdminAuditInterceptor));
  return applyDecorators(...decorators, Controller(path));
}
