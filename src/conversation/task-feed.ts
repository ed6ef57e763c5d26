import { Injectable } from '@nestjs/common';
import type { RunEvent } from '../agent/core/run-events.js';
import type { TaskStepEntity } from '../agent/task-step.entity.js';
import { AppConfig } from '../config/app-config.js';
import { commonPrefix } from '../common/common-prefix.js';
import { AnswerDrafts, applyDelta } from '../events/answer-drafts.js';
import { TaskEvents } from '../events/task-events.js';
import type { ListedTask } from '../queue/task-read-model.js';
import { ConversationService, isTerminal } from './conversation.service.js';

/** How the answer a client shows changes: drop what follows `offset`, then append `text`. */
export interface AnswerChange {
  offset: number;
  text: string;
}

/** One change of a followed Task: its row, the trace steps written since the previous one, the answer. */
export interface TaskUpdate {
  task: ListedTask;
  steps: TaskStepEntity[];
  /** The status or the current subtask changed since the previous update (always true on the first). */
  moved: boolean;
  /** The running answer changed (never thinking); null when it did not. */
  answer: AnswerChange | null;
}

type AnswerDelta = Extract<RunEvent, { type: 'answer_delta' }>;

/**
 * Follows a Task for the streaming surfaces, pushed by its events (TaskEvents: in process, or from the
 * replica that runs it) rather than polled. The events say when to look; the row, the trace and the
 * answer draft are what is shown, so a follower that missed notifications (a reconnect, a gap in the
 * answer's seq) catches up by reading them, and `queue.progress_poll_ms` is only the fallback: how long
 * it waits without any event before it reads anyway.
 */
@Injectable()
export class TaskFeed {
  private readonly fallbackMs: number;

  constructor(
    private readonly conversations: ConversationService,
    private readonly events: TaskEvents,
    private readonly drafts: AnswerDrafts,
    config: AppConfig,
  ) {
    this.fallbackMs = config.queue.progressPollMs;
  }

  /** Yields on every change, the last time with the terminal row; ends early when `signal` aborts. */
  async *follow(taskId: string, signal?: AbortSignal): AsyncGenerator<TaskUpdate> {
    const inbox: RunEvent[] = [];
    let gap = true;
    let wake: (() => void) | null = null;
    const unsubscribe = this.events.subscribe(taskId, (event) => (inbox.push(event), wake?.()));
    const ungap = this.events.onGap(() => ((gap = true), wake?.()));
    const onAbort = () => wake?.();
    signal?.addEventListener('abort', onAbort);
    try {
      let lastStep = 0;
      let lastKey = '';
      let answer = '';
      let answerSeq = 0;
      let quiet = false;
      let current: ListedTask | null = null;
      while (!signal?.aborted) {
        const batch = inbox.splice(0);
        const before = answer;
        const stashed: AnswerDelta[] = [];
        for (const event of batch) {
          if (event.type !== 'answer_delta') continue;
          const seq = event.seq ?? answerSeq + 1;
          if (seq === answerSeq + 1) [answer, answerSeq] = [applyDelta(answer, event), seq];
          else if (seq > answerSeq) stashed.push(event);
        }
        const readRow = gap || quiet || batch.some((event) => event.type !== 'answer_delta');
        if (gap || quiet || stashed.length > 0) {
          const draft = await this.drafts.read(taskId);
          if (draft && draft.seq > answerSeq) [answer, answerSeq] = [draft.text, draft.seq];
          for (const event of stashed) if (event.seq === answerSeq + 1) [answer, answerSeq] = [applyDelta(answer, event), event.seq];
        }
        gap = false;
        quiet = false;
        const change = answerChange(before, answer);
        if (readRow || change) {
          // An answer delta alone changes nothing in the row: the last one read stands.
          const task: ListedTask | null = readRow || !current ? await this.conversations.read(taskId) : current;
          if (!task) return;
          current = task;
          const steps = readRow ? await this.conversations.stepsAfter(taskId, lastStep) : [];
          const { currentTask, completedSubtasks, totalSubtasks } = task.progress;
          const key = `${task.status}|${currentTask}|${completedSubtasks}/${totalSubtasks}`;
          if (steps.length > 0 || key !== lastKey || change) yield { task, steps, moved: key !== lastKey, answer: change };
          lastStep = steps.at(-1)?.seq ?? lastStep;
          lastKey = key;
          if (isTerminal(task.status)) return;
        }
        if (inbox.length === 0 && !gap) quiet = !(await this.nextEvent((resolve) => (wake = resolve)));
        wake = null;
      }
    } finally {
      unsubscribe();
      ungap();
      signal?.removeEventListener('abort', onAbort);
    }
  }

  /** The Task once it is terminal (null when it disappears, or `signal` aborts first). */
  async untilTerminal(taskId: string, signal?: AbortSignal): Promise<ListedTask | null> {
    let last: ListedTask | null = null;
    for await (const update of this.follow(taskId, signal)) last = update.task;
    return last && isTerminal(last.status) ? last : null;
  }

  /** True when woken (an event, a gap, an abort); false after `queue.progress_poll_ms` of silence. */
  private nextEvent(arm: (resolve: () => void) => void): Promise<boolean> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => resolve(false), this.fallbackMs);
      arm(() => {
        clearTimeout(timer);
        resolve(true);
      });
    });
  }
}

function answerChange(before: string, after: string): AnswerChange | null {
  if (before === after) return null;
  const offset = commonPrefix(before, after);
  return { offset, text: after.slice(offset) };
}
