import { Get, NotFoundException, Param, Query, Res } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiProduces } from '@nestjs/swagger';
import type { Response } from 'express';
import { AuditLogService, type AuditFilters } from '../audit/audit-log.service.js';
import { AdminAction } from './admin-auth.guard.js';
import { AuditExportQueryDto, AuditPageQueryDto, AuditQueryDto, AuditVerifyQueryDto, SeqParamDto } from './admin.dto.js';
import { csvCell, mapAuditEvent, mapListedAuditEvent } from './admin-views.js';
import { AdminRoutes } from './admin-routes.decorator.js';

const CSV_COLUMNS = ['seq', 'at', 'actor', 'groups', 'source', 'transport', 'client', 'action', 'outcome', 'task_id', 'session_id', 'detail', 'prev_hash', 'hash'] as const;

const filtersOf = (query: AuditQueryDto): AuditFilters => ({
  actor: query.actor,
  action: query.action,
  outcome: query.outcome,
  taskId: query.task_id,
  sessionId: query.session_id,
  from: query.from,
  to: query.to,
});

@AdminRoutes('admin/audit', 'audit')
export class AdminAuditController {
  constructor(private readonly log: AuditLogService) {}

  @Get()
  @AdminAction('admin.audit_read')
  @ApiOperation({ summary: 'Search audit events (filters AND-ed), newest first, with an opaque cursor' })
  async search(@Query() query: AuditPageQueryDto) {
    const page = await this.log.search(filtersOf(query), query.limit ?? 100, query.cursor ?? null);
    return { items: page.items.map(mapListedAuditEvent), next_cursor: page.nextCursor };
  }

  @Get('export')
  @AdminAction('admin.audit_export')
  @ApiOperation({ summary: 'Stream matching events oldest first as JSON Lines or CSV' })
  @ApiProduces('application/x-ndjson', 'text/csv')
  async export(@Query() query: AuditExportQueryDto, @Res({ passthrough: true }) res: Response): Promise<void> {
    res.setHeader('Content-Type', query.format === 'csv' ? 'text/csv; charset=utf-8' : 'application/x-ndjson; charset=utf-8');
    res.setHeader('Content-Disposition', `attachment; filename="audit.${query.format}"`);
    if (query.format === 'csv') res.write(`${CSV_COLUMNS.join(',')}\n`);
    for await (const event of this.log.stream(filtersOf(query))) {
      const view = mapAuditEvent(event);
      const line = query.format === 'csv' ? CSV_COLUMNS.map((column) => csvCell(view[column])).join(',') : JSON.stringify(view);
      if (!res.write(`${line}\n`)) await new Promise((resolve) => res.once('drain', resolve));
    }
    res.end();
  }

  @Get('verify')
  @AdminAction('admin.audit_verify')
  @ApiOperation({
    summary: 'Verify the hash chain; reports the first broken sequence number',
    description: 'With the latest checkpoint from the service log, also detects events removed from the end of the chain.',
  })
  @ApiOkResponse({ description: '`{ok, checked, first_bad_seq, reason, head, anchor}`' })
  async verify(@Query() query: AuditVerifyQueryDto) {
    const checkpoint = query.checkpoint_seq !== undefined && query.checkpoint_hash !== undefined ? { seq: query.checkpoint_seq, hash: query.checkpoint_hash.toLowerCase() } : undefined;
    const result = await this.log.verify(checkpoint);
    return { ok: result.ok, checked: result.checked, first_bad_seq: result.firstBadSeq, reason: result.reason, head: result.head, anchor: result.anchor };
  }

  @Get(':seq')
  @AdminAction('admin.audit_read')
  @ApiOperation({ summary: 'One audit event' })
  async get(@Param() { seq }: SeqParamDto) {
    const event = await this.log.get(seq);
    if (!event) throw new NotFoundException(`no audit event ${seq}`);
    return mapAuditEvent(event);
  }
}
