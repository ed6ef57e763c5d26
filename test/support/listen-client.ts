import { modernMeta } from './mcp-clients.js';

export const SUBSCRIPTION_ID = 'io.modelcontextprotocol/subscriptionId';

/** One JSON-RPC message of the stream. */
export type Message = { method?: string; id?: unknown; result?: unknown; error?: { code: number; message: string }; params?: Record<string, any> };

/** An open subscriptions/listen stream: the messages so far, and a way to wait for more. */
export class Listen {
  readonly messages: Message[] = [];
  status = 0;
  private readonly abort = new AbortController();
  private done: Promise<void> = Promise.resolve();

  async open(url: string, headers: Record<string, string>, notifications: Record<string, unknown>, tasks = true): Promise<this> {
    const res = await fetch(url, {
      method: 'POST',
      signal: this.abort.signal,
      headers: {
        'Content-Type': 'application/json',
        Accept: 'application/json, text/event-stream',
        'MCP-Protocol-Version': '2026-07-28',
        'Mcp-Method': 'subscriptions/listen',
        ...headers,
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 'sub-1', method: 'subscriptions/listen', params: { notifications, _meta: modernMeta(tasks) } }),
    });
    this.status = res.status;
    if (!res.headers.get('content-type')?.startsWith('text/event-stream')) {
      this.messages.push((await res.json()) as Message);
      return this;
    }
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    this.done = (async () => {
      let buffer = '';
      try {
        for (;;) {
          const { value, done } = await reader.read();
          if (done) return;
          buffer += decoder.decode(value, { stream: true });
          let end: number;
          while ((end = buffer.indexOf('\n\n')) >= 0) {
            const frame = buffer.slice(0, end);
            buffer = buffer.slice(end + 2);
            const data = frame.split('\n').find((line) => line.startsWith('data: '));
            if (data) this.messages.push(JSON.parse(data.slice(6)) as Message);
          }
        }
      } catch {
        // aborted by close()
      }
    })();
    return this;
  }

  async until(predicate: (messages: Message[]) => boolean, timeoutMs = 10_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!predicate(this.messages)) {
      if (Date.now() > deadline) throw new Error(`listen: condition not met; got ${JSON.stringify(this.messages)}`);
      await new Promise((done) => setTimeout(done, 20));
    }
  }

  of(method: string): Message[] {
    return this.messages.filter((message) => message.method === method);
  }

  async close(): Promise<void> {
    this.abort.abort();
    await this.done;
  }
}
