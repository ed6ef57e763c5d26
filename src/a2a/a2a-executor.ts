import { AgentEvent, type AgentExecutionEvent, type AgentExecutor, type ExecutionEventBus, type RequestContext } from '@a2a-js/sdk/server';
import { mapTraceStep, subtaskStep, type AgentStep } from '../conversation/agent-steps.js';
import { TaskNotFoundError } from '@a2a-js/sdk/errors';
import type { ConversationIntake } from '../conversation/conversation-intake.js';
import { type ConversationService, isTerminal } from '../conversation/conversation.service.js';
import type { TaskFeed } from '../conversation/task-feed.js';
import { applyDelta } from '../events/answer-drafts.js';
import { commonPrefix } from '../common/common-prefix.js';
import type { TaskRequest } from '../queue/task-request.js';
import { A2A_STATE, a2aMetadataOf, a2aStatusOf, a2aTaskOf, answerArtifact, artifactsOf, followUpMessage, progressMessage, steeredMessage } from './a2a-task.mapper.js';
import { callerOf, traceOf } from './a2a-user.js';
import type { A2aContexts, A2aView } from './a2a-contexts.js';

/** Keys of ServerCallContext.state the request handler sets for the executor. */
export const ACCEPTED_INPUT = 'oam.input';
export const ACCEPT_ACTION = 'oam.action';
export const FOLLOW = 'oam.follow';
/** Set when the message names a working Task (`message.taskId`): a correction for it (issue 35). */
export const STEER = 'oam.steer';

/**
 * Runs an A2A message as an agent Task: queues it (the SDK's task id becomes the Task id; the session
 * is the message's contextId or a new one), publishes the submitted Task, and, unless the caller asked
 * for it at once, follows the Task's events: WORKING status updates with the steps, the answer artifact
 * as the model writes it (`append: true` chunks; a restarted answer replaces it with `append: false`),
 * its last chunk (`lastChunk: true`) and the other artifacts when the Task ends, then the terminal
 * status. The worker runs the Task whatever happens to this call.
 */
export class A2aExecutor implements AgentExecutor {
  constructor(
    private readonly conversations: ConversationService,
    private readonly feed: TaskFeed,
    private readonly contexts: A2aContexts,
    private readonly intake: ConversationIntake,
  ) {}

  async execute(context: RequestContext, bus: ExecutionEventBus): Promise<void> {
    const state = context.context.state;
    const input = state.get(ACCEPTED_INPUT) as TaskRequest;
    const action = state.get(ACCEPT_ACTION) as string;
    const caller = callerOf(context.context);
    const accepting = { action, detail: { version: context.context.requestedVersion } };
    if (state.get(STEER) === true) return this.steer(context, bus, input, accepting);
    const outcome = await this.intake.submit(caller, { request: { ...input, taskId: context.taskId, trace: traceOf(context.context) }, surface: 'a2a' }, accepting);
    if (outcome.kind !== 'queued') throw new Error('a new request is always queued');
    // Queued just now, it has changed no file yet.
    bus.publish(AgentEvent.task(a2aTaskOf(await this.contexts.view({ ...outcome.task, files: [] }))));
    if (state.get(FOLLOW) === true) await this.follow(outcome.task.id, (event) => bus.publish(event));
  }

  /**
   * A message naming a working Task: the Task takes it as a correction, and the call follows that Task
   * as a new message would. When the Task had passed its last model call, the message is queued as
   * the context's next Task, and the status update says which (metadata `followUpTaskId`).
   */
  private async steer(context: RequestContext, bus: ExecutionEventBus, input: TaskRequest, accepted: { action: string; detail: Record<string, unknown> }): Promise<void> {
    const caller = callerOf(context.context);
    const outcome = await this.intake.submit(caller, { request: input, surface: 'a2a', steer: { taskId: context.taskId } }, accepted);
    if (outcome.kind === 'not_found') throw new TaskNotFoundError(`Task not found: ${context.taskId}`);
    const task = await this.contexts.view(await this.conversations.withFiles((await this.conversations.find(caller, context.taskId))!));
    bus.publish(AgentEvent.task(a2aTaskOf(task)));
    const said = outcome.kind === 'steered' ? steeredMessage(task) : followUpMessage(task, outcome.task.id);
    bus.publish(
      AgentEvent.statusUpdate({
        taskId: task.id,
        contextId: task.contextId,
        status: { state: A2A_STATE[task.status], message: said.message, timestamp: task.updatedAt },
        metadata: said.metadata,
      }),
    );
    if (context.context.state.get(FOLLOW) === true) await this.follow(task.id, (event) => bus.publish(event));
  }

  /** The Task's updates as A2A events, until it is terminal; also what SubscribeToTask streams, on any replica. */
  async follow(taskId: string, publish: (event: AgentExecutionEvent) => void): Promise<void> {
    const bus = { publish };
    let draft = '';
    let shown = '';
    // A Task's conversation, and so its contextId, never changes: looked up once.
    let contextId: string | null = null;
    const chunk = (task: A2aView, target: string, lastChunk: boolean) => {
      const common = commonPrefix(shown, target);
      // A target still a prefix of what was sent waits for more text (a retried call writing it again).
      if (!lastChunk && (common === target.length || target === shown)) return;
      const append = common === shown.length && shown !== '';
      bus.publish(
        AgentEvent.artifactUpdate({
          taskId: task.id,
          contextId: task.contextId,
          artifact: answerArtifact(task, append ? target.slice(common) : target),
          append,
          lastChunk,
          metadata: {},
        }),
      );
      shown = target;
    };
    for await (const { task: row, steps, moved, answer } of this.feed.follow(taskId)) {
      contextId ??= (await this.contexts.view(row)).contextId;
      const task = { ...row, contextId };
      const subtask = moved ? subtaskStep(task) : null;
      const agentSteps: AgentStep[] = [...(subtask ? [subtask] : []), ...steps.map(mapTraceStep)];
      if (answer && !isTerminal(task.status)) chunk(task, (draft = applyDelta(draft, answer)), false);
      if (isTerminal(task.status)) {
        for (const artifact of artifactsOf(await this.conversations.withFiles(task))) {
          if (artifact.artifactId === answerArtifact(task, '').artifactId && shown !== '') chunk(task, task.result ?? '', true);
          else bus.publish(AgentEvent.artifactUpdate({ taskId: task.id, contextId, artifact, append: false, lastChunk: true, metadata: {} }));
        }
        if (task.status !== 'completed' && shown !== '') chunk(task, '', true);
        const status = a2aStatusOf(task, await this.conversations.asking(task.id));
        bus.publish(AgentEvent.statusUpdate({ taskId: task.id, contextId, status, metadata: { ...a2aMetadataOf(task), agent_steps: agentSteps } }));
        return;
      }
      const status = { state: A2A_STATE[task.status], message: progressMessage(task, agentSteps), timestamp: task.updatedAt };
      bus.publish(AgentEvent.statusUpdate({ taskId: task.id, contextId, status, metadata: {} }));
    }
  }

  /** Not reached: the request handler cancels through the queue (any surface's Task, any replica's run). */
  async cancelTask(): Promise<void> {}
}
