import { isUuid } from '../common/uuid.js';
import type { ConversationTurn } from '../sessions/conversation-turn.js';
import { isAgentError } from '../common/agent-error.js';
import type { TaskRequest, TaskRequestFile } from '../queue/task-request.js';
import { validateAgentRun, type AgentRunLimits } from '../tools/argument-validation.js';
import { readBudget } from '../conversation/budget-input.js';

/** A request the Chat API refuses: answered 400 in OpenAI's error shape, nothing stored. */
export class ChatInputError extends Error {
  constructor(
    message: string,
    readonly param: string | null,
    readonly code: string = 'invalid_value',
  ) {
    super(message);
  }
}

export interface ChatRequest {
  stream: boolean;
  input: TaskRequest;
  /** `agent_steer: true` (issue 35): the request is a correction for the session's running Task. */
  steer: boolean;
}

type Message = { role: string; text: string; images: { mime_type: string; data_base64: string }[]; files: TaskRequestFile[] };

const ROLES = ['system', 'developer', 'user', 'assistant'];
const DATA_URL = /^data:([^;,]+);base64,(.*)$/s;
/** A file's data URL: its type may carry parameters (`text/csv;charset=utf-8`), and may be absent. */
const FILE_DATA_URL = /^data:([^,]*?);base64,(.*)$/s;

/**
 * An OpenAI Chat Completions request as agent work: the last message is the request, validated by
 * agent_run's own rules (text, images, temperature, session id); with no `session_id`, the earlier
 * messages become the new session's history. The model id (or `agent_mode` / `agent_level`) chooses
 * the mode and the tier (ChatModels). Fields this service has no use for (`n`, `top_p`,
 * `max_tokens`, `user`, `stream_options`...) are ignored, as other OpenAI-compatible servers do.
 */
export function parseChatRequest(body: unknown, models: { select(fields: Record<string, unknown>): Pick<TaskRequest, 'mode' | 'tier'> }, limits: AgentRunLimits): ChatRequest {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new ChatInputError('The request body must be a JSON object.', null, 'invalid_type');
  const fields = body as Record<string, unknown>;
  if (fields.model === undefined) throw new ChatInputError('model: required.', 'model', 'missing_required_parameter');
  const { mode, tier } = models.select(fields);
  if (fields.stream !== undefined && fields.stream !== null && typeof fields.stream !== 'boolean') throw new ChatInputError('stream: must be a boolean.', 'stream', 'invalid_type');
  if (fields.temperature !== undefined && fields.temperature !== null && typeof fields.temperature !== 'number')
    throw new ChatInputError('temperature: must be a number.', 'temperature', 'invalid_type');
  if (fields.session_id !== undefined && fields.session_id !== null && typeof fields.session_id !== 'string')
    throw new ChatInputError('session_id: must be a string.', 'session_id', 'invalid_type');
  // Issue 24: `fork_from: <task_id>` starts a new session forked from one of the caller's Tasks.
  if (fields.fork_from !== undefined && fields.fork_from !== null && (typeof fields.fork_from !== 'string' || !isUuid(fields.fork_from)))
    throw new ChatInputError('fork_from: must be a Task id (UUID).', 'fork_from', 'invalid_type');
  if (typeof fields.fork_from === 'string' && fields.session_id !== undefined && fields.session_id !== null)
    throw new ChatInputError('fork_from: a fork starts a new session; send it without session_id.', 'fork_from');
  if (fields.agent_steer !== undefined && fields.agent_steer !== null && typeof fields.agent_steer !== 'boolean')
    throw new ChatInputError('agent_steer: must be a boolean.', 'agent_steer', 'invalid_type');
  const steer = fields.agent_steer === true;
  if (steer && typeof fields.session_id !== 'string') throw new ChatInputError('agent_steer: a correction is for a running Task; send it with its session_id.', 'agent_steer');
  if (fields.tools !== undefined && fields.tools !== null)
    throw new ChatInputError('tools: not supported; the agent uses its own workspace tools.', 'tools', 'unsupported_parameter');
  if (!Array.isArray(fields.messages) || fields.messages.length === 0) throw new ChatInputError('messages: must be a non-empty array.', 'messages', 'invalid_type');
  const messages = fields.messages.map((message, index) => parseMessage(message, `messages[${index}]`));
  const last = messages[messages.length - 1];
  if (last.role !== 'user')
    throw new ChatInputError(`messages[${messages.length - 1}].role: the last message must be the user's request (got "${last.role}").`, `messages[${messages.length - 1}].role`);
  const sessionId = fields.session_id ?? null;
  const { turns, pending } = sessionId === null ? conversation(messages.slice(0, -1)) : { turns: [], pending: [] };
  const request = [...pending, last.text].filter((text) => text !== '').join('\n\n');
  try {
    const valid = validateAgentRun({ request, session_id: sessionId, temperature: fields.temperature ?? null, images: last.images }, limits);
    const forkFrom = typeof fields.fork_from === 'string' ? fields.fork_from.toLowerCase() : undefined;
    // Files of earlier messages too when they start the session (with a session_id those messages are not read).
    const files = (sessionId === null && !forkFrom ? messages : [last]).flatMap((message) => message.files);
    if (steer && (files.length > 0 || last.images.length > 0))
      throw new ChatInputError('agent_steer: a correction is text; send files and images as a request of their own.', 'agent_steer');
    const budget = readBudget(fields.agent_budget, 'agent_budget', 'snake');
    const chosen = forkFrom ? { ...valid, forkFrom, mode, tier } : { ...valid, prelude: turns, mode, tier };
    const input = { ...chosen, ...(files.length ? { files } : {}), ...(budget ? { budget } : {}) };
    return { stream: fields.stream === true, input, steer };
  } catch (error) {
    if (!isAgentError(error)) throw error;
    if (error.message.startsWith('agent_budget')) throw new ChatInputError(error.message, 'agent_budget');
    throw new ChatInputError(error.message.replace(/^request:/, `messages[${messages.length - 1}].content:`), paramOf(error.message, messages.length - 1));
  }
}

