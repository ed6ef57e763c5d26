import { describe, expect, it } from '@jest/globals';
import { inputKind, type ConversationWait, type InputFacts } from '../../src/conversation/input-order.js';

/** ADR 0020 §4 / docs/agent.md: what a person's input is, decided in one order (no server). */
const approval: ConversationWait = { kind: 'approval' };
const question: ConversationWait = { kind: 'question', options: ['keep both', 'undo', 'delete'] };
const form: ConversationWait = { kind: 'form' };
const facts = (text: string, more: Partial<InputFacts> = {}): InputFacts => ({ text, steer: 'none', keepDuringWait: false, wait: null, decidedLast: null, undo: true, ...more });

const table: [string, InputFacts, ReturnType<typeof inputKind>][] = [
  // Nothing waits: undo, or a new request.
  ['a new request', facts('fix the test'), { kind: 'request' }],
  ['"yes" with no pending wait and nothing decided: a request', facts('yes'), { kind: 'request' }],
  ['"yes" with no wait, the newest turn decided already: refused', facts('yes', { decidedLast: approval }), { kind: 'already_decided' }],
  ['an option again after the question was answered: refused', facts('2', { decidedLast: question }), { kind: 'already_decided' }],
  ['a new instruction after a decision: a request', facts('now run the linter', { decidedLast: approval }), { kind: 'request' }],
  ['undo', facts('undo'), { kind: 'undo' }],
  ['undo with history off: a request', facts('undo', { undo: false }), { kind: 'request' }],
  ['"undo the last refactoring": a request, not undo', facts('undo the last refactoring'), { kind: 'request' }],
  // An approval waits for the conversation.
  ['"approve" while an approval waits', facts(' Approve ', { wait: approval }), { kind: 'answer', answer: 'approve' }],
  ['"いいえ" while an approval waits', facts('いいえ', { wait: approval }), { kind: 'answer', answer: 'deny' }],
  ['"undo" while an approval waits: undo, the wait stays open', facts('undo', { wait: approval }), { kind: 'undo' }],
  ['an instruction while an approval waits: a request (ends the wait, not approved)', facts('use pnpm instead', { wait: approval }), { kind: 'request' }],
  // A question waits.
  ['an option by number', facts('3', { wait: question }), { kind: 'choice', option: 'delete' }],
  ['an option by text', facts('Keep Both', { wait: question }), { kind: 'choice', option: 'keep both' }],
  ['"undo" when "undo" is an option: the choice (choice before undo)', facts('undo', { wait: question }), { kind: 'choice', option: 'undo' }],
  ['"yes" while a question waits: not an option, a request', facts('yes', { wait: question }), { kind: 'request' }],
  ['a number out of range: a request', facts('7', { wait: question }), { kind: 'request' }],
  // Another server's form is answered on the console or in place, never by a message.
  ['"approve" while a form waits: a request', facts('approve', { wait: form }), { kind: 'request' }],
  // Corrections.
  ['a correction for a running Task', facts('the other file', { steer: 'running' }), { kind: 'steer' }],
  ['"approve" as a correction for a running Task: a correction (its wait, if any, is in place)', facts('approve', { steer: 'running' }), { kind: 'steer' }],
  ['a correction with nothing running: a follow-up', facts('the other file', { steer: 'idle' }), { kind: 'follow_up' }],
  ['"undo" as a correction with nothing running: undo', facts('undo', { steer: 'idle' }), { kind: 'undo' }],
  ['an explicit correction while an approval waits: kept, answers nothing', facts('the other file', { steer: 'idle', keepDuringWait: true, wait: approval }), { kind: 'kept' }],
  ['an explicit "approve" while an approval waits: the answer', facts('approve', { steer: 'idle', keepDuringWait: true, wait: approval }), { kind: 'answer', answer: 'approve' }],
  ['an explicit option while a question waits: the choice', facts('1', { steer: 'idle', keepDuringWait: true, wait: question }), { kind: 'choice', option: 'keep both' }],
  [
    'a message to a paused Task (A2A input-required, MCP agent_run): the new instruction that ends the wait',
    facts('the other file', { steer: 'idle', wait: approval }),
    { kind: 'follow_up' },
  ],
];

describe('what a person’s input is (one order, first match wins)', () => {
  it.each(table)('%s', (_name, input, expected) => {
    expect(inputKind(input)).toEqual(expected);
  });
});
