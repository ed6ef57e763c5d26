import type { RunEvents } from './core/run-events.js';

const OPEN = '<think>';
const CLOSE = '</think>';

/**
 * The final answer as it streams, as `answer_delta` events with the offsets run-events.ts defines.
 * `base` is what earlier parts of the answer kept (a continued answer appends); a reply that turns out
 * not to be the answer (it carries tool calls, it was retried, it was a subtask's note) is withdrawn
 * with `{offset: base, text: ''}`: "drop what follows offset". Reasoning that leaks into the content as
 * a leading `<think>` block is held back, never sent.
 */
export class AnswerStream {
  private base = 0;
  private sent = 0;
  /** The reply's content so far while it may still open a `<think>` block, or is inside one. */
  private held = '';
  private thinking = false;
  private decided = false;
  private queue: Promise<void> = Promise.resolve();

  constructor(
    private readonly events: RunEvents,
    private readonly taskId: string,
  ) {}

  /** One piece of the reply's content, as it arrives (synchronous: the gateway's stream does not wait). */
  readonly onContent = (delta: string): void => {
    if (this.decided && !this.thinking) return this.send(delta);
    this.held += delta;
    if (!this.decided) {
      const start = this.held.trimStart();
      if (OPEN.startsWith(start)) return;
      this.decided = true;
      this.thinking = start.startsWith(OPEN);
      if (!this.thinking) return this.send(this.takeHeld());
    }
    const close = this.held.indexOf(CLOSE);
    if (close < 0) return;
    this.thinking = false;
    const rest = this.held.slice(close + CLOSE.length).replace(/^\s+/, '');
    this.held = '';
    if (rest !== '') this.send(rest);
  };

  /** The reply is not (part of) the answer: withdraw what it sent. */
  withdraw(): void {
    if (this.sent > 0) this.enqueue(this.base, '');
    this.endReply(0);
  }

  /** The reply is a part of the answer that a continuation will extend. */
  keep(): void {
    this.endReply(this.sent);
  }

  /** Every event emitted so far has been delivered. */
  flushed(): Promise<void> {
    return this.queue;
  }

  private takeHeld(): string {
    const text = this.held;
    this.held = '';
    return text;
  }

  private send(text: string): void {
    if (text === '') return;
    this.enqueue(this.base + this.sent, text);
    this.sent += text.length;
  }

  private enqueue(offset: number, text: string): void {
    this.queue = this.queue.then(() => this.events.emit({ type: 'answer_delta', taskId: this.taskId, offset, text }));
    // Handled here so that a run which stops before `flushed()` leaves no unhandled rejection; `flushed()` still throws it.
    this.queue.catch(() => undefined);
  }

  private endReply(kept: number): void {
    this.base += kept;
    this.sent = 0;
    this.held = '';
    this.thinking = false;
    this.decided = false;
  }
}
