import { isUuid } from '../common/uuid.js';

/** What an undo request names: the session's last Task that was not undone, or one Task by id. */
export type UndoTarget = { kind: 'last' } | { kind: 'task'; taskId: string };

/**
 * `undo` / `元に戻す` alone, or followed by a Task id, is an undo request (case and surrounding
 * whitespace aside); any other text is work for the agent, `undo the last refactoring` included.
 */
export function undoRequestOf(request: string): UndoTarget | null {
  const match = /^\s*(?:undo|元に戻す)(?:\s+(\S+))?\s*$/iu.exec(request);
  if (!match) return null;
  if (match[1] === undefined) return { kind: 'last' };
  return isUuid(match[1]) ? { kind: 'task', taskId: match[1].toLowerCase() } : null;
}
