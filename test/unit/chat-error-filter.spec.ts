import { afterEach, describe, expect, it, jest } from '@jest/globals';
import { Logger, type ArgumentsHost } from '@nestjs/common';
import { ChatErrorFilter } from '../../src/chat/chat-error.filter.js';
import { ChatError } from '../../src/chat/chat.service.js';

/** The parts of an Express response the filter may use, recorded. */
function response(headersSent = false) {
  const res = {
    headersSent,
    statusCode: 200,
    headers: {} as Record<string, string>,
    body: undefined as unknown,
    ended: false,
    status: (code: number) => ((res.statusCode = code), res),
    json: (body: unknown) => ((res.body = body), (res.ended = true), res),
    setHeader: (name: string, value: string) => void (res.headers[name] = value),
    end: () => void (res.ended = true),
  };
  return res;
}

const hostOf = (res: ReturnType<typeof response>) => ({ switchToHttp: () => ({ getResponse: () => res }) }) as unknown as ArgumentsHost;

describe("ChatErrorFilter (every Chat API error in OpenAI's shape)", () => {
  afterEach(() => {
    jest.restoreAllMocks();
  });

  it('answers a ChatError with its status and fields, and logs nothing', () => {
    const logged = jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
    const res = response();
    new ChatErrorFilter().catch(new ChatError(404, 'session x does not exist.', 'invalid_request_error', 'session_id', 'session_not_found'), hostOf(res));
    expect(res.statusCode).toBe(404);
    expect(res.body).toEqual({ error: { message: 'session x does not exist.', type: 'invalid_request_error', param: 'session_id', code: 'session_not_found' } });
    expect(res.headers).toEqual({});
    expect(logged).not.toHaveBeenCalled();
  });

  it("says when to retry a full queue (429: the user's Tasks start one at a time)", () => {
    const res = response();
    new ChatErrorFilter().catch(new ChatError(429, 'queue full', 'rate_limit_error', null, 'queue_full'), hostOf(res));
    expect(res.statusCode).toBe(429);
    expect(res.headers).toEqual({ 'Retry-After': '30' });
  });

  it('answers anything else as a 500 server_error that shows nothing of it, and logs it', () => {
    const logged = jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
    const res = response();
    new ChatErrorFilter().catch(new Error('database is locked'), hostOf(res));
    expect(res.statusCode).toBe(500);
    expect(res.body).toEqual({ error: { message: 'The request could not be completed; see the service log.', type: 'server_error', param: null, code: 'internal' } });
    expect(logged).toHaveBeenCalledWith(expect.stringContaining('database is locked'));
  });

  it('ends a response that has begun (a stream whose headers are out) instead of setting a status', () => {
    jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
    const res = response(true);
    new ChatErrorFilter().catch(new ChatError(400, 'late', 'invalid_request_error'), hostOf(res));
    expect(res.ended).toBe(true);
    expect(res.statusCode).toBe(200);
    expect(res.body).toBeUndefined();
  });
});
