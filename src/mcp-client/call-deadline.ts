import { SdkError, SdkErrorCode } from '@modelcontextprotocol/client';

/**
 * A call's `timeout_ms`, counted only while the server works: it stops while the person is asked a
 * form (they may take up to `agent.approvals.wait_ms`). Past it the call is aborted as a timeout.
 */
export class CallDeadline {
  private readonly controller = new AbortController();
  private timer: NodeJS.Timeout | null = null;
  private left: number;
  private since = 0;
  private paused = 0;

  constructor(private readonly timeoutMs: number) {
    this.left = timeoutMs;
    this.start();
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  async pausedDuring<T>(work: () => Promise<T>): Promise<T> {
    if (this.paused++ === 0) this.stop();
    try {
      return await work();
    } finally {
      if (--this.paused === 0 && !this.controller.signal.aborted) this.start();
    }
  }

  clear(): void {
    this.stop();
  }

  private start(): void {
    this.since = Date.now();
    this.timer = setTimeout(() => this.controller.abort(new SdkError(SdkErrorCode.RequestTimeout, 'Request timed out', { timeout: this.timeoutMs })), Math.max(0, this.left));
  }

  private stop(): void {
    if (!this.timer) return;
    clearTimeout(this.timer);
    this.timer = null;
    this.left -= Date.now() - this.since;
  }
}
