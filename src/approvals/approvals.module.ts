import { Module } from '@nestjs/common';
import { AuditModule } from '../audit/audit.module.js';
import { ApprovalsRepository } from './approvals.repository.js';
import { ApprovalsService } from './approvals.service.js';

/** Approvals: a person decides before the agent runs a command or changes a file. */
@Module({
  imports: [AuditModule],
  providers: [ApprovalsRepository, ApprovalsService],
  exports: [ApprovalsService],
})
export class ApprovalsModule {}
