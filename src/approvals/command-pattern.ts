/**
 * The allowlist of `agent.approvals.allow`: a command runs without asking only when it is one simple
 * command (what `sh -c` would run as a single program with its arguments) whose words match a pattern.
 * Anything the shell could turn into more than that asks: `;`, `&&`, `||`, pipes, redirections,
 * `$(...)`, backticks, `$VAR`, backgrounding, subshells, comments, newlines, and unquoted glob
 * characters (they expand to file names the pattern never saw). Quoted text is one literal word, so
 * `grep "a|b" f` is simple while `npm test && curl evil` is not.
 */

/** Characters that end a simple command or start shell syntax when they appear unquoted. */
const UNQUOTED_SYNTAX = new Set([';', '&', '|', '<', '>', '(', ')', '`', '$', '{', '}']);
const GLOB = new Set(['*', '?', '[']);

/** The words of `command` if it is one simple command, else null. */
export function simpleCommandWords(command: string): string[] | null {
  // Control characters (newlines included) are refused outright; tabs separate words like spaces.
  if (/[\x00-\x08\x0a-\x1f\x7f]/.test(command)) return null;
  const words: string[] = [];
  let word = '';
  let inWord = false;
  for (let i = 0; i < command.length; i++) {
    const c = command[i];
    if (c === ' ' || c === '\t') {
      if (inWord) words.push(word);
      word = '';
      inWord = false;
      continue;
    }
    if (c === "'") {
      const end = command.indexOf("'", i + 1);
      if (end === -1) return null;
      word += command.slice(i + 1, end);
      i = end;
    } else if (c === '"') {
      let end = i + 1;
      for (; end < command.length && command[end] !== '"'; end++) {
        const inner = command[end];
        if (inner === '$' || inner === '`') return null;
        if (inner === '\\') {
          const next = command[end + 1];
          if (next === undefined) return null;
          word += '$`"\\'.includes(next) ? next : `\\${next}`;
          end++;
        } else {
          word += inner;
        }
      }
      if (end >= command.length) return null;
      i = end;
    } else if (c === '\\') {
      if (i + 1 >= command.length) return null;
      word += command[++i];
    } else if (UNQUOTED_SYNTAX.has(c) || GLOB.has(c) || (c === '#' && !inWord)) {
      return null;
    } else {
      word += c;
    }
    inWord = true;
  }
  if (inWord) words.push(word);
  return words.length > 0 ? words : null;
}

/**
 * A pattern is words separated by spaces, where `*` matches any run of characters (spaces included)
 * and everything else is literal; a trailing ` *` also matches nothing (`ls *` allows a bare `ls`).
 */
function compilePattern(pattern: string): RegExp {
  const trimmed = pattern.trim().replace(/\s+/g, ' ');
  const optionalRest = trimmed.endsWith(' *');
  const body = optionalRest ? trimmed.slice(0, -2) : trimmed;
  const source = body
    .split('*')
    .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
    .join('.*');
  return new RegExp(`^${source}${optionalRest ? '(?: .*)?' : ''}$`, 's');
}

/** The allowlist, compiled once at start-up. */
export class CommandAllowlist {
  private readonly patterns: RegExp[];

  constructor(patterns: readonly string[]) {
    this.patterns = patterns.map(compilePattern);
  }

  allows(command: string): boolean {
    const words = simpleCommandWords(command);
    if (!words) return false;
    const canonical = words.join(' ');
    return this.patterns.some((pattern) => pattern.test(canonical));
  }
}
