import { Module, type DynamicModule } from '@nestjs/common';
import { Clock } from '../../common/clock.js';
import type { AgentConfig } from '../../config/agent-config.js';
import { StartupError } from '../../startup/startup-error.js';
import { AccessTokenVerifier } from './access-token-verifier.js';
import { BearerAdmission } from './bearer-admission.js';
import { IssuerMetadata, reasonOf } from './issuer-metadata.js';
import { ProtectedResourceController } from './protected-resource.controller.js';

/**
 * `auth.mode: oauth` on the HTTP service: the issuer's metadata (fetched before the service listens;
 * an issuer that cannot be read stops the start-up), bearer admission for IdentityService, the
 * protected resource metadata (the console's sign-in is the admin module's). Empty in the other modes.
 */
@Module({})
export class OAuthModule {
  static forRoot(config: AgentConfig): DynamicModule {
    if (config.auth.mode !== 'oauth') return { module: OAuthModule };
    const settings = config.auth.oauth;
    return {
      module: OAuthModule,
      global: true,
      controllers: [ProtectedResourceController],
      providers: [
        {
          provide: IssuerMetadata,
          useFactory: () =>
            IssuerMetadata.discover(settings).catch((error: unknown) => {
              throw new StartupError(`auth.oauth.issuer: ${reasonOf(error)}`);
            }),
        },
        {
          provide: BearerAdmission,
          useFactory: (metadata: IssuerMetadata, clock: Clock) => new BearerAdmission(settings, metadata, new AccessTokenVerifier(settings, metadata, undefined, clock)),
          inject: [IssuerMetadata, Clock],
        },
      ],
      exports: [IssuerMetadata, BearerAdmission],
    };
  }
}
