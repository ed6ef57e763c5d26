import { Module } from '@nestjs/common';
import { AuditWriter } from './audit-writer.js';
import { AuditService } from './audit.service.js';

@Module({ providers: [AuditWriter, AuditService], exports: [AuditService] })
export class AuditModule {}
