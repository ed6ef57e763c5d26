import type { ApprovalEntity } from '../approvals/approval.entity.js';
import { elicitationMessage, optionsOf, QUESTION_TOOL, questionMessage, shownEscaped } from '../approvals/approval-texts.js';

/** The words that answer an approval in the conversation (approval-texts' conversationAnswer reads them). */
const APPROVAL_OPTIONS = ['承認', '拒否'];

/**
 * What a paused Task waits for, as the Chat API and A2A show it: the question or the action to
 * approve (escaped, as every approval text is) and the options its next message may answer with (an
 * option's number or text). The session's next message answers it.
 */
export function inputRequestOf(row: ApprovalEntity) {
  const question = row.tool === QUESTION_TOOL;
  return {
    kind: question ? ('question' as const) : ('approval' as const),
    approval_id: row.id,
    message: question ? questionMessage(row) : elicitationMessage(row),
    options: question ? optionsOf(row).map((option) => shownEscaped(option)) : APPROVAL_OPTIONS,
  };
}

export type InputRequest = ReturnType<typeof inputRequestOf>;
