import { Module } from '@nestjs/common';
import { UsageRepository } from './usage.repository.js';
import { UsageService } from './usage.service.js';

/** Usage per user and day, and the token quota (issue 39). */
@Module({
  providers: [UsageRepository, UsageService],
  exports: [UsageService],
})
export class UsageModule {}
