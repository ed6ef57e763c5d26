import { describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { runInNewContext } from 'node:vm';
import { escapeRegExpLiterals } from '../../scripts/ascii-regexps.mjs';

const NON_ASCII = /[^\x00-\x7f]/;

/** The regular expressions a CommonJS source exports, evaluated on its own. */
function exported(source: string): Record<string, unknown> {
  const module = { exports: {} as Record<string, unknown> };
  runInNewContext(source, { module, exports: module.exports, require: createRequire(import.meta.url) });
  return module.exports;
}

function regExpsIn(value: unknown, found: RegExp[] = []): RegExp[] {
  if (value instanceof RegExp || Object.prototype.toString.call(value) === '[object RegExp]') found.push(value as RegExp);
  else if (value && typeof value === 'object') for (const inner of Object.values(value)) regExpsIn(inner, found);
  return found;
}

/** Both sources' regular expressions, pair by pair, agree on every probe (same flags, same matches), and the escaped ones are ASCII. */
function expectSameRegExps(original: string, escaped: string, probes: string[]): number {
  const before = regExpsIn(exported(original));
  const after = regExpsIn(exported(escaped));
  expect(after).toHaveLength(before.length);
  before.forEach((regExp, i) => {
    expect(after[i].flags).toBe(regExp.flags);
    expect(NON_ASCII.test(after[i].source)).toBe(false);
    const matches = (tested: RegExp) => probes.filter((probe) => tested.test(probe));
    expect([after[i].source, matches(after[i])]).toEqual([after[i].source, matches(regExp)]);
  });
  return before.length;
}

describe('escapeRegExpLiterals: the bundles are ASCII, their regular expressions unchanged in meaning', () => {
  it('escapes non-ASCII units in regular expression literals only, keeping ranges, flags, identity escapes and surrogate pairs', () => {
    const original = [
      '// a comment with é stays',
      "const word = 'café';",
      'const a = 6, b = 3, c = 2; const ratio = a / b / c;',
      'module.exports = {',
      '  word, ratio, template: `é`,',
      '  range: /^[A-ZÀ-ÿ]+$/i,',
      '  astral: /😀+/,',
      '  astralUnicode: /^😀+$/u,',
      '  astralClassUnicode: /^[😀-😂]$/u,',
      '  identity: /\\é/,',
      '  backslashThenChar: /\\\\é/,',
      '  words: /^(承認|はい|approve)$/i,',
      '};',
    ].join('\n');
    const escaped = escapeRegExpLiterals(original)!;
    expect(escaped).toContain('// a comment with é stays');
    expect(escaped).toContain("const word = 'café';");
    expect(escaped).toContain('template: `é`');
    expect(escaped).toContain('/^(\\u627f\\u8a8d|\\u306f\\u3044|approve)$/i');
    expect(escaped).toContain('identity: /\\u00e9/');
    expect(escaped).toContain('backslashThenChar: /\\\\\\u00e9/');
    for (const line of escaped.split('\n').filter((text) => /: \//.test(text))) expect(NON_ASCII.test(line)).toBe(false);
    expect(exported(escaped)).toMatchObject({ word: 'café', ratio: 1, template: 'é' });
    const probes = ['É', 'ÀÿZ', 'é', '\\é', '😀', '😀😀', '\uD83D', '😁', '😃', '承認', 'はい', 'APPROVE', 'x'];
    expect(expectSameRegExps(original, escaped, probes)).toBe(7);
  });

  it("keeps every locale table of validator's alpha.js (the bundles' largest non-ASCII literals) the same", () => {
    const require = createRequire(import.meta.url);
    const original = readFileSync(require.resolve('validator/lib/alpha.js'), 'utf8');
    const escaped = escapeRegExpLiterals(original)!;
    // Every character the tables name, alone and in a word, and some ASCII.
    const characters = [...new Set([...original].filter((character) => NON_ASCII.test(character)))];
    const probes = [...characters, characters.join(''), 'abc', 'ABC 123', '', ...characters.map((character) => `A${character}1`)];
    expect(expectSameRegExps(original, escaped, probes)).toBeGreaterThan(80);
  });

  it('returns null for a file that does not tokenize, which is then bundled as it is', () => {
    expect(escapeRegExpLiterals('const x = /é/; const = ;\n"unterminated')).toBeNull();
  });
});
