import { Controller, Get, Req, UseGuards, UseInterceptors } from '@nestjs/common';
import { ApiOperation, ApiSecurity, ApiTags } from '@nestjs/swagger';
import { AppConfig } from '../config/app-config.js';
import { AdminAuditInterceptor } from './admin-audit.interceptor.js';
import { AdminAction, AdminAuthGuard, type AdminRequest } from './admin-auth.guard.js';

/** Sign-in for the console: who the admin API sees. One audited event per sign-in, refused ones included. */
@ApiTags('admin')
@ApiSecurity('admin')
@UseGuards(AdminAuthGuard)
@UseInterceptors(AdminAuditInterceptor)
@Controller('admin')
export class AdminIdentityController {
  constructor(private readonly config: AppConfig) {}

  @Get('me')
  @AdminAction('admin.sign_in')
  @ApiOperation({ summary: 'The signed-in admin (user, groups) and the auth mode; 401/403 when not an admin' })
  me(@Req() req: AdminRequest) {
    const { user, groups } = req.caller!;
    return { user, groups, auth_mode: this.config.auth.mode };
  }
}
