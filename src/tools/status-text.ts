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
  /** The answer written so far while the Task runs (issue 23): shown as `result` with WRITING_MESSAGE. */
  answerDraft?: string;
  createdAt: string;
  updatedAt: string;
}

/** The spec shows running and completed; the others follow the same style. */
export const STATUS_MESSAGES: Record<TaskStatus, string> = {
  queued: 'タスクは実行待ちです。',
  planning: 'タスクを計画しています。',
  running: 'タスクを実行しています。',
  completed: 'タスクが完了しました。',
  failed: 'タスクが失敗しました。',
  cancelled: 'タスクは取り消されました。',
};

/** The running message once the answer is being written: the spec's sentence, then what the result holds. */
export const WRITING_MESSAGE = `${STATUS_MESSAGES.running}回答を書いています。`;

/** `key: value`, or a bare `key:` when empty, as the spec's examples show. */
const field = (key: string, value: string) => (value === '' ? `${key}:` : `${key}: ${value}`);

export function formatStatusText(view: TaskView): string {
  const writing = view.status === 'running' && !!view.answerDraft;
  return [
    `task_id: ${view.taskId}`,
    `session_id: ${view.sessionId}`,
    `status: ${view.status}`,
    `completed_tasks: ${view.completedSubtasks}/${view.totalSubtasks}`,
    field('current_task', view.currentTask),
    `token_usage: input=${view.inputTokens} output=${view.outputTokens} total=${view.inputTokens + view.outputTokens}`,
    `critical_path_tokens: ${view.criticalPathTokens}`,
    `message: ${writing ? WRITING_MESSAGE : STATUS_MESSAGES[view.status]}`,
    field('result', writing ? view.answerDraft! : (view.result ?? '')),
  ].join('\n');
}

export function formatNotFoundText(taskId: string): string {
  return [`task_id: ${taskId}`, 'status: failed', `message: タスク ${taskId} が見つかりません。`].join('\n');
}

export function formatAcceptedText(taskId: string, sessionId: string): string {
  return [
    `task_id: ${taskId}`,
    `session_id: ${sessionId}`,
    'status: queued',
    `message: タスク ${taskId} をセッション ${sessionId} に登録しました。`,
  ].join('\n');
}
