import { isUuid } from '../common/uuid.js';

const SCHEME = 'agent-session://';

/** The URI template of a Task's diff, beside the session files' template. */
export const TASK_DIFF_URI_TEMPLATE = `${SCHEME}{session_id}/tasks/{task_id}/diff`;

/** `agent-session://<session_id>/tasks/<task_id>/diff`: the unified diff of what the Task changed. */
export function taskDiffUri(sessionId: string, taskId: string): string {
  return `${SCHEME}${sessionId}/tasks/${taskId}/diff`;
}

/** The session and Task a diff URI names, or null for anything else (session-file URIs included). */
export function parseTaskDiffUri(uri: unknown): { sessionId: string; taskId: string } | null {
  if (typeof uri !== 'string') return null;
  const match = /^agent-session:\/\/([^/]+)\/tasks\/([^/]+)\/diff$/.exec(uri);
  if (!match || !isUuid(match[1]) || !isUuid(match[2])) return null;
  return { sessionId: match[1].toLowerCase(), taskId: match[2].toLowerCase() };
}
