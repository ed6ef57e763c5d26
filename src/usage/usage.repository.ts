import { Injectable } from '@nestjs/common';
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

/** `usage_daily`: what each user spent per UTC day, added to as each of their Tasks ends. */
@Injectable()
export class UsageRepository {
  constructor(private readonly sql: PlainSql) {}

  /**
   * Adds one ended Task (`tasks` 1) to its owner's day. One upsert adding to the row, so two replicas
   * ending Tasks of one user at once both count.
   */
  async addTask(usage: Omit<UsageDay, 'tasks'>): Promise<void> {
    await this.sql.run(
      `INSERT INTO usage_daily (owner, day, tasks, model_calls, tool_calls, input_tokens, output_tokens, wall_ms)
       VALUES (?, ?, 1, ?, ?, ?, ?, ?)
       ON CONFLICT (owner, day) DO UPDATE SET
         tasks = usage_daily.tasks + excluded.tasks,
         model_calls = usage_daily.model_calls + excluded.model_calls,
         tool_calls = usage_daily.tool_calls + excluded.tool_calls,
         input_tokens = usage_daily.input_tokens + excluded.input_tokens,
         output_tokens = usage_daily.output_tokens + excluded.output_tokens,
         wall_ms = usage_daily.wall_ms + excluded.wall_ms`,
      [usage.owner, usage.day, usage.modelCalls, usage.toolCalls, usage.inputTokens, usage.outputTokens, usage.wallMs],
    );
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
