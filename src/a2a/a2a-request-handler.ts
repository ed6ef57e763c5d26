import type {
  CancelTaskRequest,
  DeleteTaskPushNotificationConfigRequest,
  GetTaskPushNotificationConfigRequest,
  ListTaskPushNotificationConfigsRequest,
  ListTaskPushNotificationConfigsResponse,
  TaskPushNotificationConfig,
  GetTaskRequest,
  ListTasksRequest,
  ListTasksResponse,
  Message,
  SendMessageRequest,
  StreamResponse,
  SubscribeToTaskRequest,
  Task,
} from '@a2a-js/sdk';
import { A2AError, RequestMalformedError, TaskNotCancelableError, TaskNotFoundError, UnsupportedOperationError } from '@a2a-js/sdk/errors';
import { DefaultRequestHandler, type AgentExecutionEvent, type ServerCallContext } from '@a2a-js/sdk/server';
import type { AuditService } from '../audit/audit.service.js';
import { isAgentError, QuotaExceeded } from '../common/agent-error.js';
import type { AppConfig } from '../config/app-config.js';
import { tierModels } from '../ollama/model-tiers.js';
import type { ConversationIntake } from '../conversation/conversation-intake.js';
import { type ConversationService, isTerminal } from '../conversation/conversation.service.js';
import type { TaskFeed } from '../conversation/task-feed.js';
import type { InputFilesStager } from '../conversation/input-files.stager.js';
import { agentRunLimits, type AgentRunLimits } from '../tools/argument-validation.js';
import { A2aExecutor, ACCEPT_ACTION, ACCEPTED_INPUT, FOLLOW, STEER } from './a2a-executor.js';
import { taskRequestOf } from './a2a-message.js';
import { a2aTaskOf } from './a2a-task.mapper.js';
import { type A2aPushStore, NO_SDK_SENDER } from './a2a-push-store.js';
import { A2aTaskStore } from './a2a-task-store.js';
import { callerOf } from './a2a-user.js';
import { agentCardOf } from './agent-card.js';
import type { IssuerMetadata } from '../identity/oauth/issuer-metadata.js';
import { isUuid } from '../common/uuid.js';
import { type A2aContexts, CONTEXT_ID_MAX_CHARS } from './a2a-contexts.js';
import { instantOf } from './a2a-timestamp.js';

/**
 * The SDK's DefaultRequestHandler on our store and executor, with what it cannot know: each call is
 * audited (transport a2a, JSON-RPC 1.0 method names whatever the wire version), a message is checked
 * by agent_run's rules before the SDK starts a task for it, and CancelTask goes through the queue, so
 * it cancels a Task accepted on any surface and run by any replica, not only one this process follows.
 */
export class A2aRequestHandler extends DefaultRequestHandler {
  private readonly limits: AgentRunLimits;
  private readonly tiers: string[];
  private readonly cancelWaitMs: number;
  private readonly maxQueued: number;

  constructor(
    private readonly conversations: ConversationService,
    private readonly feed: TaskFeed,
    private readonly audit: AuditService,
    private readonly inputFiles: InputFilesStager,
    config: AppConfig,
    pushStore: A2aPushStore,
    private readonly contexts: A2aContexts,
    private readonly intake: ConversationIntake,
    issuer?: IssuerMetadata,
  ) {
    super(agentCardOf(config, issuer), new A2aTaskStore(conversations, contexts), new A2aExecutor(conversations, feed, contexts, intake), undefined, pushStore, NO_SDK_SENDER);
    this.limits = agentRunLimits(config);
    this.tiers = [...tierModels(config.ollama).keys()];
    // A running Task's runner sees the cancel flag at its next lease renewal, within a lease period.
    this.cancelWaitMs = config.queue.leaseMs;
    this.maxQueued = config.queue.maxQueuedPerUser;
  }

  /** Blocks until the Task is terminal unless `configuration.returnImmediately` asks for the submitted Task at once. */
  override async sendMessage(params: SendMessageRequest, context: ServerCallContext): Promise<Message | Task> {
    const action = 'a2a SendMessage';
    await this.prepare(params, context, action, params.configuration?.returnImmediately !== true);
    return this.auditedFailure(context, action, () => super.sendMessage(params, context));
  }

  override async *sendMessageStream(params: SendMessageRequest, context: ServerCallContext): AsyncGenerator<StreamResponse, void, undefined> {
    await this.prepare(params, context, 'a2a SendStreamingMessage', true);
    yield* super.sendMessageStream(params, context);
  }

  override getTask(params: GetTaskRequest, context: ServerCallContext): Promise<Task> {
    return this.audited(context, 'a2a GetTask', params.id, () => {
      checkHistoryLength(params.historyLength);
      return super.getTask(params, context);
    });
  }

