import { Role, type Message } from '@a2a-js/sdk';
import { ContentTypeNotSupportedError, RequestMalformedError } from '@a2a-js/sdk/errors';
import { isAgentError } from '../common/agent-error.js';
import { isUuid } from '../common/uuid.js';
import type { TaskRequest, TaskRequestFile } from '../queue/task-request.js';
import { AGENT_SKILL, DIRECT_SKILL } from './agent-card.js';
import { validateAgentRun, type AgentRunLimits } from '../tools/argument-validation.js';
import { readBudget } from '../conversation/budget-input.js';

/** The image types agent_run takes: file parts of these types are images for a vision model, any other is a file. */
const IMAGE_TYPES = ['image/png', 'image/jpeg', 'image/webp'];

/**
 * An A2A message as agent work, by agent_run's own rules: its text parts are the request, its file
 * parts with bytes its images (PNG, JPEG, WebP) or files for `inputs/` (any other type, checked when
 * staged); its `contextId` is the request handler's (A2aContexts). Only a client's own message
 * (`ROLE_USER`) is work; a data part is a content type this agent does not take. Files by URL are refused (the service fetches nothing on a client's behalf). A
 * message that names a working Task (`taskId`, A2A's way to add input to a Task) is a correction for it
 * (issue 35): text only. Metadata chooses the skill (`skill: "direct_llm"` or `agentMode: false`: one
 * answer without tools), the tier (`agentLevel`) and lower budgets (`agentBudget`).
 */
export function taskRequestOf(message: Message, limits: AgentRunLimits, tiers: string[]): TaskRequest {
  // A missing role reads as ROLE_UNSPECIFIED (the proto's zero value).
  if (message.role !== Role.ROLE_USER) throw new RequestMalformedError('message.role: must be ROLE_USER (a message from the client)');
  const choice = modeAndTier(message.metadata ?? {}, tiers);
  const texts: string[] = [];
  const images: { mime_type: string; data_base64: string }[] = [];
  const files: TaskRequestFile[] = [];
  message.parts.forEach((part, index) => {
    const content = part.content;
    if (content?.$case === 'text') texts.push(content.value);
    else if (content?.$case === 'raw' && IMAGE_TYPES.includes(part.mediaType))
      images.push({ mime_type: part.mediaType, data_base64: Buffer.from(content.value).toString('base64') });
    else if (content?.$case === 'raw') files.push({ name: part.filename ?? '', mediaType: part.mediaType ?? '', data: Buffer.from(content.value), at: `message.parts[${index}]` });
    else if (content?.$case === 'data')
      throw new ContentTypeNotSupportedError(`message.parts[${index}]: content type not supported: a data part (structured JSON); send text, or a file with its bytes`);
    else throw new RequestMalformedError(`message.parts[${index}]: must be text, or a file with its bytes (raw); ${content?.$case ?? 'an empty part'} is not accepted`);
  });
  if (message.taskId && (images.length > 0 || files.length > 0)) throw new RequestMalformedError('message.parts: a correction to a running Task (message.taskId) is text only');
  // Issue 24: metadata `fork_from: <task_id>` starts a new session forked from one of the caller's Tasks.
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-type-assertion -- metadata is `any` in the SDK's types; this says what it is
  const forkFrom = (message.metadata as Record<string, unknown> | undefined)?.fork_from;
  if (forkFrom !== undefined && (typeof forkFrom !== 'string' || !isUuid(forkFrom))) throw new RequestMalformedError('message.metadata.fork_from: must be a Task id (UUID)');
  if (forkFrom !== undefined && (message.contextId || message.taskId))
    throw new RequestMalformedError('message.metadata.fork_from: a fork starts a new context; send it without contextId or taskId');
  try {
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-type-assertion -- metadata is `any` in the SDK's types
    const budget = readBudget((message.metadata as Record<string, unknown> | undefined)?.agentBudget, 'agentBudget', 'camel');
    const valid = { ...validateAgentRun({ request: texts.join('\n'), session_id: null, images }, limits), ...choice, ...(budget ? { budget } : {}) };
    const chosen = typeof forkFrom === 'string' ? { ...valid, forkFrom: forkFrom.toLowerCase() } : valid;
    return files.length ? { ...chosen, files } : chosen;
  } catch (error) {
    if (!isAgentError(error)) throw error;
    throw new RequestMalformedError(
      error.message
        .replace(/^request:/, 'message text:')
        .replace(/^images/, 'message file parts')
        .replace(/^agentBudget/, 'message.metadata.agentBudget'),
    );
  }
}

/** The skill and tier a message's metadata asks for; a malformed-request error for an unknown one. */
function modeAndTier(metadata: Record<string, unknown>, tiers: string[]): Pick<TaskRequest, 'mode' | 'tier'> {
  const { skill, agentMode, agentLevel } = metadata;
  if (skill !== undefined && skill !== DIRECT_SKILL && skill !== AGENT_SKILL) throw new RequestMalformedError(`message.metadata.skill: must be ${AGENT_SKILL} or ${DIRECT_SKILL}`);
  if (agentMode !== undefined && typeof agentMode !== 'boolean') throw new RequestMalformedError('message.metadata.agentMode: must be a boolean');
  if (agentLevel !== undefined && (typeof agentLevel !== 'string' || !tiers.includes(agentLevel))) {
    throw new RequestMalformedError(`message.metadata.agentLevel: must be one of ${tiers.join(', ')}`);
  }
  if (skill === AGENT_SKILL && agentMode === false) throw new RequestMalformedError('message.metadata: agentMode false contradicts the skill execute_task');
  const mode = skill === DIRECT_SKILL || agentMode === false ? 'direct' : 'agent';
  return { mode, ...(agentLevel !== undefined ? { tier: agentLevel } : {}) };
}
