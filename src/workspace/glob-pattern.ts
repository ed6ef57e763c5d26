/** Converts a glob (`*`, `**`, `?`, `{a,b}`) to an anchored RegExp over `/`-separated relative paths. */
export function globToRegExp(glob: string): RegExp {
  let source = '';
  for (let i = 0; i < glob.length; i++) {
    const char = glob[i];
    if (char === '*' && glob[i + 1] === '*') {
      // `**/` matches zero or more directories; a trailing `**` matches everything below.
      source += glob[i + 2] === '/' ? '(?:.*/)?' : '.*';
      i += glob[i + 2] === '/' ? 2 : 1;
    } else if (char === '*') source += '[^/]*';
    else if (char === '?') source += '[^/]';
    else if (char === '{') {
      const end = glob.indexOf('}', i);
      if (end === -1) source += '\\{';
      else {
        source += `(?:${glob.slice(i + 1, end).split(',').map(escape).join('|')})`;
        i = end;
      }
    } else source += escape(char);
  }
  return new RegExp(`^${source}$`);
}

const escape = (text: string) => text.replace(/[.+^${}()|[\]\\]/g, '\\$&');
