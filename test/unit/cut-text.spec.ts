import { describe, expect, it } from '@jest/globals';
import { cutText } from '../../src/common/cut-text.js';

describe('cutText', () => {
  it('leaves a text that fits alone, and cuts a longer one with … and the mark', () => {
    expect(cutText('abc', 3)).toBe('abc');
    expect(cutText('abcdef', 3)).toBe('abc…');
    expect(cutText('abcdef', 3, { mark: 'chars' })).toBe('abc… (6 chars)');
    expect(cutText('abcdef', 3, { mark: 'cut' })).toBe('abc…[cut: 6 chars]');
    expect(cutText('abc', 3, { partial: true, length: 10, mark: 'cut' })).toBe('abc…[cut: 10 chars]');
  });

  it('never splits a surrogate pair: the cut ends before it, and the result is well-formed', () => {
    const cut = cutText('ab😀cd', 3);
    expect(cut).toBe('ab…');
    expect(cut.isWellFormed()).toBe(true);
    expect(cutText('ab😀cd', 4)).toBe('ab😀…');
    expect(cutText('😀', 1).isWellFormed()).toBe(true);
  });
});
