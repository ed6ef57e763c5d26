import type { ApprovalEntity } from '../approvals/approval.entity.js';
import { chosenOption, conversationAnswer, optionsOf } from '../approvals/approval-texts.js';
import { undoRequestOf } from '../history/undo-request.js';

/**
 * A request of the session that waits for the conversation's answer (not one its Task waits for in
 * place: that Task is still running and is answered in place): an action to approve, a question with
 * options, or another server's form (answered on the console or in place, never by a message).
 */
export type ConversationWait = { kind: 'approval' } | { kind: 'question'; options: string[] } | { kind: 'form' };

/** What the intake knows of an input before it decides what the input is (read once, in this order). */
export interface InputFacts {
  /** The person's text. */
  text: string;
  /**
   * Whether the surface asked for a correction (`steer`) and, if so, whether the Task it names takes one
   * now (`running`: planning or running, waiting in place included) or not (`idle`).
   */
  steer: 'none' | 'running' | 'idle';
  /** The correction was asked for explicitly (Chat `agent_steer`): during a wait it is kept, never an answer. */
  keepDuringWait: boolean;
  /** The session's request that waits for the conversation, if any. */
  wait: ConversationWait | null;
  /** With no wait: the request the session's newest turn decided (a second decision word is refused). */
  decidedLast: ConversationWait | null;
  /** Workspace history is on (undo is read at all). */
  undo: boolean;
}

/** What a person's input is: the first rule of INPUT_ORDER that matches. */
export type InputKind =
  | { kind: 'steer' }
  | { kind: 'answer'; answer: 'approve' | 'deny' }
  | { kind: 'choice'; option: string }
  | { kind: 'kept' }
  | { kind: 'already_decided' }
  | { kind: 'undo' }
  | { kind: 'follow_up' }
  | { kind: 'request' };

/**
 * The one order in which the intake decides what an input is, after the accept rules (fork, ownership;
 * the queue limit and quota when it queues). First match wins (docs/agent.md, "What a person's input is"):
 *
 * 1. **steer**: a correction asked for, and its Task runs (a wait in place included): the run takes it at
 *    its next step boundary.
 * 2. **answer**: the session waits for an approval, and the text is a decision word (approve / deny).
 * 3. **choice**: the session waits for a question, and the text is one of its options (number or text).
 * 4. **kept**: an explicit correction while the session waits for a person: it answers nothing, and the
 *    model reads it when the wait ends (with the answer).
 * 5. **already_decided**: nothing waits, and the text is a decision word for the request the newest turn
 *    already decided: refused, nothing queued.
 * 6. **undo**: `undo` alone or with a Task id (history on); an open wait stays open.
 * 7. **follow_up**: a correction asked for, with nothing running to take it: the session's next Task.
 * 8. **request**: a new request; when the session waits, it ends the wait as not approved and the run
 *    goes on with it as the person's new instruction.
 */
export function inputKind(facts: InputFacts): InputKind {
  const { text, steer, wait } = facts;
  if (steer === 'running') return { kind: 'steer' };
  const decided = wait && decisionOf(text, wait);
  if (decided) return decided;
  if (wait && steer === 'idle' && facts.keepDuringWait) return { kind: 'kept' };
  if (!wait && facts.decidedLast && decisionOf(text, facts.decidedLast)) return { kind: 'already_decided' };
  if (facts.undo && undoRequestOf(text)) return { kind: 'undo' };
  return { kind: steer === 'idle' ? 'follow_up' : 'request' };
}

/** The decision a text makes on a request waiting for the conversation, or null (a form takes none by message). */
function decisionOf(text: string, wait: ConversationWait): Extract<InputKind, { kind: 'answer' | 'choice' }> | null {
  if (wait.kind === 'question') {
    const option = chosenOption(text, { options: JSON.stringify(wait.options) });
    return option === null ? null : { kind: 'choice', option };
  }
  if (wait.kind === 'form') return null;
  const answer = conversationAnswer(text);
  return answer === 'instruction' ? null : { kind: 'answer', answer };
}

/**
 * What a pending request waits for, as the order reads it: null for one its Task waits for in place (the
 * Task runs; it is answered there). The row's kind column says which (ADR 0020), never its tool.
 */
export function conversationWaitOf(row: ApprovalEntity): ConversationWait | null {
  if (row.state === 'pending' && row.waiting) return null;
  if (row.kind === 'question') return { kind: 'question', options: optionsOf(row) };
  return row.kind === 'form' ? { kind: 'form' } : { kind: 'approval' };
}
