import { commonPrefix } from '../common/common-prefix.js';
import type { RunEvents } from './core/run-events.js';
import { splitThinking } from './think-tags.js';

const THINK_OPEN = '<think>';

/**
 * Turns the content chunks of the model calls that write a Task's final answer into `answer_delta`
 * events, with the rules every client relies on:
 * - thinking never shows: `<think>` blocks that reach content are cut (an open one hides what follows
 *   until it closes, a half-written `<think` tag is held back);
 * - what shows is always a prefix of the answer the Task will store (trimmed): leading whitespace is
 *   dropped and trailing whitespace held back until more text follows;
 * - a call that restarts (a stall retried) or turns out not to be the answer (it called tools) rewrites
 *   only from where it differs: identical text is not sent twice, and `offset` below what was sent
 *   means "drop what follows offset"; a continuation after `done_reason: length` appends.
 */
export class AnswerStream {
  /** Parts of the answer finished by earlier calls (cut at `length` and continued). */
  private committed = '';
  /** The content of the call being streamed. */
  private current = '';
  /** What followers were sent. */
  private shown = '';

  constructor(
    private readonly taskId: string,
    private readonly events: RunEvents,
  ) {}

  /** One content chunk of the call in progress. */
  chunk(text: string): Promise<void> {
    this.current += text;
    return this.publish(false);
  }

  /** A new attempt of the call starts (a retry): its text replaces the previous attempt's, lazily. */
  restart(): void {
    this.current = '';
  }

  /** The call ended with tool calls: what it wrote was not the answer. */
  discard(): Promise<void> {
    this.current = '';
    return this.publish(true);
  }

  /** The call was cut at `length` and will be continued: `answerSoFar` is the answer's text up to here. */
  continueAfter(answerSoFar: string): void {
    this.committed = answerSoFar;
    this.current = '';
  }

  private visible(): string {
    let raw = this.committed + this.current;
    const partial = partialTagAt(raw);
    if (partial >= 0) raw = raw.slice(0, partial);
    return splitThinking(raw).answer.trimStart().replace(/\s+$/, '');
  }

  /**
   * Sends what changed. Unless `force`, text that is still a prefix of what was sent waits: a retried
   * call that writes the same words again shows nothing new until it passes the old text.
   */
  private async publish(force: boolean): Promise<void> {
    const next = this.visible();
    if (next === this.shown) return;
    const common = commonPrefix(next, this.shown);
    if (common === next.length && !force) return;
    const delta = { type: 'answer_delta' as const, taskId: this.taskId, offset: common, text: next.slice(common) };
    this.shown = next;
    await this.events.emit(delta);
  }
}

/** Where a `<think>` tag may be starting at the end of `text` (-1: nowhere). */
function partialTagAt(text: string): number {
  for (let length = Math.min(THINK_OPEN.length - 1, text.length); length > 0; length--) {
    if (THINK_OPEN.startsWith(text.slice(-length))) return text.length - length;
  }
  return -1;
}
