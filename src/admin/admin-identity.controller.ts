import { Get, Req } from '@nestjs/common';
import { ApiOperation } from '@nestjs/swagger';
import { AppConfig } from '../config/app-config.js';
import { AdminAction, type AdminRequest } from './admin-auth.guard.js';
import { AdminRoutes } from './admin-routes.decorator.js';

/** Sign-in for the console: who the admin API sees. One audited event per sign-in, refused ones included. */
@AdminRoutes('admin', 'admin')
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
