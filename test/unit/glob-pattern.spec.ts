import { describe, expect, it } from '@jest/globals';
import { globToRegExp } from '../../src/workspace/glob-pattern.js';

const matches = (glob: string, path: string) => globToRegExp(glob).test(path);

describe('globToRegExp', () => {
  it.each([
    ['*.ts', 'a.ts', true],
    ['*.ts', 'src/a.ts', false],
    ['src/*', 'src/a.ts', true],
    ['src/*', 'src/x/a.ts', false],
    ['**/*.ts', 'a.ts', true],
    ['**/*.ts', 'src/x/a.ts', true],
    ['src/**/*.ts', 'src/a.ts', true],
    ['src/**/*.ts', 'lib/a.ts', false],
    ['src/**', 'src/x/y/z.md', true],
    ['?.md', 'a.md', true],
    ['?.md', 'ab.md', false],
    ['?.md', '/.md', false],
    ['*.{ts,js}', 'a.js', true],
    ['*.{ts,js}', 'a.css', false],
    ['{a.b,c}', 'a.b', true],
    ['{a.b,c}', 'axb', false],
    // An unclosed brace is no pattern (picomatch matches nothing); escaped, it is a literal brace.
    ['a{b', 'a{b', false],
    ['a\\{b', 'a{b', true],
    ['a.b', 'axb', false],
    ['src/*.[jt]s', 'src/a.ts', true],
    ['src/*.[jt]s', 'src/a.js', true],
    ['src/*.[jt]s', 'src/a.cs', false],
    ['a+b$', 'a+b$', true],
    ['a+b$', 'aab', false],
    ['*', '.env', true],
  ])('%s against %s: %s', (glob, path, expected) => {
    expect(matches(glob, path)).toBe(expected);
  });

  it('is anchored at both ends', () => {
    expect(matches('a.ts', 'xa.ts')).toBe(false);
    expect(matches('a.ts', 'a.tsx')).toBe(false);
  });
});
