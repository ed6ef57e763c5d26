import { Injectable, Logger } from '@nestjs/common';
import { AuditService } from '../audit/audit.service.js';
import { isAgentError, QuotaExceeded, type AgentErrorCode } from '../common/agent-error.js';
import { Clock, SYSTEM_CLOCK } from '../common/clock.js';
import { AppConfig } from '../config/app-config.js';
import { mapTraceStep, subtaskStep, type AgentStep } from '../conversation/agent-steps.js';
import { ConversationIntake, type IntakeSurface } from '../conversation/conversation-intake.js';
import { ConversationService, isTerminal } from '../conversation/conversation.service.js';
import { TaskFeed } from '../conversation/task-feed.js';
import { applyDelta } from '../events/answer-drafts.js';
import { commonPrefix } from '../common/common-prefix.js';
import { InputFilesStager } from '../conversation/input-files.stager.js';
import type { Caller } from '../identity/caller.js';
import type { PersonLocale } from '../common/person-locale.js';
import type { CallerTraceContext } from '../telemetry/trace-context.js';
import { tierModels } from '../ollama/model-tiers.js';
import type { TaskReadModel } from '../queue/task-read-model.js';
import { agentRunLimits, type AgentRunLimits } from '../tools/argument-validation.js';
import { ChatInputError, parseChatRequest } from './chat-request.js';
import { ChatModels } from './chat-models.js';
import { agentOf, chunkOf, completionOf, followUpOf, lastChunkOf, modelsList, steeredChunks, steeredOf } from './chat-views.js';
import { isUuid } from '../common/uuid.js';

/** An error the Chat API answers with: HTTP status plus OpenAI's error fields. */
export class ChatError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly type: string,
    readonly param: string | null = null,
    readonly code: string | null = null,
    /** Seconds a 429 asks the client to wait (`Retry-After`); the filter's default when absent. */
    readonly retryAfterS?: number,
  ) {
    super(message);
  }
}

/** Each domain error code as the Chat API answers it; exhaustive by construction. */
const CHAT_ERRORS: Record<AgentErrorCode, { status: number; type: string; param: string | null }> = {
  invalid_input: { status: 400, type: 'invalid_request_error', param: null },
  session_not_found: { status: 400, type: 'invalid_request_error', param: 'session_id' },
  // Session files are not part of the Chat API; listed for exhaustiveness.
  resource_not_found: { status: 404, type: 'invalid_request_error', param: null },
  resource_too_large: { status: 400, type: 'invalid_request_error', param: null },
  files_expired: { status: 404, type: 'invalid_request_error', param: null },
  shutting_down: { status: 503, type: 'server_error', param: null },
  queue_full: { status: 429, type: 'rate_limit_error', param: null },
  quota_exceeded: { status: 429, type: 'rate_limit_error', param: null },
  already_decided: { status: 409, type: 'invalid_request_error', param: null },
  internal: { status: 500, type: 'server_error', param: null },
};

/**
 * An accepted request: its Task, whether to stream, and whether it was a correction (`steered`: the running
 * Task took it; `kept`: the Task waits for a person and the model reads it when the wait ends) or became a
 * follow-up Task.
 */
export interface ChatAccepted {
  task: TaskReadModel;
  stream: boolean;
  steered: false | 'steered' | 'kept';
  followUp: boolean;
}

/** The audit action of a completion request, accepted or refused (its body refused by admission too). */
export const COMPLETIONS_ACTION = 'chat.completions';

/** The audit action and intake surface of a Chat completions request: the Chat API's own, or the console's. */
export interface ChatVia {
  action: string;
  surface: IntakeSurface;
}
const CHAT_VIA: ChatVia = { action: COMPLETIONS_ACTION, surface: 'chat' };

/**
 * The Chat API's rules: an OpenAI Chat Completions request becomes a Task on the shared queue (for
 * the caller, in a new or continued session), answered when the Task is terminal or streamed as it
 * runs. The Task belongs to the service: a client that goes away stops only its own wait.
 */
@Injectable()
export class ChatService {
  private readonly logger = new Logger('ChatApi');
  private readonly catalog: ChatModels;
  private readonly limits: AgentRunLimits;
  /** The models' `created`: when this service started, by its clock. */
  private readonly since: number;

