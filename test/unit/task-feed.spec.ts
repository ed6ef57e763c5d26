import { afterEach, describe, expect, it, jest } from '@jest/globals';
import type { AnswerDraftRepository } from '../../src/events/answer-draft.repository.js';
import { AnswerDrafts } from '../../src/events/answer-drafts.js';
import { TaskEvents } from '../../src/events/task-events.js';
import type { ApprovalsService } from '../../src/approvals/approvals.service.js';
import type { StepRecord, TraceRepository } from '../../src/agent/trace.repository.js';
import { ConversationService } from '../../src/conversation/conversation.service.js';
import { TaskFeed, type TaskUpdate } from '../../src/conversation/task-feed.js';
import type { SessionFork } from '../../src/queue/session-fork.js';
import type { TaskReadModels } from '../../src/queue/task-read-model.js';
import { MemoryAnswerDrafts } from '../support/fakes/memory-answer-drafts.js';
import { MemoryTrace } from '../support/fakes/memory-trace.js';
import { ACCEPTED, buildQueue, callerOf, requestOf } from '../support/fakes/queue.js';

/**
 * TaskFeed at the service level (issue 42): what a Chat stream (and A2A's, and the console's) sees of a Task, over
 * the real queue (test/support/fakes/queue.ts), TaskEvents and ConversationService, the trace and the answer draft
 * in memory. The generator is pulled one update at a time: the events published before a pull are one batch.
 */
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  jest.useRealTimers();
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

async function setUp(config: Record<string, unknown> = {}) {
  const built = buildQueue(config);
  const trace = new MemoryTrace();
  const events = new TaskEvents(built.config, built.hub);
  await events.onModuleInit();
  const draftRows = new MemoryAnswerDrafts();
  const drafts = new AnswerDrafts(draftRows as unknown as AnswerDraftRepository, events);
  // Used for reading only: the spec writes the draft rows itself (what the process that runs the Task stored).
  const conversations = new ConversationService(built.queue, built.sessions, trace as unknown as TraceRepository, {} as SessionFork, {} as ApprovalsService, {} as TaskReadModels);
  const feed = new TaskFeed(conversations, events, drafts, built.config);
  cleanups.push(async () => {
    await built.queue.shutdown(0);
    await events.onApplicationShutdown();
  });
  const task = await built.queue.enqueue(callerOf('alice'), requestOf('write a poem'), ACCEPTED);
  await built.agent.started(task.id);
  const emit = (event: Parameters<typeof built.hub.publish>[0]) => built.hub.publish(event);
  return { ...built, feed, trace, draftRows, task, emit };
}

/** What a client shows of an update: the status, the step names, whether it moved, the answer change. */
const shown = (update: IteratorResult<TaskUpdate>) =>
  update.done
    ? 'done'
    : {
        status: update.value.task.status,
        current: update.value.task.progress.currentTask,
        steps: update.value.steps.map((step) => step.name),
        moved: update.value.moved,
        answer: update.value.answer,
      };

describe('TaskFeed: what a stream sees', () => {
  it('the row first, then each status, step and answer change once, the terminal row last', async () => {
    const { feed, task, agent, trace, emit } = await setUp();
    const updates = feed.follow(task.id);
    expect(shown(await updates.next())).toEqual({ status: 'planning', current: '', steps: [], moved: true, answer: null });

    await agent.report(task.id, { status: 'running', currentTask: 'drafting' });
    await emit({ type: 'status', taskId: task.id, status: 'running', currentTask: 'drafting' });
    expect(shown(await updates.next())).toEqual({ status: 'running', current: 'drafting', steps: [], moved: true, answer: null });

    // Two deltas before the next pull: one update, the answer grown by both; the row is not read again.
    await emit({ type: 'answer_delta', taskId: task.id, offset: 0, text: 'Roses ' });
    await emit({ type: 'answer_delta', taskId: task.id, offset: 6, text: 'are red' });
    expect(shown(await updates.next())).toEqual({ status: 'running', current: 'drafting', steps: [], moved: false, answer: { offset: 0, text: 'Roses are red' } });

    // A retried answer restarts at an earlier offset: the client drops what follows it.
    await emit({ type: 'answer_delta', taskId: task.id, offset: 6, text: 'were blue' });
    expect(shown(await updates.next())).toEqual({ status: 'running', current: 'drafting', steps: [], moved: false, answer: { offset: 6, text: 'were blue' } });

    const step: StepRecord = { taskId: task.id, subtask: '', kind: 'model_call', name: 'ollama', outcome: 'ok', durationMs: 1, startedAt: '2026-12-01T09:00:00.000Z', detail: {} };
    await trace.append(step);
    await emit({ type: 'step', taskId: task.id, step });
    expect(shown(await updates.next())).toEqual({ status: 'running', current: 'drafting', steps: ['ollama'], moved: false, answer: null });

    agent.complete(task.id, 'Roses were blue.');
    expect(shown(await updates.next())).toMatchObject({ status: 'completed', steps: [], moved: true });
    expect(shown(await updates.next())).toBe('done');
  });

  it('catches up from the stored draft when a delta was missed (a gap in seq), and applies the later one on it', async () => {
    const { feed, task, draftRows, emit } = await setUp();
    const updates = feed.follow(task.id);
    await updates.next();
    await emit({ type: 'answer_delta', taskId: task.id, offset: 0, text: 'one ', seq: 1 });
    expect(shown(await updates.next())).toMatchObject({ answer: { offset: 0, text: 'one ' } });
    // Delta 2 never arrived here (another replica's notification was dropped); the runner stored it in the draft.
    await draftRows.write(task.id, { text: 'one two ', seq: 2 });
    await emit({ type: 'answer_delta', taskId: task.id, offset: 8, text: 'three', seq: 3 });
    expect(shown(await updates.next())).toMatchObject({ answer: { offset: 4, text: 'two three' } });
  });

  it('reads the row after queue.progress_poll_ms without any event, so a missed notification only delays', async () => {
    jest.useFakeTimers({ doNotFake: ['setImmediate', 'nextTick', 'queueMicrotask'] });
    const { feed, task, agent, config } = await setUp();
    const updates = feed.follow(task.id);
    await updates.next();
    await agent.report(task.id, { currentTask: 'quietly working' });
    const next = updates.next();
    await jest.advanceTimersByTimeAsync(config.queue.progressPollMs);
    expect(shown(await next)).toMatchObject({ current: 'quietly working', moved: true });
  });

  it('ends when the signal aborts, and a follower of an ended Task gets its terminal row once', async () => {
    const { feed, task, agent, ended } = await setUp();
    const abort = new AbortController();
    const updates = feed.follow(task.id, abort.signal);
    await updates.next();
    const next = updates.next();
    abort.abort();
    expect(shown(await next)).toBe('done');
    agent.complete(task.id, 'done.');
    await ended(task.id);
    expect(await feed.untilTerminal(task.id)).toMatchObject({ id: task.id, status: 'completed', result: 'done.' });
    expect(await feed.untilTerminal('00000000-0000-4000-8000-000000000000')).toBeNull();
  });
});