  override listTasks(params: ListTasksRequest, context: ServerCallContext): Promise<ListTasksResponse> {
    const detail = { context_id: params.contextId.slice(0, CONTEXT_ID_MAX_CHARS) || null, status: params.status ?? null };
    return this.audited(
      context,
      'a2a ListTasks',
      null,
      () => {
        checkHistoryLength(params.historyLength);
        const statusTimestampAfter = params.statusTimestampAfter ? instantOf(params.statusTimestampAfter) : undefined;
        return super.listTasks({ ...params, statusTimestampAfter }, context);
      },
      detail,
    );
  }

  override async *resubscribe(params: SubscribeToTaskRequest, context: ServerCallContext): AsyncGenerator<StreamResponse, void, undefined> {
    await this.audited(context, 'a2a SubscribeToTask', params.id, async () => undefined);
    // Not the SDK's: its event bus exists only on the replica whose call started the Task. The Task's
    // own events reach every replica, so a subscriber anywhere follows it as the original stream does.
    const task = isUuid(params.id) ? await this.conversations.find(callerOf(context), params.id) : null;
    if (!task) throw new TaskNotFoundError(`Task not found: ${params.id.slice(0, 64)}`);
    if (isTerminal(task.status)) throw new UnsupportedOperationError(`Task ${task.id} is in a terminal state (${task.status}) and cannot be subscribed to.`);
    yield { payload: { $case: 'task', value: a2aTaskOf(await this.contexts.view(await this.conversations.withFiles(task))) } };
    const pending: AgentExecutionEvent[] = [];
    let wake: (() => void) | null = null;
    let done = false;
    const following = new A2aExecutor(this.conversations, this.feed, this.contexts, this.intake)
      .follow(task.id, (event) => (pending.push(event), wake?.()))
      .finally(() => ((done = true), wake?.()));
    for (;;) {
      for (let event = pending.shift(); event; event = pending.shift()) yield streamResponseOf(event);
      if (done) break;
      await new Promise<void>((resolve) => (wake = resolve));
      wake = null;
    }
    await following;
  }

  override createTaskPushNotificationConfig(params: TaskPushNotificationConfig, context: ServerCallContext): Promise<TaskPushNotificationConfig> {
    return this.auditedPush(context, 'a2a CreateTaskPushNotificationConfig', params.taskId, () => super.createTaskPushNotificationConfig(params, context), {
      url: params.url.slice(0, 500),
    });
  }

  override getTaskPushNotificationConfig(params: GetTaskPushNotificationConfigRequest, context: ServerCallContext): Promise<TaskPushNotificationConfig> {
    return this.auditedPush(context, 'a2a GetTaskPushNotificationConfig', params.taskId, () => super.getTaskPushNotificationConfig(params, context));
  }

  override listTaskPushNotificationConfigs(params: ListTaskPushNotificationConfigsRequest, context: ServerCallContext): Promise<ListTaskPushNotificationConfigsResponse> {
    return this.auditedPush(context, 'a2a ListTaskPushNotificationConfigs', params.taskId, () => super.listTaskPushNotificationConfigs(params, context));
  }

  override deleteTaskPushNotificationConfig(params: DeleteTaskPushNotificationConfigRequest, context: ServerCallContext): Promise<void> {
    return this.auditedPush(context, 'a2a DeleteTaskPushNotificationConfig', params.taskId, () => super.deleteTaskPushNotificationConfig(params, context));
  }

  override cancelTask(params: CancelTaskRequest, context: ServerCallContext): Promise<Task> {
    return this.audited(context, 'a2a CancelTask', params.id, async () => {
      const caller = callerOf(context);
      const task = isUuid(params.id) ? await this.conversations.find(caller, params.id) : null;
      if (!task) throw new TaskNotFoundError(`Task not found: ${params.id}`);
      if (task.status === 'completed' || task.status === 'failed') throw new TaskNotCancelableError(`Task ${task.id} is already ${task.status}`);
      if (task.status !== 'cancelled') await this.conversations.cancel(caller, task.id);
      const now = (await this.feed.untilTerminal(task.id, AbortSignal.timeout(this.cancelWaitMs))) ?? (await this.conversations.find(caller, task.id))!;
      if (now.status === 'completed' || now.status === 'failed') throw new TaskNotCancelableError(`Task ${task.id} ended ${now.status} before the cancellation took effect`);
      return a2aTaskOf(await this.contexts.view(await this.conversations.withFiles(now)));
    });
  }

