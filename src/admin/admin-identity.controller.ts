import { Get, Req } from '@nestjs/common';
import { ApiOkResponse, ApiOperation } from '@nestjs/swagger';
import { AppConfig } from '../config/app-config.js';
import { AdminAction, OwnView, type AdminRequest } from './admin-auth.guard.js';
import { MeDto } from './admin-responses.dto.js';
import { AdminRoutes } from './admin-routes.decorator.js';

/** Sign-in for the console: who the API sees, and whether they are an admin. One audited event per sign-in, refused ones included. */
@AdminRoutes('admin', 'admin')
export class AdminIdentityController {
  constructor(private readonly config: AppConfig) {}

  @Get('me')
  @OwnView()
  @AdminAction('admin.sign_in')
  @ApiOperation({ summary: 'The signed-in user (user, groups, admin) and the auth mode; 401 when not identified' })
  @ApiOkResponse({ type: MeDto })
  me(@Req() req: AdminRequest): MeDto {
    const { user, groups, admin } = req.caller!;
    return { user, groups, admin, auth_mode: this.config.auth.mode };
  }
}
