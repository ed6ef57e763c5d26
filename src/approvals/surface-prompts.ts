import type { PersonLocale } from '../common/person-locale.js';
import type { ApprovalEntity } from './approval.entity.js';
import { approvalRequestResult, describeAction, elicitationMessage, optionsOf, questionMessage, questionRequestResult, shownEscaped } from './approval-texts.js';

/**
 * What a person reads when a Task pauses for them, on the surface that accepted it and in its language
 * (issue 36): each surface names its own way to answer. MCP keeps the spec's texts (approval-texts.ts,
 * `mcp.locale`); the Chat API, A2A and the console follow the request's Accept-Language.
 */
export type AnswerSurface = 'mcp' | 'chat' | 'a2a' | 'console';

/** The Task's surface (`tasks.surface`) as the place its person answers; MCP for stdio, HTTP MCP and old Tasks. */
export function answerSurfaceOf(surface: string | null): AnswerSurface {
  return surface === 'chat' ? 'chat' : surface === 'a2a' ? 'a2a' : surface === 'http' ? 'console' : 'mcp';
}

type Described = Pick<ApprovalEntity, 'kind' | 'tool' | 'subject' | 'diff' | 'options'>;

const HOW_TO_APPROVE: Record<Exclude<AnswerSurface, 'mcp'>, Record<PersonLocale, (session: string) => string>> = {
  chat: {
    en: (session) =>
      `To approve, send "approve" as the next message of this conversation (session_id ${session}); to deny, "deny". Any other message drops the action and becomes the new instruction.`,
    ja: (session) =>
      `承認するには、この会話 (session_id ${session}) の次のメッセージとして「承認」を送ってください。拒否するには「拒否」を送ってください。それ以外のメッセージを送ると、この操作は行われず、そのメッセージが新しい指示になります。`,
  },
  // A2A names no id: a client may name its own contextId (a2a-contexts.ts), which the run does not know.
  a2a: {
    en: () => 'To approve, send "approve" as a new message with this Task\'s contextId; to deny, "deny". Any other message drops the action and becomes the new instruction.',
    ja: () =>
      '承認するには、この Task と同じ contextId で「承認」という新しいメッセージを送ってください。拒否するには「拒否」を送ってください。それ以外のメッセージを送ると、この操作は行われず、そのメッセージが新しい指示になります。',
  },
  console: {
    en: () => 'Approve or deny it in the console, on this Task’s page or in its conversation: the Task goes on with your decision.',
    ja: () => 'コンソールのこの Task のページまたは会話で、承認または拒否してください。その判断で Task が続行します。',
  },
};

const HOW_TO_CHOOSE: Record<Exclude<AnswerSurface, 'mcp'>, Record<PersonLocale, (session: string) => string>> = {
  chat: {
    en: (session) => `To answer, send the option's number or text as the next message of this conversation (session_id ${session}); any other message becomes the new instruction.`,
    ja: (session) => `回答するには、この会話 (session_id ${session}) の次のメッセージとして選択肢の番号または文言を送ってください。それ以外のメッセージは新しい指示になります。`,
  },
  a2a: {
    en: () => "To answer, send the option's number or text as a new message with this Task's contextId; any other message becomes the new instruction.",
    ja: () => '回答するには、この Task と同じ contextId で、選択肢の番号または文言を新しいメッセージとして送ってください。それ以外のメッセージは新しい指示になります。',
  },
  console: {
    en: () => 'Choose an option in the console, on this Task’s page or in its conversation.',
    ja: () => 'コンソールのこの Task のページまたは会話で、選択肢を選んでください。',
  },
};

const numbered = (row: Pick<ApprovalEntity, 'options'>) => optionsOf(row).map((option, index) => `${index + 1}. ${shownEscaped(option)}`);

/**
 * The result of a Task that ended to wait for its person: what it asks, and how to answer on its own
 * surface. MCP Tasks (and Tasks older than `tasks.locale`) get the spec's text in `mcp.locale`.
 */
export function pausePrompt(row: Described, task: { sessionId: string; surface: string | null; locale: PersonLocale | null }, mcpLocale: PersonLocale): string {
  const surface = answerSurfaceOf(task.surface);
  const question = row.kind === 'question';
  if (surface === 'mcp') return question ? questionRequestResult(row, task.sessionId, mcpLocale) : approvalRequestResult(row, task.sessionId, mcpLocale);
  const locale = task.locale ?? 'en';
  if (question) {
    const head = locale === 'ja' ? 'エージェントから質問があります。' : 'The agent has a question.';
    return [head, shownEscaped(row.subject, ['\n']), '', ...numbered(row), '', HOW_TO_CHOOSE[surface][locale](task.sessionId)].join('\n');
  }
  const head = locale === 'ja' ? '承認が必要です。エージェントは次の操作を行おうとしています。' : 'Approval needed. The agent wants to do the following.';
  return [head, describeAction(row), '', HOW_TO_APPROVE[surface][locale](task.sessionId)].join('\n');
}

const APPROVE_QUESTION_JA: Record<string, string> = {
  run_command: 'エージェントが次のコマンドを実行しようとしています',
  mcp_tool: 'エージェントが別の MCP サーバーのツールを呼び出そうとしています',
};

/** What a paused Task asks, as the Chat API's `agent_input` and A2A's status message show it, in the reader's language. */
export function askedMessage(row: Described, locale: PersonLocale): string {
  if (row.kind === 'question') return locale === 'ja' ? `エージェントからの質問: ${shownEscaped(row.subject, ['\n'])}\n\n${numbered(row).join('\n')}` : questionMessage(row);
  if (locale === 'en') return elicitationMessage(row);
  return `${APPROVE_QUESTION_JA[row.tool] ?? 'エージェントが次のファイルを変更しようとしています'}。承認しますか?\n\n${describeAction(row)}`;
}

/** The words that answer an approval in the conversation, in the reader's language (conversationAnswer reads both). */
export const approvalOptions = (locale: PersonLocale): string[] => (locale === 'ja' ? ['承認', '拒否'] : ['approve', 'deny']);