  constructor(
    private readonly conversations: ConversationService,
    private readonly intake: ConversationIntake,
    private readonly feed: TaskFeed,
    private readonly audit: AuditService,
    private readonly inputFiles: InputFilesStager,
    config: AppConfig,
    clock: Clock = SYSTEM_CLOCK,
  ) {
    this.since = Math.floor(clock.now() / 1000);
    this.catalog = new ChatModels(config.chat.modelId, [...tierModels(config.ollama).keys()]);
    this.limits = agentRunLimits(config);
  }

  async models(caller: Caller) {
    await this.audit.record({ caller, action: 'chat.models', outcome: 'ok' });
    return modelsList(
      this.catalog.list.map((model) => model.id),
      this.since,
    );
  }

  /** The model ids a request may name (the tiers), the default first. */
  modelIds(): string[] {
    return this.catalog.list.map((model) => model.id);
  }

  /**
   * Validates and queues, or (`agent_steer`) gives the correction to the session's running Task; a
   * refused request is audited and stores nothing else. `locale` is the language the client asked for
   * (its Task's texts for people follow it); `via` the audit action and surface of the request (the
   * console sends the same requests as its own, `console.request`).
   */
  async accept(caller: Caller, body: unknown, locale: PersonLocale, via: ChatVia = CHAT_VIA, trace?: CallerTraceContext): Promise<ChatAccepted> {
    const { action } = via;
    const detail = { arguments: withoutImageData(body) };
    try {
      const { stream, input, steer } = parseChatRequest(body, this.catalog, this.limits);
      const staged = await this.inputFiles.stage(caller, { ...input, locale }).catch((error: unknown) => {
        // A refused file names its part (`messages[0].content[1].file.file_data: …`): that is the param.
        const param = isAgentError(error) && error.code === 'invalid_input' ? /^(messages\[\d+\]\.content\[\d+\][.\w]*):/.exec(error.message)?.[1] : undefined;
        throw param ? new ChatInputError((error as Error).message, param) : error;
      });
      const outcome = await this.intake.submit(
        caller,
        { request: { ...staged, trace }, surface: via.surface, ...(steer ? { steer: { sessionId: staged.sessionId!, keep: true } } : {}) },
        { action, detail: { ...detail, stream } },
      );
      // A session of the caller's was checked by the intake; its running Task is the caller's too.
      if (outcome.kind === 'not_found') throw new ChatInputError(`session_id: session ${staged.sessionId} does not exist.`, 'session_id', 'session_not_found');
      if (outcome.kind === 'steered' || outcome.kind === 'kept') return { task: outcome.task, stream, steered: outcome.kind, followUp: false };
      return { task: outcome.task, stream, steered: false, followUp: outcome.as === 'follow_up' };
    } catch (error) {
      const refused = toChatError(error);
      if (refused.status === 500) this.logger.error(`chat request failed: ${(error as Error).stack ?? String(error)}`);
      await this.audit.record({ caller, action, outcome: refused.status < 500 ? 'rejected' : 'error', detail: { ...detail, reason: refused.message } });
      throw refused;
    }
  }

  /** The `chat.completion` once the Task is terminal (at once for a correction); null when the client went away first. */
  async completion({ task, steered, followUp }: ChatAccepted, signal: AbortSignal, locale: PersonLocale) {
    if (steered) return steeredOf(task, this.catalog.idOf(task), steered);
    const done = await this.feed.untilTerminal(task.id, signal);
    return done && completionOf(await this.conversations.withFiles(done), this.catalog.idOf(done), await this.conversations.asking(done.id, locale), followUp);
  }

