import type { AnswerDraft, AnswerDraftRepository } from '../../../src/events/answer-draft.repository.js';

/** The `task_answer_drafts` table in memory: a later draft (higher seq) is never overwritten by an earlier one. */
export class MemoryAnswerDrafts implements Pick<AnswerDraftRepository, 'read' | 'write'> {
  readonly rows = new Map<string, AnswerDraft>();

  async read(taskId: string): Promise<AnswerDraft | null> {
    return this.rows.get(taskId) ?? null;
  }

  async write(taskId: string, draft: AnswerDraft): Promise<void> {
    if ((this.rows.get(taskId)?.seq ?? -1) < draft.seq) this.rows.set(taskId, draft);
  }
}
