import { Module, type DynamicModule } from '@nestjs/common';
import { AuditModule } from '../../audit/audit.module.js';
import type { AgentConfig } from '../../config/agent-config.js';
import { StartupError } from '../../startup/startup-error.js';
import { BearerAdmission } from './bearer-admission.js';
import { ConsoleSignInController } from './console-sign-in.controller.js';
import { IssuerMetadata, reasonOf } from './issuer-metadata.js';
import { ProtectedResourceController } from './protected-resource.controller.js';

/**
 * `auth.mode: oauth` on the HTTP service: the issuer's metadata (fetched before the service listens;
 * an issuer that cannot be read stops the start-up), bearer admission for IdentityService, the
 * protected resource metadata and the console's sign-in. Empty in the other modes.
 */
@Module({})
export class OAuthModule {
  static forRoot(config: AgentConfig): DynamicModule {
    if (config.auth.mode !== 'oauth') return { module: OAuthModule };
    const settings = config.auth.oauth;
    return {
      module: OAuthModule,
      global: true,
      imports: [AuditModule],
      controllers: [ProtectedResourceController, ConsoleSignInController],
      providers: [
        {
          provide: IssuerMetadata,
          useFactory: () =>
            IssuerMetadata.discover(settings).catch((error: unknown) => {
              throw new StartupError(`auth.oauth.issuer: ${reasonOf(error)}`);
            }),
        },
        { provide: BearerAdmission, useFactory: (metadata: IssuerMetadata) => new BearerAdmission(settings, metadata), inject: [IssuerMetadata] },
      ],
      exports: [IssuerMetadata, BearerAdmission],
    };
  }
}
