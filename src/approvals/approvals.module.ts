import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AuditModule } from '../audit/audit.module.js';
import { ApprovalEntity } from './approval.entity.js';
import { ApprovalsRepository } from './approvals.repository.js';
import { ApprovalsService } from './approvals.service.js';

/** Approvals: a person decides before the agent runs a command or changes a file. */
@Module({
  imports: [TypeOrmModule.forFeature([ApprovalEntity]), AuditModule],
  providers: [ApprovalsRepository, ApprovalsService],
  exports: [ApprovalsService],
})
export class ApprovalsModule {}
