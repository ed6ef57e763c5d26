import type { TaskFile } from '../agent/trace.repository.js';
import { mimeTypeOf, sessionFileUri } from '../workspace/session-file-uri.js';
import type { DeliverableDto } from './admin-responses.dto.js';

/** The admin download of a session file, relative to the service's base URL (the console puts its own prefix before it). */
export const downloadPath = (sessionId: string, path: string) => `/admin/sessions/${sessionId}/files/${path.split('/').map(encodeURIComponent).join('/')}`;

/** A Task's files (its read model's, from task_file_changes) as GET /admin/tasks/:id lists them, with their URI and download. */
export function deliverablesOf(sessionId: string, files: readonly TaskFile[]): DeliverableDto[] {
  return files.map(({ path, change, bytes }) => ({
    path,
    change,
    bytes,
    uri: sessionFileUri(sessionId, path),
    mime_type: mimeTypeOf(path),
    download_path: downloadPath(sessionId, path),
  }));
}
