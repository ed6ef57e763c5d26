import { Get, Param, Query, Res } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiProduces } from '@nestjs/swagger';
import type { Response } from 'express';
import { AdminAction } from './admin-auth.guard.js';
import { AdminAuditService } from './admin-audit.service.js';
import { AuditExportQueryDto, AuditPageQueryDto, AuditVerifyQueryDto, SeqParamDto } from './admin.dto.js';
import { AuditEventDto, AuditPageDto, AuditVerificationDto } from './admin-responses.dto.js';
import { AdminRoutes, ApiAdminErrors, INVALID } from './admin-routes.decorator.js';
import { found } from './found.js';

@AdminRoutes('admin/audit', 'audit')
export class AdminAuditController {
  constructor(private readonly audit: AdminAuditService) {}

  @Get()
  @AdminAction('admin.audit_read')
  @ApiOperation({ summary: 'Search audit events (filters AND-ed), newest first, with an opaque cursor' })
  @ApiOkResponse({ type: AuditPageDto })
  @ApiAdminErrors(INVALID)
  async search(@Query() query: AuditPageQueryDto) {
    return this.audit.search(query);
  }

  @Get('export')
  @AdminAction('admin.audit_export')
  @ApiOperation({ summary: 'Stream matching events oldest first as JSON Lines or CSV' })
  @ApiProduces('application/x-ndjson', 'text/csv')
  @ApiOkResponse({ schema: { type: 'string' }, description: 'One event per line (the fields of GET /admin/audit/{seq}), or CSV with a header line; oldest first' })
  @ApiAdminErrors(INVALID)
  async export(@Query() query: AuditExportQueryDto, @Res({ passthrough: true }) res: Response): Promise<void> {
    res.setHeader('Content-Type', query.format === 'csv' ? 'text/csv; charset=utf-8' : 'application/x-ndjson; charset=utf-8');
    res.setHeader('Content-Disposition', `attachment; filename="audit.${query.format}"`);
    // Written as read, waiting whenever the client is slower: an export of the whole log never sits in memory.
    for await (const line of this.audit.exportLines(query)) if (!res.write(line)) await new Promise((resolve) => res.once('drain', resolve));
    res.end();
  }

  @Get('verify')
  @AdminAction('admin.audit_verify')
  @ApiOperation({
    summary: 'Verify the hash chain; reports the first broken sequence number',
    description: 'With the latest checkpoint from the service log, also detects events removed from the end of the chain.',
  })
  @ApiOkResponse({ type: AuditVerificationDto })
  @ApiAdminErrors(INVALID)
  async verify(@Query() query: AuditVerifyQueryDto) {
    return this.audit.verify(query);
  }

  @Get(':seq')
  @AdminAction('admin.audit_read')
  @ApiOperation({ summary: 'One audit event, its detail whole' })
  @ApiOkResponse({ type: AuditEventDto })
  @ApiAdminErrors(INVALID, [404, 'No such event'])
  async get(@Param() { seq }: SeqParamDto) {
    return found(await this.audit.get(seq), `no audit event ${seq}`);
  }
}
