import { Injectable, Logger, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import type { RunEvent } from '../agent/core/run-events.js';
import { AnswerDraftRepository, type AnswerDraft } from './answer-draft.repository.js';
import { TaskEvents } from './task-events.js';

/** How long answer deltas gather before the draft row is written (one write per burst of tokens). */
const WRITE_AFTER_MS = 100;

/** Applies one delta to the answer: `text` at `offset`, dropping what followed. */
export const applyDelta = (answer: string, delta: { offset: number; text: string }) => answer.slice(0, delta.offset) + delta.text;

/**
 * The answer a running Task has written so far, stored (`task_answer_drafts`) by the process that runs
 * it: followers that missed notifications, or that joined late on another replica, read it; agent_status
 * shows it as the growing `result`. Writes are gathered per burst, so the row lags the events by at
 * most WRITE_AFTER_MS; followers reconcile by `seq`.
 */
@Injectable()
export class AnswerDrafts implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger('AnswerDrafts');
  private readonly pending = new Map<string, { draft: AnswerDraft; timer: NodeJS.Timeout | null }>();
  private unsubscribe: (() => void) | null = null;

  constructor(
    private readonly repository: AnswerDraftRepository,
    private readonly events: TaskEvents,
  ) {}

  onModuleInit(): void {
    this.unsubscribe = this.events.subscribeAll((event, origin) => origin === 'local' && this.observe(event));
  }

  onModuleDestroy(): void {
    this.unsubscribe?.();
    for (const [taskId, entry] of this.pending) {
      if (entry.timer) clearTimeout(entry.timer);
      void this.write(taskId, entry.draft);
    }
  }

  read(taskId: string): Promise<AnswerDraft | null> {
    return this.repository.read(taskId);
  }

  private observe(event: RunEvent): void {
    if (event.type === 'ended') return void this.flush(event.taskId);
    if (event.type !== 'answer_delta') return;
    let entry = this.pending.get(event.taskId);
    if (!entry) this.pending.set(event.taskId, (entry = { draft: { text: '', seq: 0 }, timer: null }));
    entry.draft = { text: applyDelta(entry.draft.text, event), seq: event.seq ?? entry.draft.seq + 1 };
    entry.timer ??= setTimeout(() => this.flush(event.taskId, false), WRITE_AFTER_MS);
  }

  /** Writes the task's draft now; `done`: the Task ended, forget it here. */
  private flush(taskId: string, done = true): void {
    const entry = this.pending.get(taskId);
    if (!entry) return;
    if (entry.timer) clearTimeout(entry.timer);
    entry.timer = null;
    if (done) this.pending.delete(taskId);
    void this.write(taskId, entry.draft);
  }

  private async write(taskId: string, draft: AnswerDraft): Promise<void> {
    try {
      await this.repository.write(taskId, draft);
    } catch (error) {
      this.logger.warn(`answer draft of task ${taskId} not stored: ${(error as Error).message}`);
    }
  }
}
