import { Global, Module } from '@nestjs/common';
import { AuditModule } from '../audit/audit.module.js';
import { AppConfig } from '../config/app-config.js';
import { RequestLimits } from '../config/request-limits.js';
import { IdentityModule } from '../identity/identity.module.js';
import { Metrics } from '../metrics/metrics.js';
import { BodyBudget } from './body-budget.js';
import { RequestAdmission } from './request-admission.js';
import { SurfaceIdentity } from './surface-identity.js';

/**
 * What every HTTP surface that reads its own requests (/mcp, the Chat API, A2A) shares: the one
 * BodyBudget of the process, the body limits, and the admission step (caller, then body).
 */
@Global()
@Module({
  imports: [IdentityModule, AuditModule],
  providers: [
    {
      provide: BodyBudget,
      useFactory: (config: AppConfig, metrics: Metrics) => new BodyBudget(config.server.maxBufferedBytes, () => metrics.bodiesRefusedBusy.inc()),
      inject: [AppConfig, Metrics],
    },
    { provide: RequestLimits, useFactory: (config: AppConfig) => RequestLimits.of(config.mcp), inject: [AppConfig] },
    SurfaceIdentity,
    RequestAdmission,
  ],
  exports: [RequestLimits, RequestAdmission, BodyBudget],
})
export class HttpSurfacesModule {}
