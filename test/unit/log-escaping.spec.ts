import { afterEach, describe, expect, it, jest } from '@jest/globals';
import { StderrLogger } from '../../src/common/stderr-logger.js';

/**
 * Issue 37, S4: what another server writes (its stderr lines, its error texts) and what an identity
 * holds reach the log; a line break must not forge a log line, nor ESC reach the operator's terminal.
 */
describe('the text-format log', () => {
  const written: string[] = [];
  afterEach(() => {
    jest.restoreAllMocks();
    written.length = 0;
  });
  const capture = () =>
    jest.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
      written.push(String(chunk));
      return true;
    });

  it('writes a message with a line break, ESC and U+202E as one line, escaped', () => {
    capture();
    new StderrLogger('text').warn('server said: boom\n[Nest] 1  - LOG [Auth] admin signed in\u001b[2K\u202e', 'mcp:evil');
    expect(written).toHaveLength(1);
    expect(written[0].trimEnd().split('\n')).toHaveLength(1);
    expect(written[0]).toContain('server said: boom\\n[Nest] 1  - LOG [Auth] admin signed in\\x1b[2K\\u202e');
    expect(written[0]).not.toContain('\u001b[2K');
  });

  it('keeps names beyond ASCII as they are', () => {
    capture();
    new StderrLogger('text').log('task started: owner 山田 太郎', 'TaskWorker');
    expect(written[0]).toContain('owner 山田 太郎');
  });

  it('leaves the JSON format to JSON, which escapes line breaks already', () => {
    capture();
    new StderrLogger('json').warn('a\nb', 'mcp:evil');
    expect(written).toHaveLength(1);
    expect(JSON.parse(written[0])).toMatchObject({ message: 'a\nb', context: 'mcp:evil' });
  });
});
