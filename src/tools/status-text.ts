import type { TaskStatus } from '../queue/task-status.js';

/** What agent_status (and the final Tasks result) reports about one Task: the spec §3.4 fields. */
export interface TaskView {
  taskId: string;
  sessionId: string;
  status: TaskStatus;
  completedSubtasks: number;
  totalSubtasks: number;
  currentTask: string;
  inputTokens: number;
  outputTokens: number;
  criticalPathTokens: number;
  result: string | null;
  /** Issue 35: the limit that ended the Task's tool work, named in `message` once it completed. */
  stoppedBy?: string | null;
  /** Issue 35: corrections that arrived while it ran, said in `message` while it runs. */
  steerCount?: number;
  /** The answer written so far while the Task runs (issue 23): shown as `result` with WRITING_MESSAGE. */
  answerDraft?: string;
  createdAt: string;
  updatedAt: string;
}

/** `mcp.locale`: `ja`, the specified texts (the default), or `en` for teams that do not read Japanese. */
export type Locale = 'ja' | 'en';

/** The spec shows running and completed; the others follow the same style. */
export const STATUS_MESSAGES: Record<TaskStatus, string> = {
  queued: 'タスクは実行待ちです。',
  planning: 'タスクを計画しています。',
  running: 'タスクを実行しています。',
  completed: 'タスクが完了しました。',
  failed: 'タスクが失敗しました。',
  cancelled: 'タスクは取り消されました。',
};

/**
 * The human-readable `message:` values per locale. Only these change with `mcp.locale`: the keys,
 * their order and every value's format stay exactly as the spec gives them.
 */
const TEXTS: Record<Locale, { status: Record<TaskStatus, string>; notFound: (taskId: string) => string; accepted: (taskId: string, sessionId: string) => string }> = {
  ja: {
    status: STATUS_MESSAGES,
    notFound: (taskId) => `タスク ${taskId} が見つかりません。`,
    accepted: (taskId, sessionId) => `タスク ${taskId} をセッション ${sessionId} に登録しました。`,
  },
  en: {
    status: {
      queued: 'The task is waiting to run.',
      planning: 'The task is being planned.',
      running: 'The task is running.',
      completed: 'The task has completed.',
      failed: 'The task has failed.',
      cancelled: 'The task was cancelled.',
    },
    notFound: (taskId) => `Task ${taskId} was not found.`,
    accepted: (taskId, sessionId) => `Task ${taskId} was queued in session ${sessionId}.`,
  },
};

export const statusMessages = (locale: Locale = 'ja') => TEXTS[locale].status;

/** The running message once the answer is being written (issue 23): the running sentence, then what `result` holds. */
const WRITING_MESSAGE: Record<Locale, string> = { ja: `${STATUS_MESSAGES.running}回答を書いています。`, en: 'The task is running; the answer is being written.' };

/** Issue 35: the sentence after the status sentence that names the limit a completed Task stopped at, or the corrections a running one took. */
const LIMIT_MESSAGE: Record<Locale, (limit: string) => string> = {
  ja: (limit) => `上限 ${limit} に達したため、ツールの実行を止めて要約で回答しました。`,
  en: (limit) => ` It stopped at the limit ${limit} and answered with a summary.`,
};
const STEERED_MESSAGE: Record<Locale, (count: number) => string> = {
  ja: (count) => `修正指示を${count}件受け取りました。`,
  en: (count) => ` ${count} correction(s) from the user arrived.`,
};

/** The `message:` value: the status sentence, and what the run did that a person should know. */
function messageOf(view: TaskView, locale: Locale, writing: boolean): string {
  const base = writing ? WRITING_MESSAGE[locale] : TEXTS[locale].status[view.status];
  if (view.status === 'completed' && view.stoppedBy) return base + LIMIT_MESSAGE[locale](view.stoppedBy);
  if ((view.status === 'running' || view.status === 'planning') && view.steerCount) return base + STEERED_MESSAGE[locale](view.steerCount);
  return base;
}

/** `key: value`, or a bare `key:` when empty, as the spec's examples show. */
const field = (key: string, value: string) => (value === '' ? `${key}:` : `${key}: ${value}`);

export function formatStatusText(view: TaskView, locale: Locale = 'ja'): string {
  const writing = view.status === 'running' && !!view.answerDraft;
  return [
    `task_id: ${view.taskId}`,
    `session_id: ${view.sessionId}`,
    `status: ${view.status}`,
    `completed_tasks: ${view.completedSubtasks}/${view.totalSubtasks}`,
    field('current_task', view.currentTask),
    `token_usage: input=${view.inputTokens} output=${view.outputTokens} total=${view.inputTokens + view.outputTokens}`,
    `critical_path_tokens: ${view.criticalPathTokens}`,
    `message: ${messageOf(view, locale, writing)}`,
    field('result', writing ? view.answerDraft! : (view.result ?? '')),
  ].join('\n');
}

export function formatNotFoundText(taskId: string, locale: Locale = 'ja'): string {
  return [`task_id: ${taskId}`, 'status: failed', `message: ${TEXTS[locale].notFound(taskId)}`].join('\n');
}

/** Issue 35 (`agent.steering.mcp`): agent_run's answer when the session's running Task took the request as a correction; the keys of §2.4. */
const STEERED_TEXT: Record<Locale, (taskId: string) => string> = {
  ja: (taskId) => `タスク ${taskId} は実行中のため、この依頼を修正指示として渡しました。`,
  en: (taskId) => `Task ${taskId} is running; the request was given to it as a correction.`,
};

export function formatSteeredText(taskId: string, sessionId: string, locale: Locale = 'ja'): string {
  return [`task_id: ${taskId}`, `session_id: ${sessionId}`, 'status: running', `message: ${STEERED_TEXT[locale](taskId)}`].join('\n');
}

export function formatAcceptedText(taskId: string, sessionId: string, locale: Locale = 'ja'): string {
  return [`task_id: ${taskId}`, `session_id: ${sessionId}`, 'status: queued', `message: ${TEXTS[locale].accepted(taskId, sessionId)}`].join('\n');
}
