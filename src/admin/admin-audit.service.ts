import { Injectable } from '@nestjs/common';
import { AuditLogService, type AuditFilters } from '../audit/audit-log.service.js';
import type { AuditExportQueryDto, AuditPageQueryDto, AuditQueryDto, AuditVerifyQueryDto } from './admin.dto.js';
import type { AuditEventDto, AuditPageDto, AuditVerificationDto } from './admin-responses.dto.js';
import { csvCell, mapAuditEvent, mapListedAuditEvent } from './admin-views.js';

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

/** The admin API's views of the audit log: pages, exports line by line, one event, the chain's verification. */
@Injectable()
export class AdminAuditService {
  constructor(private readonly log: AuditLogService) {}

  async search(query: AuditPageQueryDto): Promise<AuditPageDto> {
    const page = await this.log.search(filtersOf(query), query.limit ?? 100, query.cursor ?? null);
    return { items: page.items.map(mapListedAuditEvent), next_cursor: page.nextCursor };
  }

  /** The export's lines, each with its newline, oldest event first: JSON Lines, or CSV after its header. */
  async *exportLines(query: AuditExportQueryDto): AsyncGenerator<string> {
    if (query.format === 'csv') yield `${CSV_COLUMNS.join(',')}\n`;
    for await (const event of this.log.stream(filtersOf(query))) {
      const view = mapAuditEvent(event);
      yield `${query.format === 'csv' ? CSV_COLUMNS.map((column) => csvCell(view[column])).join(',') : JSON.stringify(view)}\n`;
    }
  }

  async verify(query: AuditVerifyQueryDto): Promise<AuditVerificationDto> {
    const checkpoint =
      query.checkpoint_seq !== undefined && query.checkpoint_hash !== undefined ? { seq: query.checkpoint_seq, hash: query.checkpoint_hash.toLowerCase() } : undefined;
    const result = await this.log.verify(checkpoint);
    return { ok: result.ok, checked: result.checked, first_bad_seq: result.firstBadSeq, reason: result.reason, head: result.head, anchor: result.anchor };
  }

  async get(seq: number): Promise<AuditEventDto | null> {
    const event = await this.log.get(seq);
    return event && mapAuditEvent(event);
  }
}
