import { describe, expect, it } from '@jest/globals';
import type { ApprovalEntity } from '../../src/approvals/approval.entity.js';
import { approvalRequestResult, elicitationMessage, waitingLabel } from '../../src/approvals/approval-texts.js';
import { mapApproval } from '../../src/approvals/approval-view.js';

const SNEAKY = 'rm -rf ./* ;#\r\x1b[2Kls -la';

/** Issue 20, finding 7: what a person decides on shows every character that a display would act on. */
describe('approval texts escape control and bidi characters', () => {
  it('shows CR and ESC of a command escaped in the elicitation, the conversation request, the status label and the admin view', () => {
    const approval = { kind: 'approval' as const, tool: 'run_command', subject: SNEAKY, diff: null };
    const shown = 'rm -rf ./* ;#\\r\\x1b[2Kls -la';
    expect(elicitationMessage(approval)).toBe(`The agent wants to run this command. Approve?\n\ncommand: ${shown}`);
    expect(approvalRequestResult(approval, 's')).toContain(`command: ${shown}\n`);
    expect(waitingLabel(approval)).toBe(`approval: run_command ${shown}`);
    expect(mapApproval({ ...approval, id: 'a', taskId: 't', sessionId: 's' } as ApprovalEntity)).toMatchObject({ command: shown });
  });

  it('shows bidi, zero-width and C1 controls escaped, in paths and diffs too, keeping a diff’s line breaks and tabs', () => {
    const approval = { kind: 'approval' as const, tool: 'write_file', subject: 'report\u202Etxt.exe', diff: '--- a\n+++ b\n+\tok\u2066hidden\u2069\r\n+x\u200b\u0085' };
    const text = elicitationMessage(approval);
    expect(text).toBe('The agent wants to change this file. Approve?\n\nfile: report\\u202etxt.exe (write_file)\n--- a\n+++ b\n+\tok\\u2066hidden\\u2069\\r\n+x\\u200b\\x85');
    expect(text).not.toMatch(/[\r\u202e\u2066\u2069\u200b\u0085]/);
    expect(mapApproval({ ...approval, id: 'a', taskId: 't', sessionId: 's', diffSha256: 'h' } as ApprovalEntity)).toMatchObject({
      path: 'report\\u202etxt.exe',
      diff: '--- a\n+++ b\n+\tok\\u2066hidden\\u2069\\r\n+x\\u200b\\x85',
    });
  });

  it('leaves ordinary text, Japanese included, as it is', () => {
    expect(elicitationMessage({ tool: 'run_command', subject: 'echo "こんにちは" | wc -c', diff: null })).toBe(
      'The agent wants to run this command. Approve?\n\ncommand: echo "こんにちは" | wc -c',
    );
  });
});

describe('ask_user questions are shown escaped too', () => {
  it('escapes the question and its options in the form message and the conversation request, keeping line breaks of the question', async () => {
    const { questionMessage, questionRequestResult } = await import('../../src/approvals/approval-texts.js');
    const question = { subject: 'Which file?\nPick one\r\x1b[2K', options: JSON.stringify(['a.txt', 'b\u202Etxt.exe']) };
    expect(questionMessage(question)).toBe('The agent asks: Which file?\nPick one\\r\\x1b[2K\n\n1. a.txt\n2. b\\u202etxt.exe');
    expect(questionRequestResult(question, 's')).toContain('Which file?\nPick one\\r\\x1b[2K\n\n1. a.txt\n2. b\\u202etxt.exe\n');
  });
});
