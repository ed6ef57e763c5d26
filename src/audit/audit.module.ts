import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AuditEventEntity } from './audit-event.entity.js';
import { AuditLogService } from './audit-log.service.js';
import { AuditRetention } from './audit-retention.js';
import { AuditWriter } from './audit-writer.js';
import { AuditService } from './audit.service.js';
import { AuditRepository } from './audit.repository.js';

@Module({
  imports: [TypeOrmModule.forFeature([AuditEventEntity])],
  providers: [AuditRepository, AuditWriter, AuditService, AuditLogService, AuditRetention],
  exports: [AuditService, AuditLogService, AuditRetention],
})
export class AuditModule {}
