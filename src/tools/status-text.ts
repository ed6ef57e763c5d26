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

/** `key: value`, or a bare `key:` when empty, as the spec's examples show. */
const field = (key: string, value: string) => (value === '' ? `${key}:` : `${key}: ${value}`);

export function formatStatusText(view: TaskView, locale: Locale = 'ja'): string {
  return [
    `task_id: ${view.taskId}`,
    `session_id: ${view.sessionId}`,
    `status: ${view.status}`,
    `completed_tasks: ${view.completedSubtasks}/${view.totalSubtasks}`,
    field('current_task', view.currentTask),
    `token_usage: input=${view.inputTokens} output=${view.outputTokens} total=${view.inputTokens + view.outputTokens}`,
    `critical_path_tokens: ${view.criticalPathTokens}`,
    `message: ${TEXTS[locale].status[view.status]}`,
    field('result', view.result ?? ''),
  ].join('\n');
}

export function formatNotFoundText(taskId: string, locale: Locale = 'ja'): string {
  return [`task_id: ${taskId}`, 'status: failed', `message: ${TEXTS[locale].notFound(taskId)}`].join('\n');
}

export function formatAcceptedText(taskId: string, sessionId: string, locale: Locale = 'ja'): string {
  return [`task_id: ${taskId}`, `session_id: ${sessionId}`, 'status: queued', `message: ${TEXTS[locale].accepted(taskId, sessionId)}`].join('\n');
}
