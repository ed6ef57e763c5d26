// An esbuild plugin for scripts/bundle.mjs: escapes the non-ASCII characters of regular expression literals, the
// one place where esbuild's default `charset: 'ascii'` leaves them (validator's locale tables, a few of our own
// answer words), so that the bundles are ASCII throughout. run-bundle.ts then reads a bundle as Latin-1 into a
// one-byte string instead of decoding UTF-8 into a two-byte one (docs/adr/0019-minified-bundles.md, "Later").
import { tokenizer, tokTypes } from 'acorn';
import { readFileSync } from 'node:fs';

const NON_ASCII = /[^\x00-\x7f]/;

/**
 * `source` with each non-ASCII UTF-16 unit inside a regular expression literal written as `\uXXXX`. The pattern
 * means the same: without the u or v flag a `\uXXXX` is that code unit, as the character was; with them a pair of
 * surrogate escapes is one code point, as the pair was; an identity escape of the character (`\é`) becomes the
 * `\uXXXX` alone. Everything outside the literals is left as it is. null when the file does not tokenize (it is then
 * bundled as it is, and the bundle read as UTF-8).
 */
export function escapeRegExpLiterals(source) {
  const literals = regExpLiterals(source);
  if (!literals) return null;
  let out = '';
  let done = 0;
  for (const { start, end } of literals) {
    const text = source.slice(start, end);
    if (!NON_ASCII.test(text)) continue;
    out += source.slice(done, start) + escapeUnits(text);
    done = end;
  }
  return out + source.slice(done);
}

function regExpLiterals(source) {
  for (const sourceType of ['module', 'script']) {
    try {
      const options = { ecmaVersion: 'latest', sourceType, allowHashBang: true, allowReturnOutsideFunction: true, allowAwaitOutsideFunction: true };
      return [...tokenizer(source, options)].filter((token) => token.type === tokTypes.regexp);
    } catch {
      // a CommonJS file that is not valid as a module (a `with`, a legacy octal escape): try it as a script
    }
  }
  return null;
}

function escapeUnits(text) {
  let out = '';
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    if (unit < 0x80) {
      out += text[i];
      continue;
    }
    // An odd run of backslashes before it escapes this character: the `\uXXXX` takes the backslash's place.
    let backslashes = 0;
    for (let before = i - 1; before >= 0 && text[before] === '\\'; before--) backslashes++;
    if (backslashes % 2 === 1) out = out.slice(0, -1);
    out += `\\u${unit.toString(16).padStart(4, '0')}`;
  }
  return out;
}

/** The plugin: only files with a non-ASCII character are tokenized, and only those with such a literal are changed. */
export const asciiRegExps = {
  name: 'ascii-regexps',
  setup(build) {
    build.onLoad({ filter: /\.[cm]?js$/ }, ({ path }) => {
      const source = readFileSync(path, 'utf8');
      if (!NON_ASCII.test(source)) return undefined;
      const escaped = escapeRegExpLiterals(source);
      return escaped === null || escaped === source ? undefined : { contents: escaped, loader: 'js' };
    });
  },
};