  /**
   * The chunks of a streamed answer: the role and the agent object, the execution steps as they are
   * written, the answer as content deltas while the model writes it, and a last chunk with the finish
   * reason and usage. Content only ever appends, except when the answer restarts differently (a retried
   * model call, a failure after part of it): that delta carries `agent_answer_offset`, the length of
   * the content it applies after (a client drops what it shows beyond it). The content of all deltas
   * together, so applied, is the Task's `result`.
   */
  async *chunks({ task, steered, followUp }: ChatAccepted, signal: AbortSignal, locale: PersonLocale): AsyncGenerator<object> {
    if (steered) return yield* steeredChunks(task, this.catalog.idOf(task), steered);
    yield chunkOf(task, this.catalog.idOf(task), { role: 'assistant', content: '', agent: { ...agentOf(task), ...followUpOf(followUp) } });
    let last = task;
    let draft = '';
    let shown = '';
    for await (const { task: now, steps, moved, answer } of this.feed.follow(task.id, signal)) {
      last = now;
      const subtask = moved ? subtaskStep(now) : null;
      const agentSteps: AgentStep[] = [...(subtask ? [subtask] : []), ...steps.map(mapTraceStep)];
      if (agentSteps.length > 0 || moved) yield chunkOf(now, this.catalog.idOf(task), { agent_steps: agentSteps, ...(moved ? { agent: agentOf(now) } : {}) });
      if (!answer || isTerminal(now.status)) continue;
      draft = applyDelta(draft, answer);
      const delta = contentDelta(shown, draft, false);
      if (delta) yield chunkOf(now, this.catalog.idOf(task), delta);
      shown = delta ? draft : shown;
    }
    if (!isTerminal(last.status)) return;
    const delta = contentDelta(shown, last.result ?? '', true);
    if (delta) yield chunkOf(last, this.catalog.idOf(task), delta);
    yield lastChunkOf(await this.conversations.withFiles(last), this.catalog.idOf(task), await this.conversations.asking(last.id, locale));
  }

  /** Cancels the session's queued or running Task (404 when the session is not the caller's). */
  async cancel(caller: Caller, sessionId: string) {
    const cancelled = isUuid(sessionId) ? await this.conversations.cancelSession(caller, sessionId) : null;
    await this.audit.record({
      caller,
      action: 'chat.cancel',
      outcome: cancelled ? 'ok' : 'rejected',
      sessionId: cancelled ? sessionId : null,
      detail: cancelled ? { tasks: cancelled.map((task) => task.id) } : { reason: 'session not found', session_id: sessionId.slice(0, 64) },
    });
    if (!cancelled) throw new ChatError(404, `session ${sessionId.slice(0, 64)} does not exist.`, 'invalid_request_error', 'session_id', 'session_not_found');
    return { object: 'chat.cancellation', session_id: sessionId, tasks: cancelled.map(agentOf) };
  }
}

/**
 * The delta that takes a client from `shown` to `target`: an append, or a restart at the first
 * difference (`agent_answer_offset`). A target that is still a prefix of what was shown waits for more
 * text while the Task runs (a retried call writing the same words again), and is applied at the end.
 */
function contentDelta(shown: string, target: string, final: boolean): { content: string; agent_answer_offset?: number } | null {
  const common = commonPrefix(shown, target);
  if (common === shown.length) return target.length > common ? { content: target.slice(common) } : null;
  if (common === target.length && !final) return null;
  return { content: target.slice(common), agent_answer_offset: common };
}

function toChatError(error: unknown): ChatError {
  if (error instanceof ChatInputError) return new ChatError(400, error.message, 'invalid_request_error', error.param, error.code);
  if (isAgentError(error)) {
    const mapped = CHAT_ERRORS[error.code];
    return new ChatError(mapped.status, error.message, mapped.type, mapped.param, error.code, error instanceof QuotaExceeded ? error.retryAfterS() : undefined);
  }
  return new ChatError(500, 'The request could not be completed; see the service log.', 'server_error', null, 'internal');
}

/** The body for the audit log (which bounds it): data URLs (inline images and files) as their length, never their bytes. */
function withoutImageData(value: unknown, key = '', depth = 0): unknown {
  if (typeof value === 'string') return (key === 'url' || key === 'file_data') && value.startsWith('data:') ? { data_url_chars: value.length } : value;
  if (typeof value !== 'object' || value === null) return value;
  if (depth >= 8) return '(nested too deep)';
  if (Array.isArray(value)) return value.slice(0, 64).map((item) => withoutImageData(item, '', depth + 1));
  return Object.fromEntries(
    Object.entries(value)
      .slice(0, 64)
      .map(([k, v]) => [k, withoutImageData(v, k, depth + 1)]),
  );
}
