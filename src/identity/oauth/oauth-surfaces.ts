import type { Transport } from '../caller.js';
import type { OAuthSettings } from './issuer-metadata.js';

/** The HTTP surfaces a bearer token is presented on; `http` is the admin REST API. */
export type Surface = Extract<Transport, 'mcp-http' | 'chat' | 'a2a' | 'http'>;

/** The scope each surface requires (`auth.oauth.scopes`, renamable for issuers with their own naming rules). */
export function scopeOf(surface: Surface, scopes: OAuthSettings['scopes']): string {
  switch (surface) {
    case 'mcp-http':
      return scopes.mcp;
    case 'chat':
      return scopes.chat;
    case 'a2a':
      return scopes.a2a;
    case 'http':
      return scopes.admin;
  }
}

/** Every scope this service understands, as the protected resource metadata lists them. */
export const scopesSupported = (scopes: OAuthSettings['scopes']) => [...new Set([scopes.mcp, scopes.chat, scopes.a2a, scopes.admin])];