  /** Validates the message by agent_run's rules and hands the input to the executor; a refusal is audited and stores nothing. */
  private async prepare(params: SendMessageRequest, context: ServerCallContext, action: string, follow: boolean): Promise<void> {
    if (!params.message) return; // the SDK refuses it
    try {
      checkHistoryLength(params.configuration?.historyLength);
      let input = taskRequestOf(params.message, this.limits, this.tiers);
      // Issue 24: a fork is made before the SDK starts a task, so a refusal is this request's error.
      if (input.forkFrom) {
        const forkFrom = input.forkFrom;
        const sessionId = await this.conversations.fork(callerOf(context), forkFrom).catch((error: unknown) => {
          throw isAgentError(error) ? new RequestMalformedError(`message.metadata.${error.message}`) : error;
        });
        input = { ...input, sessionId, forkFrom: undefined };
      }
      // A message naming a Task is a correction for it (the SDK checks that the caller sees it and that it has not ended).
      const steer = Boolean(params.message.taskId);
      // Checked here for an A2A error; the queue checks again, exactly, when it stores the Task.
      const queued = await this.conversations.countOwned(callerOf(context), { status: ['queued'] });
      if (!steer && queued >= this.maxQueued) {
        throw new UnsupportedOperationError(
          `queue_full: you already have ${queued} tasks waiting, the most one user may queue (queue.max_queued_per_user: ${this.maxQueued}); retry once some have started`,
        );
      }
      // Issue 39: a user past today's token quota, refused with the quota and its reset (the queue checks again); a
      // correction to a running Task queues nothing.
      if (!steer) {
        await this.conversations.assertWithinQuota(callerOf(context)).catch((error: unknown) => {
          throw error instanceof QuotaExceeded ? new UnsupportedOperationError(`quota_exceeded: ${error.message}`) : error;
        });
      }
      // Last before the files: a new name creates its (empty) session (a correction's Task has its session).
      if (params.message.contextId && !steer) input = { ...input, sessionId: await this.contexts.sessionFor(callerOf(context), params.message.contextId) };
      input = await this.inputFiles.stage(callerOf(context), input).catch((error: unknown) => {
        throw isAgentError(error) ? new RequestMalformedError(error.message) : error;
      });
      context.state.set(ACCEPTED_INPUT, input).set(ACCEPT_ACTION, action).set(FOLLOW, follow).set(STEER, steer);
    } catch (error) {
      await this.record(context, action, error, null);
      throw error;
    }
  }

  /** The accepting event commits with the Task (in the executor); only a failure to start is recorded here. */
  private async auditedFailure<T>(context: ServerCallContext, action: string, call: () => Promise<T>): Promise<T> {
    try {
      return await call();
    } catch (error) {
      await this.record(context, action, error, null);
      throw error;
    }
  }

  private async audited<T extends Task | ListTasksResponse | undefined>(
    context: ServerCallContext,
    action: string,
    taskId: string | null,
    call: () => Promise<T>,
    detail: Record<string, unknown> = {},
  ): Promise<T> {
    let result: T;
    try {
      result = await call();
    } catch (error) {
      await this.record(context, action, error, taskId, detail);
      throw error;
    }
    const task: Task | null = result && 'id' in result ? result : null;
    await this.audit.record({
      caller: callerOf(context),
      action,
      outcome: 'ok',
      taskId: task?.id ?? null,
      sessionId: sessionIdOf(task),
      detail: { ...detail, version: context.requestedVersion },
    });
    return result;
  }

  /** A push-config call, audited with the Task it names (a bad id or another user's Task is refused by the SDK's lookup). */
  private async auditedPush<T>(context: ServerCallContext, action: string, taskId: string, call: () => Promise<T>, detail: Record<string, unknown> = {}): Promise<T> {
    if (!isUuid(taskId)) {
      const error = new TaskNotFoundError(`Task not found: ${taskId.slice(0, 64)}`);
      await this.record(context, action, error, taskId, detail);
      throw error;
    }
    try {
      const result = await call();
      await this.audit.record({ caller: callerOf(context), action, outcome: 'ok', taskId, detail: { ...detail, version: context.requestedVersion } });
      return result;
    } catch (error) {
      await this.record(context, action, error, taskId, detail);
      throw error;
    }
  }

  private async record(context: ServerCallContext, action: string, error: unknown, taskId: string | null, detail: Record<string, unknown> = {}): Promise<void> {
    const known = error instanceof A2AError;
    await this.audit.record({
      caller: callerOf(context),
      action,
      outcome: known ? 'rejected' : 'error',
      taskId: null,
      detail: { ...detail, ...(taskId ? { task_id: taskId.slice(0, 64) } : {}), version: context.requestedVersion, reason: (error as Error).message },
    });
  }
}

/** A2A §3.2.4: historyLength, when given, is a non-negative integer (the SDK's JSON-RPC path takes any number). */
function checkHistoryLength(historyLength: number | undefined): void {
  if (historyLength !== undefined && !(Number.isInteger(historyLength) && historyLength >= 0)) {
    throw new RequestMalformedError(`historyLength: must be a non-negative integer (got ${String(historyLength).slice(0, 32)})`);
  }
}

/** The session behind a Task's contextId, which names it (A2aContexts), from the Task's metadata. */
const sessionIdOf = (task: Task | null): string | null => (typeof task?.metadata?.session_id === 'string' ? task.metadata.session_id : null);

/** An executor event as the stream response SubscribeToTask sends. */
function streamResponseOf(event: AgentExecutionEvent): StreamResponse {
  switch (event.kind) {
    case 'task':
      return { payload: { $case: 'task', value: event.data } };
    case 'statusUpdate':
      return { payload: { $case: 'statusUpdate', value: event.data } };
    case 'artifactUpdate':
      return { payload: { $case: 'artifactUpdate', value: event.data } };
    case 'message':
      return { payload: { $case: 'message', value: event.data } };
  }
}
