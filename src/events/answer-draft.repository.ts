import { Injectable } from '@nestjs/common';
import { nowIso } from '../common/clock.js';
import { PlainSql } from '../database/plain-sql.js';

export interface AnswerDraft {
  text: string;
  /** The seq of the last delta the text includes. */
  seq: number;
}

/** `task_answer_drafts`: the answer a running Task has written so far, one row per Task. */
@Injectable()
export class AnswerDraftRepository {
  constructor(private readonly sql: PlainSql) {}

  async read(taskId: string): Promise<AnswerDraft | null> {
    const [row] = await this.sql.all<{ text: string; seq: number }>('SELECT text, seq FROM task_answer_drafts WHERE task_id = ?', [taskId]);
    return row ? { text: row.text, seq: Number(row.seq) } : null;
  }

  /** Stores the draft unless a later one (higher seq) is there already: writes may complete out of order. */
  write(taskId: string, draft: AnswerDraft): Promise<void> {
    return this.sql.run(
      'INSERT INTO task_answer_drafts (task_id, text, seq, updated_at) VALUES (?, ?, ?, ?) ' +
        'ON CONFLICT (task_id) DO UPDATE SET text = excluded.text, seq = excluded.seq, updated_at = excluded.updated_at WHERE task_answer_drafts.seq < excluded.seq',
      // No NUL: PostgreSQL's text refuses it.
      [taskId, draft.text.replaceAll('\0', '\uFFFD'), draft.seq, nowIso()],
    );
  }
}
