import { Global, Module } from '@nestjs/common';
import { AppConfig } from '../config/app-config.js';
import { Metrics } from '../metrics/metrics.js';
import { BodyBudget } from './body-budget.js';

/** The one BodyBudget of the process, for every route that reads a body (/mcp, the Chat API). */
@Global()
@Module({
  providers: [
    {
      provide: BodyBudget,
      useFactory: (config: AppConfig, metrics: Metrics) => new BodyBudget(config.server.maxBufferedBytes, () => metrics.bodiesRefusedBusy.inc()),
      inject: [AppConfig, Metrics],
    },
  ],
  exports: [BodyBudget],
})
export class BodyBudgetModule {}