function parseMessage(value: unknown, at: string): Message {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new ChatInputError(`${at}: must be an object.`, at, 'invalid_type');
  const { role, content } = value as Record<string, unknown>;
  if (typeof role !== 'string' || !ROLES.includes(role)) {
    throw new ChatInputError(`${at}.role: must be one of ${ROLES.join(', ')} (got ${JSON.stringify(role)}).`, `${at}.role`);
  }
  if (typeof content === 'string') return { role, text: content, images: [], files: [] };
  if (content === null && role === 'assistant') return { role, text: '', images: [], files: [] };
  if (!Array.isArray(content)) throw new ChatInputError(`${at}.content: must be a string or an array of content parts.`, `${at}.content`, 'invalid_type');
  const texts: string[] = [];
  const images: Message['images'] = [];
  const files: TaskRequestFile[] = [];
  content.forEach((part: unknown, index) => {
    const where = `${at}.content[${index}]`;
    const { type, text, image_url: image, file } = (typeof part === 'object' && part !== null ? part : {}) as Record<string, unknown>;
    if (type === 'text' && typeof text === 'string') return void texts.push(text);
    if (type === 'image_url') return void images.push(dataUrlImage(image, `${where}.image_url`));
    if (type === 'file') return void files.push(dataUrlFile(file, `${where}.file`));
    throw new ChatInputError(
      `${where}: must be {"type":"text","text":...}, {"type":"image_url","image_url":{"url":"data:..."}} or {"type":"file","file":{"filename":...,"file_data":"data:..."}}.`,
      where,
    );
  });
  return { role, text: texts.join('\n'), images, files };
}

/** Images arrive inline as data URLs; the service fetches nothing from the network on a client's behalf. */
function dataUrlImage(image: unknown, at: string): Message['images'][number] {
  const url = typeof image === 'object' && image !== null ? (image as { url?: unknown }).url : undefined;
  const match = typeof url === 'string' ? DATA_URL.exec(url) : null;
  if (!match) throw new ChatInputError(`${at}.url: must be a data URL (data:image/png;base64,...); remote images are not fetched.`, `${at}.url`);
  return { mime_type: match[1], data_base64: match[2] };
}

/** A `file` part: inline bytes as a data URL with a file name; uploaded `file_id`s do not exist here. */
function dataUrlFile(file: unknown, at: string): TaskRequestFile {
  const { file_data: data, filename, file_id: id } = (typeof file === 'object' && file !== null ? file : {}) as Record<string, unknown>;
  if (id !== undefined && data === undefined)
    throw new ChatInputError(`${at}.file_id: this service keeps no uploaded files; send the bytes as file_data (data:<type>;base64,...).`, `${at}.file_id`);
  const match = typeof data === 'string' ? FILE_DATA_URL.exec(data) : null;
  if (!match) throw new ChatInputError(`${at}.file_data: must be a data URL (data:application/pdf;base64,...).`, `${at}.file_data`);
  if (filename !== undefined && (typeof filename !== 'string' || filename.length > 255))
    throw new ChatInputError(`${at}.filename: must be a string of at most 255 characters.`, `${at}.filename`);
  const bytes = Buffer.from(match[2], 'base64');
  if (bytes.toString('base64') !== match[2]) throw new ChatInputError(`${at}.file_data: must be valid, padded Base64.`, `${at}.file_data`);
  return { name: filename ?? '', mediaType: match[1], data: bytes, at: `${at}.file_data` };
}

/**
 * Earlier messages as turns: what the user (or system) said up to each assistant answer. What no
 * assistant answered yet is sent with the request itself.
 */
function conversation(messages: Message[]): { turns: ConversationTurn[]; pending: string[] } {
  const turns: ConversationTurn[] = [];
  let pending: string[] = [];
  let imageCount = 0;
  for (const message of messages) {
    if (message.role !== 'assistant') {
      if (message.text !== '') pending.push(message.text);
      imageCount += message.images.length;
      continue;
    }
    turns.push({ request: pending.join('\n\n'), imageCount, answer: message.text });
    pending = [];
    imageCount = 0;
  }
  return { turns, pending };
}

function paramOf(message: string, lastIndex: number): string {
  const field = /^([a-z_]+)(\[\d+\])?/.exec(message)?.[1];
  if (field === 'images') return `messages[${lastIndex}].content`;
  if (field === 'temperature' || field === 'session_id') return field;
  return `messages[${lastIndex}].content`;
}
