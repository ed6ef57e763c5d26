import type { AppConfig } from '../config/app-config.js';
import type { ApprovalEntity } from './approval.entity.js';
import type { FormSchema } from './person-form.js';
import { shownDiff, shownEscaped } from '../common/shown-text.js';

export { shownDiff, shownEscaped } from '../common/shown-text.js';

/** What the next request of a session means for its pending action (trimmed, any case). */
export type ConversationAnswer = 'approve' | 'deny' | 'instruction';

const APPROVE_WORDS = new Set(['承認', 'はい', 'approve', 'yes']);
const DENY_WORDS = new Set(['拒否', 'いいえ', 'deny', 'no']);

export function conversationAnswer(request: string): ConversationAnswer {
  const word = request.trim().toLowerCase();
  if (APPROVE_WORDS.has(word)) return 'approve';
  if (DENY_WORDS.has(word)) return 'deny';
  return 'instruction';
}

/** `mcp.locale`: the texts a person reads come in the spec's Japanese (`ja`) or in English. */
type Locale = AppConfig['mcp']['locale'];

type Described = Pick<ApprovalEntity, 'tool' | 'subject' | 'diff'>;

const CURRENT_TASK_CHARS = 200;

/** agent_status `current_task` while a Task waits in place: `approval: run_command npm install`. */
export function waitingLabel(approval: Pick<ApprovalEntity, 'kind' | 'tool' | 'subject'> & { form?: ApprovalEntity['form'] }): string {
  const what = approval.kind === 'question' ? 'question:' : approval.kind === 'form' ? `question from MCP server ${formOf(approval).server}:` : `approval: ${approval.tool}`;
  const label = `${what} ${shownEscaped(approval.subject.replace(/[ \t\n]+/g, ' '))}`;
  return label.length > CURRENT_TASK_CHARS ? `${label.slice(0, CURRENT_TASK_CHARS - 1)}…` : label;
}

/** The exact action: the command, or the path and the bounded diff, with nothing a display would hide. */
export function describeAction(approval: Described): string {
  if (approval.tool === 'run_command') return `command: ${shownEscaped(approval.subject)}`;
  if (approval.tool === 'mcp_tool') return `MCP tool: ${shownEscaped(approval.subject)}`;
  return `file: ${shownEscaped(approval.subject)} (${approval.tool})\n${shownDiff(approval.diff ?? '')}`;
}

/** The form message of the in-place request (Tasks extension `inputRequests`). */
export function elicitationMessage(approval: Described): string {
  const what =
    approval.tool === 'run_command'
      ? 'The agent wants to run this command'
      : approval.tool === 'mcp_tool'
        ? "The agent wants to call another MCP server's tool"
        : 'The agent wants to change this file';
  return `${what}. Approve?\n\n${describeAction(approval)}`;
}

/** The flat form schema: a required yes/no and an optional reason. */
export const APPROVAL_FORM_SCHEMA = {
  type: 'object',
  properties: {
    approve: { type: 'boolean', title: 'Approve', description: 'Allow the agent to do exactly this' },
    reason: { type: 'string', title: 'Reason', description: 'Optional; the agent is told', maxLength: 1000 },
  },
  required: ['approve'],
} as const;

/** The result of a Task that ended to wait for an answer in the conversation (`mcp.locale`; `ja` is the spec's text). */
export function approvalRequestResult(approval: Described, sessionId: string, locale: Locale = 'ja'): string {
  if (locale === 'en') {
    return [
      'Approval needed. The agent wants to do the following.',
      describeAction(approval),
      '',
      `To approve, call agent_run with the same session_id (${sessionId}) and the request "approve"; to deny, "deny". Any other request drops the action and becomes the new instruction.`,
    ].join('\n');
  }
  return [
    '承認が必要です。エージェントは次の操作を行おうとしています。',
    describeAction(approval),
    '',
    `承認するには同じ session_id (${sessionId}) で agent_run を呼び、request に「承認」と指定してください。拒否するには「拒否」と指定してください。それ以外の依頼を送ると、この操作は行われず、その依頼が新しい指示になります。`,
    `(Approval needed. Call agent_run with session_id ${sessionId} and the request 承認 (approve) or 拒否 (deny); any other request drops the action and becomes the new instruction.)`,
  ].join('\n');
}

/** What the model sees as the tool result when the person refused. */
export const refusedOutput = (reason: string | null) =>
  `Not run: the person refused this action${reason ? ` (reason: ${reason})` : ''}. Do not try it again; continue without it, or explain what you need.`;

export const NOT_APPROVED_OUTPUT = 'Not run: the person did not approve this action and gave a new instruction instead (next message).';

export const SKIPPED_OUTPUT = 'Not run: an earlier call of this turn waited for approval. Call it again if you still need it.';

export const CHANGED_SINCE_OUTPUT =
  'Not applied: the file changed after the person saw the diff, so the approval does not cover it. Read the file again and propose the change anew.';

/** The tool whose calls are questions with choices, not actions to approve. */
export const QUESTION_TOOL = 'ask_user';

type Question = Pick<ApprovalEntity, 'subject' | 'options'>;

export const optionsOf = (question: Pick<ApprovalEntity, 'options'>): string[] => (question.options ? (JSON.parse(question.options) as string[]) : []);

