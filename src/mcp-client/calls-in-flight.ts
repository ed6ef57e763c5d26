import { AsyncLocalStorage } from 'node:async_hooks';

export interface Root {
  uri: string;
  name: string;
}

interface Held {
  key: string;
  calls: number;
  /** The server was told these roots (and had the time to read them) before any call under them goes out. */
  applied: Promise<void>;
}

/**
 * The calls one connection has in flight, each by an id of its own, and the roots they run under.
 *
 * - Roots belong to the connection, not to a call (MCP has one `roots/list` per client), so calls run side by side
 *   only under the same roots: a call for other roots (another session's workspace) waits until the calls under the
 *   current ones are done, first come first served, and a call that asks for the current roots while another waits
 *   queues behind it. Its wait ends on its cancel at once.
 * - A request the server sends during a call (sampling, a form) names no call. It is the call's whose async context
 *   it arrives in (the SDK hands it over inside the call: an in-process server), else the only call in flight's;
 *   with several in flight and nothing to tell them apart it is nobody's, and the caller answers as outside a call:
 *   one person's form never reaches another.
 */
export class CallsInFlight<Scope extends { roots: Root[] }> {
  private readonly calls = new Map<number, Scope>();
  private readonly current = new AsyncLocalStorage<number>();
  private lastId = 0;
  private held: Held | null = null;
  private readonly waiting: { key: string; admit: () => void }[] = [];

  /** `apply` tells the server new roots, once for all the calls that run under them. */
  constructor(private readonly apply: (roots: Root[]) => Promise<void>) {}

  /** Runs `work` as one call under `scope`'s roots, once they are the server's. */
  async run<T>(scope: Scope, signal: AbortSignal, work: () => Promise<T>): Promise<T> {
    const key = JSON.stringify(scope.roots);
    await this.enter(key, scope.roots, signal);
    const id = ++this.lastId;
    this.calls.set(id, scope);
    try {
      // Its cancel and deadline end it here too: telling the server may never finish (an HTTP server that takes
      // the notification's POST and never answers it); the roots stay held until every call under them left.
      await abortable(this.held!.applied, signal);
      return await this.current.run(id, work);
    } finally {
      this.calls.delete(id);
      this.leave();
    }
  }

  /** The scope of the call a server request belongs to, or null where that cannot be told (or none runs). */
  scopeOfRequest(): Scope | null {
    const id = this.current.getStore();
    // Inside a call that has ended (a server's late request): nobody's, never the call that runs now.
    if (id !== undefined) return this.calls.get(id) ?? null;
    return this.calls.size === 1 ? this.calls.values().next().value! : null;
  }

  /** The roots every call in flight runs under; null when none runs. */
  heldRoots(): Root[] | null {
    return this.held ? (JSON.parse(this.held.key) as Root[]) : null;
  }

  private async enter(key: string, roots: Root[], signal: AbortSignal): Promise<void> {
    signal.throwIfAborted();
    if (this.held === null || (this.held.key === key && this.waiting.length === 0)) return this.admit(key, roots);
    await new Promise<void>((admitted, cancelled) => {
      const waiter = {
        key,
        admit: () => {
          signal.removeEventListener('abort', cancel);
          this.admit(key, roots);
          admitted();
        },
      };
      const cancel = () => {
        this.waiting.splice(this.waiting.indexOf(waiter), 1);
        cancelled(reasonOf(signal));
      };
      signal.addEventListener('abort', cancel, { once: true });
      this.waiting.push(waiter);
    });
  }

  private admit(key: string, roots: Root[]): void {
    if (this.held?.key === key) this.held.calls++;
    else {
      const applied = this.apply(roots);
      // Each call under these roots awaits it, and fails with it; marked handled for the moment before they do.
      applied.catch(() => undefined);
      this.held = { key, calls: 1, applied };
    }
  }

  /** The last call under the current roots is done: the first waiter's roots come next, with every waiter of the same roots in the queue's lead. */
  private leave(): void {
    if (--this.held!.calls > 0) return;
    this.held = null;
    const next = this.waiting[0]?.key;
    while (this.waiting.length > 0 && this.waiting[0].key === next) this.waiting.shift()!.admit();
  }
}

/** `promise`, or `signal`'s reason once it aborts first. */
function abortable<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(reasonOf(signal));
  return new Promise<T>((resolve, reject) => {
    const abort = () => reject(reasonOf(signal));
    signal.addEventListener('abort', abort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', abort));
  });
}

const reasonOf = (signal: AbortSignal) => (signal.reason instanceof Error ? signal.reason : new Error(String(signal.reason)));
