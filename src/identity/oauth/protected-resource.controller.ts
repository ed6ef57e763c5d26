import { Controller, Get, Header, NotFoundException, Req } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { buildOAuthProtectedResourceMetadata, type OAuthMetadata, type OAuthProtectedResourceMetadata } from '@modelcontextprotocol/server';
import type { Request } from 'express';
import { SERVER_INFO } from '../../common/server-info.js';
import { AppConfig } from '../../config/app-config.js';
import { insecureAllowed, IssuerMetadata } from './issuer-metadata.js';
import { scopesSupported } from './oauth-surfaces.js';

const WELL_KNOWN = '/.well-known/oauth-protected-resource';

/**
 * RFC 9728 protected resource metadata, where an MCP client looks after a 401: at the root form, the
 * path form for /mcp (what clients derive from the endpoint's URL), and the path form of the
 * configured resource when it has a path (a service behind a proxy's prefix). Public, like any
 * discovery document; the same one at each place, naming one resource for every surface.
 */
@ApiExcludeController()
@Controller()
export class ProtectedResourceController {
  private readonly document: OAuthProtectedResourceMetadata & { bearer_methods_supported: string[] };
  private readonly paths: Set<string>;

  constructor(config: AppConfig, metadata: IssuerMetadata) {
    const settings = config.auth.oauth;
    const built = buildOAuthProtectedResourceMetadata({
      oauthMetadata: metadata.server as OAuthMetadata,
      resourceServerUrl: new URL(settings.resource),
      scopesSupported: scopesSupported(settings.scopes),
      resourceName: SERVER_INFO.name,
      dangerouslyAllowInsecureIssuerUrl: insecureAllowed(settings.issuer),
    });
    // The resource exactly as configured (the SDK writes URL.href, which adds a slash to a bare origin): clients
    // send it back verbatim as the RFC 8707 resource, and tokens name it as their audience.
    this.document = { ...built, resource: settings.resource, bearer_methods_supported: ['header'] };
    const own = new URL(settings.resource).pathname.replace(/\/$/, '');
    this.paths = new Set([WELL_KNOWN, `${WELL_KNOWN}/mcp`, `${WELL_KNOWN}${own}`, `${WELL_KNOWN}${own}/mcp`]);
  }

  @Get(['.well-known/oauth-protected-resource', '.well-known/oauth-protected-resource/*rest'])
  @Header('Access-Control-Allow-Origin', '*')
  @Header('Cache-Control', 'max-age=300')
  metadata(@Req() req: Request) {
    if (!this.paths.has(req.path.replace(/\/$/, ''))) throw new NotFoundException();
    return this.document;
  }
}
