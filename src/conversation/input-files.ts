import { fileTypeFromBuffer } from 'file-type';
import { createHash } from 'node:crypto';
import { extname } from 'node:path';
import { AgentError } from '../common/agent-error.js';
import { cutText } from '../common/cut-text.js';
import type { AgentConfig } from '../config/agent-config.js';
import type { TaskRequestFile } from '../queue/task-request.js';

/** Where attached files land in the session workspace. */
export const INPUTS_DIR = 'inputs';

const MAX_NAME_CHARS = 120;
/** Types a client may declare for any content: they claim nothing about it. */
const UNSPECIFIC = ['', 'application/octet-stream', 'binary/octet-stream'];
/** Declared types that mean text (besides text/*): checked as UTF-8 when no binary format is recognised. */
const TEXT_TYPES = [
  'application/json',
  'application/xml',
  'application/yaml',
  'application/x-yaml',
  'application/javascript',
  'application/x-sh',
  'application/sql',
  'application/toml',
  'application/x-ndjson',
];
/** Aliases file-type does not know: a declared one matches the detected type. */
const SAME_TYPE: Record<string, string> = { 'image/jpg': 'image/jpeg', 'application/x-zip-compressed': 'application/zip', 'application/x-pdf': 'application/pdf' };

export interface CheckedInputFile {
  /** The name in `inputs/`, made safe and unique in the request. */
  name: string;
  mimeType: string;
  data: Buffer;
  sha256: string;
}

const refuse = (at: string, message: string) => new AgentError('invalid_input', `${at}: ${message}`);

/**
 * A request's attachments by the same rules on every surface: at most `mcp.files.max_count`, their
 * bytes together at most `mcp.files.max_bytes`, each either a format recognised from its content (a
 * declared type must agree) or UTF-8 text; names reduced to a plain file name of letters, digits and
 * `._-+()@,` (no path, no leading dot), unique within the request.
 */
export async function checkInputFiles(files: TaskRequestFile[], limits: AgentConfig['mcp']['files']): Promise<CheckedInputFile[]> {
  if (files.length > limits.maxCount)
    throw refuse(files[limits.maxCount].at, `at most ${limits.maxCount} files are accepted with a request (mcp.files.max_count; got ${files.length})`);
  const total = files.reduce((sum, file) => sum + file.data.length, 0);
  if (total > limits.maxBytes) throw refuse(files[0].at, `the files hold ${total} bytes together, more than mcp.files.max_bytes (${limits.maxBytes})`);
  const taken = new Set<string>();
  const checked: CheckedInputFile[] = [];
  for (const [index, file] of files.entries()) {
    if (file.data.length === 0) throw refuse(file.at, 'the file is empty');
    const mimeType = await typeByContent(file);
    const name = unique(safeName(file.name, index), taken);
    checked.push({ name, mimeType, data: file.data, sha256: createHash('sha256').update(file.data).digest('hex') });
  }
  return checked;
}

/** The file's type as its bytes show it; refused when they contradict the declared type or are neither a known format nor text. */
async function typeByContent(file: TaskRequestFile): Promise<string> {
  const declared = (SAME_TYPE[file.mediaType.toLowerCase()] ?? file.mediaType.toLowerCase()).split(';')[0].trim();
  const detected = await fileTypeFromBuffer(file.data);
  const shown = cutText(file.mediaType, 60);
  if (detected) {
    if (UNSPECIFIC.includes(declared) || declared === detected.mime) return detected.mime;
    throw refuse(file.at, `declared as ${shown}, but its content is ${detected.mime}`);
  }
  if (!isText(file.data)) throw refuse(file.at, `its content is neither UTF-8 text nor a recognised file format${declared ? ` (declared ${shown})` : ''}`);
  if (UNSPECIFIC.includes(declared)) return 'text/plain';
  if (declared.startsWith('text/') || TEXT_TYPES.includes(declared) || declared.endsWith('+json') || declared.endsWith('+xml')) return declared;
  throw refuse(file.at, `declared as ${shown}, but its content is plain text`);
}

function isText(data: Buffer): boolean {
  if (data.includes(0)) return false;
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(data);
    return true;
  } catch {
    return false;
  }
}

/** The last path segment, NFC, unsafe characters as `_`, no leading dots, at most 120 characters with the extension kept. */
export function safeName(name: string, index: number): string {
  const base = name.normalize('NFC').split(/[/\\]/).pop() ?? '';
  let safe = base
    .replace(/[^\p{L}\p{N}._\-+()@, ]/gu, '_')
    .replace(/\s+/g, ' ')
    .trim()
    .replace(/^[.\s]+/, '');
  if (safe.replace(/[_.]/g, '') === '') safe = `file-${index + 1}${extname(safe)}`;
  if (safe.length > MAX_NAME_CHARS) {
    const ext = extname(safe).slice(0, 16);
    safe = `${safe.slice(0, MAX_NAME_CHARS - ext.length)}${ext}`;
  }
  return safe;
}

/** `report.csv`, then `report-2.csv`, `report-3.csv`… within one request. */
function unique(name: string, taken: Set<string>): string {
  let candidate = name;
  for (let n = 2; taken.has(candidate.toLowerCase()); n++) candidate = numberedName(name, n);
  taken.add(candidate.toLowerCase());
  return candidate;
}

/** `name` as the `n`th of its name (`data.csv` -> `data-3.csv`): how a file is kept beside another of the same name. */
export function numberedName(name: string, n: number): string {
  const ext = extname(name);
  return `${name.slice(0, name.length - ext.length)}-${n}${ext}`;
}

/** How the model is told about the files: appended to the request it reads. */
export function filesNote(files: { path: string; bytes: number; mimeType: string }[]): string {
  const lines = files.map((file) => `- ${file.path} (${file.bytes} bytes, ${file.mimeType})`);
  return `Files attached to this request, in the workspace:\n${lines.join('\n')}`;
}
