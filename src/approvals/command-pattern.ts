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

/** One word of a pattern: a literal argument, or `*` for any run of whole arguments (none included). */
type PatternWord = string | typeof ANY;
const ANY = Symbol('any arguments');

/**
 * A pattern is words separated by spaces; `*` stands for any number of whole arguments (none
 * included), never for the rest of a word: `npm test*` reads as `npm test *`, so it allows
 * `npm test --watch` and never `npm testx`, and `git diff*` never allows `git difftool`.
 */
function compilePattern(pattern: string): PatternWord[] {
  return pattern
    .trim()
    .split(/\s+/)
    .flatMap((word) => word.split(/(\*)/).filter((part) => part !== ''))
    .map((part) => (part === '*' ? ANY : part))
    .filter((part, index, all) => !(part === ANY && all[index - 1] === ANY));
}

/** Whether the command's words match the pattern's, `*` spanning whole words. */
function matches(pattern: readonly PatternWord[], words: readonly string[]): boolean {
  // reachable[j]: the pattern so far can match the first j words.
  let reachable = Array.from({ length: words.length + 1 }, (_, index) => index === 0);
  for (const part of pattern) {
    const next = new Array<boolean>(words.length + 1).fill(false);
    for (let j = 0; j <= words.length; j++) {
      if (!reachable[j]) continue;
      if (part === ANY) for (let k = j; k <= words.length; k++) next[k] = true;
      else if (j < words.length && words[j] === part) next[j + 1] = true;
    }
    reachable = next;
  }
  return reachable[words.length];
}

/**
 * Programs whose options or config files can run other programs (`git -c`, `--extcmd`, hooks, aliases;
 * npm scripts and `--script-shell`; `find -exec`; interpreters): allowlisting one with a `*`, or one
 * whose config the agent can edit, allowlists every command. Named at boot as a warning.
 */
const RUNS_OTHER_PROGRAMS = new Set([
  'git',
  'npm',
  'npx',
  'pnpm',
  'yarn',
  'bun',
  'deno',
  'node',
  'python',
  'python3',
  'perl',
  'ruby',
  'php',
  'sh',
  'bash',
  'dash',
  'zsh',
  'env',
  'xargs',
  'find',
  'make',
  'cmake',
  'awk',
  'gawk',
  'sed',
  'tar',
  'rsync',
  'ssh',
  'vim',
  'vi',
  'less',
  'man',
  'docker',
  'kubectl',
  'cargo',
  'go',
  'mvn',
  'gradle',
  'pip',
  'pip3',
  'poetry',
  'uv',
  'jest',
  'vitest',
  'pytest',
  'tox',
  'nox',
  'timeout',
  'nice',
  'nohup',
  'time',
  'watch',
  'sudo',
]);

/** The configured patterns that name a program able to run other programs (see RUNS_OTHER_PROGRAMS). */
export function patternsRunningOtherPrograms(patterns: readonly string[]): string[] {
  return patterns.filter((pattern) => {
    const program = compilePattern(pattern)[0];
    return typeof program === 'string' && RUNS_OTHER_PROGRAMS.has(program.split('/').at(-1)!);
  });
}

/** The allowlist, compiled once at start-up. */
export class CommandAllowlist {
  private readonly patterns: PatternWord[][];

  constructor(patterns: readonly string[]) {
    this.patterns = patterns.map(compilePattern);
  }

  allows(command: string): boolean {
    const words = simpleCommandWords(command);
    if (!words) return false;
    return this.patterns.some((pattern) => matches(pattern, words));
  }
}
