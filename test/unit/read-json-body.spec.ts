import { describe, expect, it } from '@jest/globals';
import type { IncomingMessage } from 'node:http';
import { PassThrough } from 'node:stream';
import { BodyBudget } from '../../src/http/body-budget.js';
import { readJsonBody } from '../../src/http/json-body.js';

/** A request body arriving in `chunks` (split anywhere, even inside a UTF-8 character). */
function request(chunks: Buffer[], headers: Record<string, string> = {}): IncomingMessage {
  const stream = new PassThrough();
  Object.assign(stream, { method: 'POST', headers });
  setImmediate(() => {
    for (const chunk of chunks) stream.write(chunk);
    stream.end();
  });
  return stream as unknown as IncomingMessage;
}

const split = (bytes: Buffer, at: number) => [bytes.subarray(0, at), bytes.subarray(at)];
const roomy = () => new BodyBudget(1024 * 1024).lease();

describe('readJsonBody', () => {
  it('decodes an ASCII body and a UTF-8 body split inside a character, with and without a Content-Length', async () => {
    const ascii = { request: 'plain \\u00fc text', data: 'iVBORw0KGgo=' };
    expect(await readJsonBody(request([Buffer.from(JSON.stringify(ascii))]), 1024, roomy())).toEqual({ kind: 'json', value: ascii });
    const text = { request: 'プロジェクトのテスト ü €' };
    const bytes = Buffer.from(JSON.stringify(text));
    const inside = bytes.indexOf(Buffer.from('ロ')) + 1;
    expect(await readJsonBody(request(split(bytes, inside)), 1024, roomy())).toEqual({ kind: 'json', value: text });
    // With a Content-Length the chunks are copied into one preallocated buffer.
    expect(await readJsonBody(request(split(bytes, inside), { 'content-length': String(bytes.length) }), 1024, roomy())).toEqual({ kind: 'json', value: text });
  });

  it('refuses by Content-Length before reading, and by the bytes read when there is none', async () => {
    expect(await readJsonBody(request([Buffer.alloc(10, 32)], { 'content-length': '2000' }), 1024, roomy())).toEqual({ kind: 'too_large' });
    expect(await readJsonBody(request([Buffer.alloc(600, 32), Buffer.alloc(600, 32)]), 1024, roomy())).toEqual({ kind: 'too_large' });
  });

  it('tells an empty body from invalid JSON', async () => {
    expect(await readJsonBody(request([]), 1024, roomy())).toEqual({ kind: 'none' });
    expect(await readJsonBody(request([Buffer.from('{"a":')]), 1024, roomy())).toEqual({ kind: 'invalid', reason: 'the body is not valid JSON' });
  });

  it('refuses bytes that are not UTF-8 instead of turning them into U+FFFD, also split across chunks', async () => {
    for (const bad of [[0xff], [0xc3, 0x28], [0xed, 0xa0, 0x80], [0xf4, 0x90, 0x80, 0x80], [0xe3, 0x81]]) {
      const bytes = Buffer.concat([Buffer.from('{"a":"'), Buffer.from(bad), Buffer.from('"}')]);
      expect(await readJsonBody(request(split(bytes, 7)), 1024, roomy())).toEqual({ kind: 'invalid', reason: 'the body is not valid UTF-8' });
    }
  });

  it('tells nesting beyond MAX_JSON_DEPTH from nesting at it', async () => {
    const nested = (depth: number) => Buffer.from(`{"a":${'['.repeat(depth - 1)}${']'.repeat(depth - 1)}}`);
    expect(await readJsonBody(request([nested(64)]), 1024, roomy())).toMatchObject({ kind: 'json' });
    expect(await readJsonBody(request([nested(65)]), 1024, roomy())).toMatchObject({ kind: 'too_deep' });
  });

  it('takes what it holds from the budget: the declared length up front, else chunk by chunk, and refuses past it', async () => {
    const budget = new BodyBudget(1000);
    const first = budget.lease();
    expect(await readJsonBody(request([Buffer.from('[1]')], { 'content-length': '600' }), 1024, first)).toMatchObject({ kind: 'json' });
    // The first body's 600 bytes are still held: 600 more do not fit, declared or not.
    expect(await readJsonBody(request([Buffer.alloc(600, 32)], { 'content-length': '600' }), 1024, budget.lease())).toEqual({ kind: 'busy' });
    expect(await readJsonBody(request([Buffer.alloc(300, 32), Buffer.alloc(300, 32)]), 1024, budget.lease())).toEqual({ kind: 'busy' });
    first.release();
    expect(await readJsonBody(request([Buffer.from(' [2] '), Buffer.alloc(595, 32)]), 1024, budget.lease())).toMatchObject({ kind: 'json', value: [2] });
  });
});
