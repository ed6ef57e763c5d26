import type { ServerResponse } from 'node:http';

/**
 * Writes `events` as Server-Sent Events (`data: <json>`), then `data: [DONE]`, with a `: keep-alive`
 * comment every `keepaliveMs` so proxies and clients keep an idle stream open. A write that fills the
 * socket buffer waits for it to drain: a slow reader holds back the feed, not the process's memory.
 */
export async function writeSse(res: ServerResponse, events: AsyncIterable<object>, keepaliveMs: number, gone: AbortSignal): Promise<void> {
  res.writeHead(200, { 'Content-Type': 'text/event-stream; charset=utf-8', 'Cache-Control': 'no-cache', Connection: 'keep-alive', 'X-Accel-Buffering': 'no' });
  res.flushHeaders();
  const keepalive = setInterval(() => res.write(': keep-alive\n\n'), keepaliveMs);
  try {
    for await (const event of events) {
      if (!res.write(`data: ${JSON.stringify(event)}\n\n`)) await drained(res);
      if (gone.aborted) return;
    }
    res.write('data: [DONE]\n\n');
  } catch (error) {
    // Headers are gone: an error can only be one more event, in the shape OpenAI's clients raise.
    res.write(`data: ${JSON.stringify({ error: { message: 'The stream failed; see the service log.', type: 'server_error', param: null, code: 'internal' } })}\n\n`);
    throw error;
  } finally {
    clearInterval(keepalive);
    res.end();
  }
}

const drained = (res: ServerResponse) => new Promise<void>((resolve) => (res.once('drain', resolve), res.once('close', resolve)));
