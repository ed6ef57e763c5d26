import { extname } from 'node:path';
import { isUuid } from '../common/uuid.js';

const SCHEME = 'agent-session://';

/** The URI template of session files (RFC 6570 `{+path}`: the path keeps its slashes). */
export const SESSION_FILE_URI_TEMPLATE = `${SCHEME}{session_id}/files/{+path}`;

/** `agent-session://<session_id>/files/<path>`, each path segment percent-encoded. */
export function sessionFileUri(sessionId: string, path: string): string {
  return `${SCHEME}${sessionId}/files/${path.split('/').map(encodeURIComponent).join('/')}`;
}

/**
 * The session and workspace-relative path a URI names, or null for anything that is not exactly a URI
 * this service would produce (other schemes, `.`/`..` or empty segments, an encoded `/`, bad escapes).
 */
export function parseSessionFileUri(uri: string): { sessionId: string; path: string } | null {
  if (typeof uri !== 'string' || !uri.startsWith(SCHEME)) return null;
  const rest = uri.slice(SCHEME.length);
  const slash = rest.indexOf('/files/');
  if (slash === -1) return null;
  const sessionId = rest.slice(0, slash);
  if (!isUuid(sessionId)) return null;
  const segments: string[] = [];
  for (const raw of rest.slice(slash + '/files/'.length).split('/')) {
    let segment: string;
    try {
      segment = decodeURIComponent(raw);
    } catch {
      return null;
    }
    if (segment === '' || segment === '.' || segment === '..' || /[/\\\0]/.test(segment)) return null;
    segments.push(segment);
  }
  return { sessionId, path: segments.join('/') };
}

const MIME_TYPES: Record<string, string> = {
  '.txt': 'text/plain',
  '.md': 'text/markdown',
  '.csv': 'text/csv',
  '.html': 'text/html',
  '.css': 'text/css',
  '.xml': 'application/xml',
  '.json': 'application/json',
  '.yaml': 'application/yaml',
  '.yml': 'application/yaml',
  '.js': 'text/javascript',
  '.mjs': 'text/javascript',
  '.cjs': 'text/javascript',
  '.ts': 'text/x-typescript',
  '.py': 'text/x-python',
  '.sh': 'application/x-sh',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.gif': 'image/gif',
  '.webp': 'image/webp',
  '.pdf': 'application/pdf',
  '.zip': 'application/zip',
  '.gz': 'application/gzip',
  '.tar': 'application/x-tar',
};

/** From the extension; application/octet-stream for anything else. */
export function mimeTypeOf(path: string): string {
  return MIME_TYPES[extname(path).toLowerCase()] ?? 'application/octet-stream';
}
