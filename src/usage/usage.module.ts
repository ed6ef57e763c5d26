import { Module } from '@nestjs/common';
import { AgentModule } from '../agent/agent.module.js';
import { DailyTokenQuota } from './daily-token-quota.js';
import { UsageRepository } from './usage.repository.js';
import { UsageService } from './usage.service.js';

/** Usage per user and day, and the token quota: at accept, and on a running Task as one of its RunLimits (issue 39). */
@Module({
  imports: [AgentModule],
  providers: [UsageRepository, UsageService, DailyTokenQuota],
  exports: [UsageService],
})
export class UsageModule {}
