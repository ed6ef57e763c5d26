import type { ApprovalEntity } from '../approvals/approval.entity.js';
import { optionsOf, shownEscaped } from '../approvals/approval-texts.js';
import { approvalOptions, askedMessage } from '../approvals/surface-prompts.js';
import type { PersonLocale } from '../common/person-locale.js';

/**
 * What a paused Task waits for, as the Chat API and A2A show it, in the reader's language: the question
 * or the action to approve (escaped, as every approval text is) and the options its next message may
 * answer with (an option's number or text). The session's next message answers it.
 */
export function inputRequestOf(row: ApprovalEntity, locale: PersonLocale) {
  const question = row.kind === 'question';
  return {
    // A paused Task waits for an approval or a question; a server's form is answered in place only.
    kind: question ? ('question' as const) : ('approval' as const),
    approval_id: row.id,
    message: askedMessage(row, locale),
    options: question ? optionsOf(row).map((option) => shownEscaped(option)) : approvalOptions(locale),
  };
}

export type InputRequest = ReturnType<typeof inputRequestOf>;
