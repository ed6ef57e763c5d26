import { Injectable } from '@nestjs/common';
import { TOOL_STEP_KINDS } from '../agent/task-step.entity.js';
import { PlainSql } from '../database/plain-sql.js';

/** One user's usage on one UTC day. */
export interface UsageDay {
  owner: string;
  /** `YYYY-MM-DD`, UTC. */
  day: string;
  tasks: number;
  modelCalls: number;
  toolCalls: number;
  inputTokens: number;
  outputTokens: number;
  wallMs: number;
}

const TOOL_KINDS_SQL = `(${TOOL_STEP_KINDS.map((kind) => `'${kind}'`).join(', ')})`;

/** `usage_daily`: what each user spent per UTC day, added to as each of their Tasks ends. */
@Injectable()
export class UsageRepository {
  constructor(private readonly sql: PlainSql) {}

  /**
   * Adds one ended Task to its owner's day: its tokens from its row, its model and tool calls counted
   * from its trace, its wall time. One statement, so two replicas ending Tasks of one user add up.
   */
  async addTask(taskId: string, day: string, wallMs: number): Promise<void> {
    await this.sql.run(
      `INSERT INTO usage_daily (owner, day, tasks, model_calls, tool_calls, input_tokens, output_tokens, wall_ms)
       SELECT owner, ?, 1,
         (SELECT COUNT(*) FROM task_steps WHERE task_id = tasks.id AND kind = 'model_call'),
         (SELECT COUNT(*) FROM task_steps WHERE task_id = tasks.id AND kind IN ${TOOL_KINDS_SQL}),
         input_tokens, output_tokens, ?
       FROM tasks WHERE id = ?
       ON CONFLICT (owner, day) DO UPDATE SET
         tasks = usage_daily.tasks + excluded.tasks,
         model_calls = usage_daily.model_calls + excluded.model_calls,
         tool_calls = usage_daily.tool_calls + excluded.tool_calls,
         input_tokens = usage_daily.input_tokens + excluded.input_tokens,
         output_tokens = usage_daily.output_tokens + excluded.output_tokens,
         wall_ms = usage_daily.wall_ms + excluded.wall_ms`,
      [day, wallMs, taskId],
    );
  }

  /** The groups a Task's owner had when it was accepted (what the quota of its run is taken from). */
  async ownerGroups(taskId: string): Promise<string[]> {
    const [row] = await this.sql.all<{ owner_groups: string }>('SELECT owner_groups FROM tasks WHERE id = ?', [taskId]);
    const groups: unknown = row ? JSON.parse(row.owner_groups) : [];
    return Array.isArray(groups) ? groups.filter((group): group is string => typeof group === 'string') : [];
  }

  /** Tokens (input and output) `owner` spent on `day`. */
  async tokensOn(owner: string, day: string): Promise<number> {
    const [row] = await this.sql.all<{ tokens: unknown }>('SELECT input_tokens + output_tokens AS tokens FROM usage_daily WHERE owner = ? AND day = ?', [owner, day]);
    return row ? Number(row.tokens) : 0;
  }

  /** Days from `from` to `to` (inclusive), of one owner or of all; by day, then owner. At most `limit` rows. */
  async days(from: string, to: string, owner: string | null, limit: number): Promise<UsageDay[]> {
    const rows = await this.sql.all<Record<string, unknown>>(
      `SELECT * FROM usage_daily WHERE day >= ? AND day <= ?${owner === null ? '' : ' AND owner = ?'} ORDER BY day, owner LIMIT ?`,
      owner === null ? [from, to, limit] : [from, to, owner, limit],
    );
    return rows.map((row) => ({
      owner: String(row.owner),
      day: String(row.day),
      tasks: Number(row.tasks),
      modelCalls: Number(row.model_calls),
      toolCalls: Number(row.tool_calls),
      inputTokens: Number(row.input_tokens),
      outputTokens: Number(row.output_tokens),
      wallMs: Number(row.wall_ms),
    }));
  }
}
