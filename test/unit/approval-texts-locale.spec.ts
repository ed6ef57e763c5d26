import { describe, expect, it } from '@jest/globals';
import { approvalRequestResult, questionRequestResult } from '../../src/approvals/approval-texts.js';

const JAPANESE = /[\u3040-\u30ff\u4e00-\u9fff]/u;
const action = { tool: 'run_command', subject: 'npm install', diff: null };
const question = { subject: 'Which one?', options: JSON.stringify(['a', 'b']) };

describe('approval and question texts follow mcp.locale', () => {
  it('ja (the default) is byte-identical to the specified texts', () => {
    expect(approvalRequestResult(action, 's1', 'ja')).toBe(approvalRequestResult(action, 's1'));
    expect(approvalRequestResult(action, 's1')).toBe(
      [
        '承認が必要です。エージェントは次の操作を行おうとしています。',
        'command: npm install',
        '',
        '承認するには同じ session_id (s1) で agent_run を呼び、request に「承認」と指定してください。拒否するには「拒否」と指定してください。それ以外の依頼を送ると、この操作は行われず、その依頼が新しい指示になります。',
        '(Approval needed. Call agent_run with session_id s1 and the request 承認 (approve) or 拒否 (deny); any other request drops the action and becomes the new instruction.)',
      ].join('\n'),
    );
    expect(questionRequestResult(question, 's1')).toBe(
      [
        'エージェントから質問があります。',
        'Which one?',
        '',
        '1. a',
        '2. b',
        '',
        '回答するには同じ session_id (s1) で agent_run を呼び、request に選択肢の番号または文言を指定してください。それ以外の依頼を送ると、その依頼が新しい指示になります。',
        "(The agent asks a question. Call agent_run with session_id s1 and the option's number or text as the request; any other request becomes the new instruction.)",
      ].join('\n'),
    );
  });

  it('en has no Japanese and keeps the action, the session and the options', () => {
    const approval = approvalRequestResult(action, 's1', 'en');
    expect(approval).not.toMatch(JAPANESE);
    expect(approval).toContain('command: npm install');
    expect(approval).toContain('session_id (s1)');
    const asked = questionRequestResult(question, 's1', 'en');
    expect(asked).not.toMatch(JAPANESE);
    expect(asked).toContain('1. a\n2. b');
  });
});