/** The form of an in-place question: one required choice among the options. */
export function questionFormSchema(question: Question) {
  return {
    type: 'object',
    properties: { choice: { type: 'string', title: 'Answer', description: shownEscaped(question.subject, ['\n']), enum: optionsOf(question) } },
    required: ['choice'],
  } as const;
}

const numbered = (question: Question) => optionsOf(question).map((option, index) => `${index + 1}. ${shownEscaped(option)}`);

/** The form message of an in-place question; the model's text shown as every approval text is (escaped). */
export function questionMessage(question: Question): string {
  return `The agent asks: ${shownEscaped(question.subject, ['\n'])}\n\n${numbered(question).join('\n')}`;
}

/**
 * The option a request of the session chooses: its number (1-based) or its text (trimmed, any case);
 * null when it is neither (it is then a new instruction).
 */
export function chosenOption(request: string, question: Pick<ApprovalEntity, 'options'>): string | null {
  const options = optionsOf(question);
  const answer = request.trim();
  if (/^\d+$/.test(answer)) return options[Number(answer) - 1] ?? null;
  return options.find((option) => option.trim().toLowerCase() === answer.toLowerCase()) ?? null;
}

/** The result of a Task that ended with a question for the conversation (`mcp.locale`; `ja` is the spec's text). */
export function questionRequestResult(question: Question, sessionId: string, locale: Locale = 'ja'): string {
  const answer =
    locale === 'en'
      ? [`To answer, call agent_run with the same session_id (${sessionId}) and the option's number or text as the request; any other request becomes the new instruction.`]
      : [
          `回答するには同じ session_id (${sessionId}) で agent_run を呼び、request に選択肢の番号または文言を指定してください。それ以外の依頼を送ると、その依頼が新しい指示になります。`,
          `(The agent asks a question. Call agent_run with session_id ${sessionId} and the option's number or text as the request; any other request becomes the new instruction.)`,
        ];
  return [
    locale === 'en' ? 'The agent has a question.' : 'エージェントから質問があります。',
    shownEscaped(question.subject, ['\n']),
    '',
    ...numbered(question),
    '',
    ...answer,
  ].join('\n');
}

/** The kind of request that is another MCP server's form for the person (elicitation), answered in place only. */
export const ELICITATION_TOOL = 'mcp_elicitation';

/** The `form` of an elicitation request: the server, its tool being called, and the form's schema. */
export interface StoredForm {
  server: string;
  tool: string;
  schema: FormSchema;
}

export const formOf = (row: { form?: ApprovalEntity['form'] }): StoredForm => JSON.parse(row.form ?? 'null') as StoredForm;

/**
 * The message of another server's form: who asks (the server and its tool, as configured and listed),
 * that the answer goes to that server, then its own message, escaped (a server may try to pass for this
 * service or for the person's own admin: it is always named first).
 */
export function formMessage(row: Pick<ApprovalEntity, 'subject' | 'form'>, locale: Locale = 'ja'): string {
  const { server, tool } = formOf(row);
  const asked = shownEscaped(row.subject, ['\n']);
  if (locale === 'en') {
    return `The MCP server "${server}" asks you this while the agent calls its tool ${shownEscaped(tool)}. Your answer goes to that server; decline if you did not expect it.\n\n${asked}`;
  }
  return [
    `MCP サーバー「${server}」が、エージェントによるツール ${shownEscaped(tool)} の呼び出し中に次の入力を求めています。回答はそのサーバーに送られます。心当たりがなければ辞退してください。`,
    `(The MCP server "${server}" asks you this while the agent calls its tool ${shownEscaped(tool)}. Your answer goes to that server; decline if you did not expect it.)`,
    '',
    asked,
  ].join('\n');
}

/** What the model sees as ask_user's result. */
export const chosenOutput = (choice: string) => `The user chose: ${choice}`;

export const DECLINED_QUESTION_OUTPUT = 'The user did not answer the question. Continue with what you know, or explain what you need.';

export const QUESTION_DROPPED_OUTPUT = 'The user did not choose an option and gave a new instruction instead (next message).';

const DECISION_REQUEST_CHARS = 500;

/**
 * The request of the Task that carries a person's decision made in the console: a note for people, in
 * the Task list and the conversation's history. The run never reads it as an answer (the decision is
 * the approval's own state); what the model chose to show is escaped as every approval text is.
 */
export function decisionRequest(row: Pick<ApprovalEntity, 'tool' | 'subject'>, decision: 'approve' | 'deny' | 'choose', choice = ''): string {
  const action = row.tool === 'run_command' ? `$ ${row.subject}` : row.tool === 'mcp_tool' ? `MCP tool ${row.subject}` : `${row.tool} ${row.subject}`;
  const text = decision === 'choose' ? `Answered the agent's question "${row.subject}": ${choice}` : `${decision === 'approve' ? 'Approved' : 'Denied'}: ${action}`;
  const shown = shownEscaped(text.replace(/[ \t\n]+/g, ' '));
  return shown.length > DECISION_REQUEST_CHARS ? `${shown.slice(0, DECISION_REQUEST_CHARS - 1)}…` : shown;
}
