import { describe, expect, it } from '@jest/globals';
import { checkInputFiles, safeName } from '../../src/conversation/input-files.js';

const file = (name: string, mediaType: string, data: Buffer | string, at = 'files[0]') => ({ name, mediaType, data: Buffer.from(data), at });
const limits = { maxCount: 2, maxBytes: 100 };

describe('attached file names and types', () => {
  it('keeps a plain file name only: no path, no leading dot, unsafe characters as _, long names cut with the extension kept', () => {
    expect(safeName('../../etc/passwd', 0)).toBe('passwd');
    expect(safeName('C:\\Users\\me\\report final.pdf', 0)).toBe('report final.pdf');
    expect(safeName('.bashrc', 0)).toBe('bashrc');
    expect(safeName('..', 3)).toBe('file-4');
    expect(safeName('a\u0000b<c>|d.txt', 0)).toBe('a_b_c__d.txt');
    expect(safeName('売上レポート.csv', 0)).toBe('売上レポート.csv');
    const long = safeName(`${'x'.repeat(300)}.json`, 0);
    expect(long).toHaveLength(120);
    expect(long.endsWith('.json')).toBe(true);
  });

  it('names duplicates apart and takes the type from the content', async () => {
    const checked = await checkInputFiles([file('a.txt', '', 'one'), file('A.txt', 'text/markdown', '# two')], limits);
    expect(checked.map(({ name, mimeType }) => [name, mimeType])).toEqual([
      ['a.txt', 'text/plain'],
      ['A-2.txt', 'text/markdown'],
    ]);
  });

  it('refuses too many, too large, empty, contradicted and unrecognised files, naming the part', async () => {
    await expect(checkInputFiles([file('a', '', 'x'), file('b', '', 'y'), file('c', '', 'z', 'files[2]')], limits)).rejects.toThrow(/^files\[2\]: at most 2 files/);
    await expect(checkInputFiles([file('a', '', 'x'.repeat(101))], limits)).rejects.toThrow(/101 bytes together, more than mcp.files.max_bytes \(100\)/);
    await expect(checkInputFiles([file('a', '', '')], limits)).rejects.toThrow(/empty/);
    await expect(checkInputFiles([file('a.pdf', 'application/pdf', 'hello')], limits)).rejects.toThrow(/declared as application\/pdf, but its content is plain text/);
    await expect(checkInputFiles([file('a', '', Buffer.from([1, 2, 0, 0x80]))], limits)).rejects.toThrow(/neither UTF-8 text nor a recognised/);
  });
});
