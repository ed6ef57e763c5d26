import { Injectable } from '@nestjs/common';
import { AgentError } from '../common/agent-error.js';
import type { Caller } from '../identity/caller.js';
import type { UsageDay } from '../usage/usage.repository.js';
import { UsageService, utcDay } from '../usage/usage.service.js';
import type { UsageQueryDto } from './admin-usage.dto.js';
import { csvCell } from './admin-views.js';

const DAY_MS = 86_400_000;
/** The longest report: a year and a day. */
const MAX_DAYS = 366;
const CSV_COLUMNS = ['day', 'user', 'tasks', 'model_calls', 'tool_calls', 'input_tokens', 'output_tokens', 'total_tokens', 'wall_ms'] as const;

/** Usage per user and day (issue 39): admins read everyone's, any other user only their own. */
@Injectable()
export class AdminUsageService {
  constructor(private readonly usage: UsageService) {}

  async report(caller: Caller, query: UsageQueryDto, now = Date.now()) {
    const to = query.to ?? utcDay(now);
    const from = query.from ?? utcDay(Date.parse(to) - 29 * DAY_MS);
    const span = (Date.parse(to) - Date.parse(from)) / DAY_MS;
    if (Number.isNaN(span) || utcDay(Date.parse(from)) !== from || utcDay(Date.parse(to)) !== to)
      throw new AgentError('invalid_input', 'from and to must be days of the calendar, YYYY-MM-DD');
    if (span < 0) throw new AgentError('invalid_input', 'from must not be after to');
    if (span >= MAX_DAYS) throw new AgentError('invalid_input', `a report covers at most ${MAX_DAYS} days`);
    if (!caller.admin && query.user !== undefined && query.user !== caller.user) throw new AgentError('invalid_input', 'user: you may read only your own usage');
    const user = caller.admin ? (query.user ?? null) : caller.user;
    const days = (await this.usage.report(from, to, user)).map(mapUsageDay);
    return { from, to, user, days };
  }

  /** The report's rows as CSV with a header line. */
  csv(report: { days: ReturnType<typeof mapUsageDay>[] }): string {
    return [CSV_COLUMNS.join(','), ...report.days.map((row) => CSV_COLUMNS.map((column) => csvCell(row[column])).join(','))].join('\n') + '\n';
  }
}

const mapUsageDay = (row: UsageDay) => ({
  day: row.day,
  user: row.owner,
  tasks: row.tasks,
  model_calls: row.modelCalls,
  tool_calls: row.toolCalls,
  input_tokens: row.inputTokens,
  output_tokens: row.outputTokens,
  total_tokens: row.inputTokens + row.outputTokens,
  wall_ms: row.wallMs,
});
