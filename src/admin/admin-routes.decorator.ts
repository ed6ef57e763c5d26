import { applyDecorators, Controller, UseGuards, UseInterceptors } from '@nestjs/common';
import { ApiExtraModels, ApiResponse, ApiSecurity, ApiTags, getSchemaPath } from '@nestjs/swagger';
import { AdminAuditInterceptor } from './admin-audit.interceptor.js';
import { AdminAuthGuard } from './admin-auth.guard.js';
import { AdminErrorDto } from './admin-responses.dto.js';

/**
 * A refusal's response: JSON whatever the route produces when it succeeds (`@ApiProduces` would
 * otherwise give the error body the type of a download or an export).
 */
const refusal = ([status, description]: [number, string]) =>
  ApiResponse({ status, description, content: { 'application/json': { schema: { $ref: getSchemaPath(AdminErrorDto) } } } });

/**
 * An admin controller: its routes under `path`, admins only (AdminAuthGuard), listed in the OpenAPI
 * document under `tag` with the admin security scheme and the guard's two refusals, and each call
 * audited unless `audited` is false (readiness and metrics, which scrapers poll and which change nothing).
 */
export function AdminRoutes(path: string, tag: string, { audited = true }: { audited?: boolean } = {}): ClassDecorator {
  const decorators = [
    ApiTags(tag),
    ApiSecurity('admin'),
    ApiExtraModels(AdminErrorDto),
    refusal([401, 'Not identified (audited)']),
    refusal([403, 'Not an admin, on a route that is not an own view (audited)']),
    UseGuards(AdminAuthGuard),
  ];
  if (audited) decorators.push(UseInterceptors(AdminAuditInterceptor));
  return applyDecorators(...decorators, Controller(path));
}

/** A route's own refusals, `[status, when]` each, all with the admin API's error body. */
export const ApiAdminErrors = (...responses: [number, string][]) => applyDecorators(...responses.map(refusal));

/** A refusal of a path or query parameter (ValidationPipe): 400, nothing done. */
export const INVALID: [number, string] = [400, 'A parameter is invalid or unknown (each problem in `message`); nothing is done'];
