import { Ajv, addFormats } from '@modelcontextprotocol/server/validators/ajv';
import { createHash } from 'node:crypto';
import type { ErrorObject } from 'ajv';
import { AgentError } from '../common/agent-error.js';
import { cutText } from '../common/cut-text.js';
import type { AgentConfig } from '../config/agent-config.js';
import type { TaskRequest, TaskRequestImage } from '../queue/task-request.js';
import { AGENT_RUN_INPUT_SCHEMA, AGENT_STATUS_INPUT_SCHEMA, type AgentRunArguments, type AgentStatusArguments } from './tool-schemas.js';

// validateSchema off: the two schemas are constants (tool-schemas.ts) that argument-validation.spec checks against JSON
// Schema's meta-schema; checking them again at every start compiled that meta-schema, about 60 ms of a start's CPU.
const ajv = new Ajv({ allErrors: false, strict: false, validateSchema: false });
// eslint-disable-next-line @typescript-eslint/no-unsafe-call -- the SDK re-exports ajv-formats' plugin without its types
addFormats(ajv);
// Compiled once per process, never per request.
const agentRunSchema = ajv.compile<AgentRunArguments>(AGENT_RUN_INPUT_SCHEMA);
const agentStatusSchema = ajv.compile<AgentStatusArguments>(AGENT_STATUS_INPUT_SCHEMA);

const ALLOWED_MIME_TYPES = ['image/png', 'image/jpeg', 'image/webp'];

export interface AgentStatusInput {
  taskId: string;
  sessionId: string | null;
}

export interface AgentRunLimits {
  images: AgentConfig['mcp']['images'];
  /** Longest request accepted: see `requestCharsFor`. */
  maxRequestChars: number;
}

/**
 * The longest request the model could ever take: its whole context window at a generous four
 * characters per token. A longer one can only fail later, after a place in the queue and a model load.
 */
const requestCharsFor = (numCtx: number) => numCtx * 4;

/** agent_run's limits under `config`: every surface that accepts a request applies the same ones. */
export const agentRunLimits = (config: AgentConfig): AgentRunLimits => ({ images: config.mcp.images, maxRequestChars: requestCharsFor(config.ollama.numCtx) });

/** Schema check, then the spec's runtime rules (§2.2, §4). Throws `invalid_input` naming the field. */
export function validateAgentRun(args: unknown, limits: AgentRunLimits): TaskRequest {
  if (!agentRunSchema(args)) throw invalid(agentRunSchema.errors);
  if (args.request.trim() === '') throw invalidInput('request: must not be empty or whitespace only.');
  if (args.request.length > limits.maxRequestChars) {
    throw invalidInput(
      `request: ${args.request.length} characters exceeds the limit of ${limits.maxRequestChars} characters (the model's context, ollama.num_ctx, at 4 characters per token).`,
    );
  }
  if (args.request.includes('\0') || !args.request.isWellFormed()) {
    throw invalidInput('request: must be text without NUL characters or unpaired surrogates.');
  }
  const temperature = args.temperature ?? null;
  if (temperature !== null && !(temperature >= 0 && temperature <= 2)) {
    throw invalidInput(`temperature: must be between 0.0 and 2.0 (got ${temperature}).`);
  }
  return {
    request: args.request,
    sessionId: args.session_id ?? null,
    temperature,
    images: validateImages(args.images ?? [], limits.images),
  };
}

export function validateAgentStatus(args: unknown): AgentStatusInput {
  if (!agentStatusSchema(args)) throw invalid(agentStatusSchema.errors);
  return { taskId: args.task_id, sessionId: args.session_id ?? null };
}

function validateImages(images: NonNullable<AgentRunArguments['images']>, limits: AgentConfig['mcp']['images']): TaskRequestImage[] {
  if (images.length > limits.maxCount) {
    throw invalidInput(`images: at most ${limits.maxCount} images are allowed (got ${images.length}).`);
  }
  let total = 0;
  return images.map((image, index) => {
    const at = `images[${index}]`;
    if (image === null) throw invalidInput(`${at}: must be an object, not null.`);
    const { mime_type: mimeType, data_base64: data } = image;
    if (mimeType === null) throw invalidInput(`${at}.mime_type: must not be null.`);
    if (data === null) throw invalidInput(`${at}.data_base64: must not be null.`);
    if (!ALLOWED_MIME_TYPES.includes(mimeType)) {
      throw invalidInput(`${at}.mime_type: must be one of ${ALLOWED_MIME_TYPES.join(', ')} (got "${cutText(mimeType, 60)}").`);
    }
    const bytes = base64Length(data);
    if (bytes === null) throw invalidInput(`${at}.data_base64: must be non-empty, valid Base64.`);
    if (bytes > limits.maxBytesPerImage) {
      throw invalidInput(`${at}: ${bytes} bytes exceeds the per-image limit of ${limits.maxBytesPerImage} bytes.`);
    }
    total += bytes;
    if (total > limits.maxTotalBytes) {
      throw invalidInput(`images: the total size exceeds the limit of ${limits.maxTotalBytes} bytes.`);
    }
    const decoded = Buffer.from(data, 'base64');
    // Node's decoder skips characters outside the alphabet, so any such character (or misplaced padding)
    // shows as fewer bytes than the length arithmetic promises: a full regex scan costs ~5x more.
    if (decoded.length !== bytes) throw invalidInput(`${at}.data_base64: must be non-empty, valid Base64.`);
    return { mimeType, data: decoded, bytes, sha256: createHash('sha256').update(decoded).digest('hex') };
  });
}

/** Decoded size of padded standard Base64, or null when the shape is wrong (length, URL-safe alphabet). */
function base64Length(data: string): number | null {
  if (data.length === 0 || data.length % 4 !== 0 || data.includes('-') || data.includes('_')) return null;
  return (data.length / 4) * 3 - (data.endsWith('==') ? 2 : data.endsWith('=') ? 1 : 0);
}

const invalidInput = (message: string) => new AgentError('invalid_input', message);

function invalid(errors: ErrorObject[] | null | undefined): AgentError {
  const error = errors?.[0];
  if (!error) return invalidInput('arguments: invalid.');
  const path = error.instancePath ? error.instancePath.slice(1).replaceAll('/', '.') : 'arguments';
  switch (error.keyword) {
    case 'additionalProperties':
      return invalidInput(`${path}: unknown property "${cutText((error.params as { additionalProperty: string }).additionalProperty, 60)}".`);
    case 'required':
      return invalidInput(`${(error.params as { missingProperty: string }).missingProperty}: required property is missing.`);
    case 'format':
      return invalidInput(`${path}: must be a ${(error.params as { format: string }).format}.`);
    default:
      return invalidInput(`${path}: ${error.message ?? 'is invalid'}.`);
  }
}
