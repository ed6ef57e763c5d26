import { describe, expect, it } from '@jest/globals';
import { decisionRequest } from '../../src/approvals/approval-texts.js';
import { answerSurfaceOf, approvalOptions, askedMessage, pausePrompt } from '../../src/approvals/surface-prompts.js';
import { personLocale } from '../../src/common/person-locale.js';
import type { TaskStepEntity } from '../../src/agent/task-step.entity.js';
import { mapTraceStep } from '../../src/conversation/agent-steps.js';

const command = { kind: 'approval' as const, tool: 'run_command', subject: 'npm test', diff: null, options: null };
const question = { kind: 'question' as const, tool: 'ask_user', subject: 'Which colour?', diff: null, options: JSON.stringify(['red', 'blue']) };
const session = '11111111-2222-4333-8444-555555555555';

describe('Accept-Language: ja or en, English otherwise (issue 36)', () => {
  it.each([
    [undefined, 'en'],
    ['ja', 'ja'],
    ['ja-JP', 'ja'],
    ['ja-JP,en;q=0.5', 'ja'],
    ['en-US,ja;q=0.9', 'en'],
    ['en;q=0.4, ja;q=0.9', 'ja'],
    ['fr, de', 'en'],
    ['*', 'en'],
    ['ja;q=0', 'en'],
    ['garbage;;;q=', 'en'],
  ])('%s → %s', (header, expected) => {
    expect(personLocale({ headers: header === undefined ? {} : { 'accept-language': header } })).toBe(expected);
  });
});

describe('a paused Task’s prompt names its own surface’s way to answer', () => {
  it('MCP (and Tasks older than the surface column) keep the spec’s agent_run text in mcp.locale', () => {
    for (const surface of ['mcp-http', 'stdio', null]) {
      expect(answerSurfaceOf(surface)).toBe('mcp');
      expect(pausePrompt(command, { sessionId: session, surface, locale: 'en' }, 'ja')).toContain(`同じ session_id (${session}) で agent_run を呼び`);
    }
    expect(pausePrompt(question, { sessionId: session, surface: 'stdio', locale: null }, 'en')).toContain('call agent_run');
  });

  it.each([
    ['chat', 'en', `send "approve" as the next message of this conversation (session_id ${session})`],
    ['chat', 'ja', `この会話 (session_id ${session}) の次のメッセージとして「承認」を送ってください`],
    ['a2a', 'en', 'send "approve" as a new message with this Task\'s contextId'],
    ['a2a', 'ja', 'この Task と同じ contextId で「承認」という新しいメッセージを送ってください'],
    ['http', 'en', 'Approve or deny it in the console'],
    ['http', 'ja', 'コンソールのこの Task のページまたは会話で、承認または拒否してください'],
  ] as const)('%s in %s: an approval', (surface, locale, how) => {
    const text = pausePrompt(command, { sessionId: session, surface, locale }, 'ja');
    expect(text).toContain(how);
    expect(text).toContain('command: npm test');
    expect(text).not.toContain('agent_run');
  });

  it('a question lists its options and says how to choose; no locale stored reads as English', () => {
    const text = pausePrompt(question, { sessionId: session, surface: 'chat', locale: null }, 'ja');
    expect(text).toBe(
      [
        'The agent has a question.',
        'Which colour?',
        '',
        '1. red',
        '2. blue',
        '',
        `To answer, send the option's number or text as the next message of this conversation (session_id ${session}); any other message becomes the new instruction.`,
      ].join('\n'),
    );
  });

  it('agent_input and A2A’s message in the reader’s language, with options a message may answer with', () => {
    expect(askedMessage(command, 'en')).toBe('The agent wants to run this command. Approve?\n\ncommand: npm test');
    expect(askedMessage(command, 'ja')).toBe('エージェントが次のコマンドを実行しようとしています。承認しますか?\n\ncommand: npm test');
    expect(askedMessage({ ...command, tool: 'write_file', subject: 'a.js', diff: '+x' }, 'ja')).toContain('エージェントが次のファイルを変更しようとしています。承認しますか?');
    expect(askedMessage(question, 'ja')).toBe('エージェントからの質問: Which colour?\n\n1. red\n2. blue');
    expect([approvalOptions('en'), approvalOptions('ja')]).toEqual([
      ['approve', 'deny'],
      ['承認', '拒否'],
    ]);
  });
});

describe('the request of a Task that carries a decision: a note for people', () => {
  it('names the decision and the action, escaped, on one bounded line', () => {
    expect(decisionRequest(command, 'approve')).toBe('Approved: $ npm test');
    expect(decisionRequest({ tool: 'write_file', subject: 'src/a.js' }, 'deny')).toBe('Denied: write_file src/a.js');
    expect(decisionRequest(question, 'choose', 'blue')).toBe('Answered the agent\'s question "Which colour?": blue');
    const hostile = decisionRequest({ tool: 'run_command', subject: `rm -rf /\u202e\n${'x'.repeat(2000)}` }, 'approve');
    expect(hostile).not.toMatch(/[\u202e\n]/);
    expect(hostile.length).toBeLessThanOrEqual(500);
  });
});

describe('a file step as the Chat API and A2A show it', () => {
  const step = (detail: Record<string, unknown>) =>
    ({
      seq: 1,
      taskId: 't',
      subtask: 'undo',
      kind: 'file_op',
      name: 'undo',
      outcome: 'ok',
      inputTokens: 0,
      outputTokens: 0,
      durationMs: 3,
      startedAt: '2026-12-06T00:00:00.000Z',
      detail: JSON.stringify(detail),
    }) as TaskStepEntity;

  it('carries a size only where the step measured one (an undo restores a path and measures none)', () => {
    expect(mapTraceStep(step({ path: 'calc.js', undoOf: 'x' }))).not.toHaveProperty('bytes');
    expect(mapTraceStep(step({ path: 'calc.js', bytes: 53, created: true }))).toMatchObject({ path: 'calc.js', bytes: 53, created: true });
  });
});
