import { describe, expect, it } from '@jest/globals';
import { a2aTaskOf } from '../../src/a2a/a2a-task.mapper.js';
import { mapListedTask, mapTask } from '../../src/admin/admin-views.js';
import { fileChangeOf, type StepRecord } from '../../src/agent/trace.repository.js';
import { completionOf, lastChunkOf } from '../../src/chat/chat-views.js';
import { subtaskStep } from '../../src/conversation/agent-steps.js';
import { listedTask, taskReadModel, type WithFiles } from '../../src/queue/task-read-model.js';
import { TaskEntity } from '../../src/queue/task.entity.js';
import { mapTaskView } from '../../src/tools/task-view.mapper.js';

const TASK = '9ab4a40b-86fe-432a-904f-8e429c01ea8b';
const SESSION = '2a8105cc-84f9-4d37-a5bd-e48e04654eb7';
const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';

/** A row as the repository hydrates it; PostgreSQL's driver may hand `seq` over as a string. */
function row(overrides: Partial<TaskEntity> = {}): TaskEntity {
  return Object.assign(new TaskEntity(), {
    seq: '42' as unknown as number,
    id: TASK,
    sessionId: SESSION,
    owner: 'alice',
    ownerGroups: '["dev"]',
    ownerEmail: null,
    request: 'write notes/out.txt',
    temperature: null,
    status: 'completed',
    completedSubtasks: 2,
    totalSubtasks: 3,
    currentTask: 'summary',
    inputTokens: 1536,
    outputTokens: 284,
    criticalPathTokens: 900,
    client: 'claude-code/2.0',
    surface: 'chat',
    answersInPlace: false,
    unattended: null,
    mode: 'agent',
    tier: 'default',
    budget: null,
    stoppedBy: null,
    steerCount: 0,
    steeringClosed: false,
    result: 'Done.',
    cancelRequested: false,
    attempt: 1,
    leaseOwner: null,
    leaseExpiresAt: null,
    traceId: TRACE,
    spanId: '00f067aa0ba902b7',
    traceParent: null,
    traceState: null,
    createdAt: '2026-12-04T10:00:00.000Z',
    updatedAt: '2026-12-04T10:00:09.000Z',
    startedAt: '2026-12-04T10:00:01.500Z',
    finishedAt: '2026-12-04T10:00:09.000Z',
    ...overrides,
  } satisfies TaskEntity);
}

const withFiles = (task: TaskEntity, paths: string[]): WithFiles => ({ ...taskReadModel(task), files: paths.map((path) => ({ path, change: 'created', bytes: 5 })) });

describe('the read model of a Task', () => {
  it('is built from the row: usage with its total, progress, duration, and the failure reason as `error`', () => {
    const view = taskReadModel(row());
    expect(view).toEqual({
      id: TASK,
      sessionId: SESSION,
      owner: 'alice',
      request: 'write notes/out.txt',
      status: 'completed',
      mode: 'agent',
      tier: 'default',
      surface: 'chat',
      startedBy: null,
      attempt: 1,
      progress: { completedSubtasks: 2, totalSubtasks: 3, currentTask: 'summary', criticalPathTokens: 900 },
      usage: { input: 1536, output: 284, total: 1820 },
      stoppedBy: null,
      steerCount: 0,
      result: 'Done.',
      error: null,
      createdAt: '2026-12-04T10:00:00.000Z',
      updatedAt: '2026-12-04T10:00:09.000Z',
      startedAt: '2026-12-04T10:00:01.500Z',
      finishedAt: '2026-12-04T10:00:09.000Z',
      durationMs: 7500,
      traceId: TRACE,
    });
    expect(taskReadModel(row({ status: 'failed', result: 'Stopped: the round limit' })).error).toBe('Stopped: the round limit');
    expect(taskReadModel(row({ status: 'cancelled', result: null })).error).toBe('');
    expect(taskReadModel(row({ status: 'running', result: null, finishedAt: null })).durationMs).toBeNull();
    expect(listedTask(row()).seq).toBe(42);
  });

  it('gives each edge its wire shape unchanged (admin, agent_status, Chat API, A2A)', () => {
    const task = row();
    expect(JSON.stringify(mapTask(taskReadModel(task), null))).toBe(
      JSON.stringify({
        task_id: TASK,
        session_id: SESSION,
        owner: 'alice',
        request: 'write notes/out.txt',
        status: 'completed',
        completed_tasks: 2,
        total_tasks: 3,
        current_task: 'summary',
        token_usage: { input: 1536, output: 284, total: 1820 },
        critical_path_tokens: 900,
        result: 'Done.',
        attempt: 1,
        surface: 'chat',
        started_by: null,
        created_at: '2026-12-04T10:00:00.000Z',
        started_at: '2026-12-04T10:00:01.500Z',
        finished_at: '2026-12-04T10:00:09.000Z',
        queue_position: null,
        duration_ms: 7500,
        trace_id: TRACE,
      }),
    );
    expect(mapListedTask(taskReadModel(row({ request: 'x'.repeat(2500) })), 3)).toMatchObject({ queue_position: 3, request: expect.stringMatching(/^x{2000}/) });
    expect(mapTaskView(taskReadModel(task))).toEqual({
      taskId: TASK,
      sessionId: SESSION,
      status: 'completed',
      completedSubtasks: 2,
      totalSubtasks: 3,
      currentTask: 'summary',
      inputTokens: 1536,
      outputTokens: 284,
      criticalPathTokens: 900,
      result: 'Done.',
      stoppedBy: null,
      steerCount: 0,
      createdAt: '2026-12-04T10:00:00.000Z',
      updatedAt: '2026-12-04T10:00:09.000Z',
    });
    const uri = `agent-session://${SESSION}/files/notes/out.txt`;
    expect(JSON.stringify(completionOf(withFiles(task, ['notes/out.txt']), 'agent'))).toBe(
      JSON.stringify({
        id: `chatcmpl-${TASK}`,
        object: 'chat.completion',
        created: 1796378400,
        model: 'agent',
        choices: [{ index: 0, message: { role: 'assistant', content: 'Done.', refusal: null }, logprobs: null, finish_reason: 'stop' }],
        usage: { prompt_tokens: 1536, completion_tokens: 284, total_tokens: 1820 },
        task_id: TASK,
        session_id: SESSION,
        status: 'completed',
        agent_trace_id: TRACE,
        deliverables: [uri],
      }),
    );
    expect(JSON.stringify(lastChunkOf(withFiles(row({ status: 'failed', result: 'boom' }), []), 'agent', null))).toBe(
      JSON.stringify({
        id: `chatcmpl-${TASK}`,
        object: 'chat.completion.chunk',
        created: 1796378400,
        model: 'agent',
        choices: [{ index: 0, delta: {}, logprobs: null, finish_reason: 'error' }],
        usage: { prompt_tokens: 1536, completion_tokens: 284, total_tokens: 1820 },
        task_id: TASK,
        session_id: SESSION,
        status: 'failed',
        agent_trace_id: TRACE,
        deliverables: [],
      }),
    );
    const a2a = a2aTaskOf({ ...withFiles(task, ['notes/out.txt']), contextId: 'my-conversation' });
    expect(a2a.contextId).toBe('my-conversation');
    expect(a2a.artifacts.map((artifact) => artifact.parts.map((part) => part.content))).toEqual([[{ $case: 'text', value: 'Done.' }], [{ $case: 'url', value: uri }]]);
    expect(a2a.metadata).toEqual({
      session_id: SESSION,
      status: 'completed',
      completed_tasks: 2,
      total_tasks: 3,
      current_task: 'summary',
      token_usage: { input: 1536, output: 284, total: 1820 },
      agent_trace_id: TRACE,
    });
    // A Task without a trace (telemetry off, no traceparent) shows none.
    expect(a2aTaskOf({ ...withFiles(row({ traceId: null, spanId: null }), []), contextId: SESSION }).metadata).not.toHaveProperty('agent_trace_id');
    expect(completionOf(withFiles(row({ traceId: null, spanId: null }), []), 'agent')).not.toHaveProperty('agent_trace_id');
    const failed = a2aTaskOf({ ...withFiles(row({ status: 'failed', result: 'boom' }), ['notes/out.txt']), contextId: SESSION });
    expect([failed.artifacts, failed.status?.message?.parts[0].content]).toEqual([[], { $case: 'text', value: 'boom' }]);
    expect(subtaskStep(taskReadModel(task))).toEqual({
      type: 'subtask',
      name: 'summary',
      subtask: 'summary',
      status: 'completed',
      at: '2026-12-04T10:00:09.000Z',
      completed_tasks: 2,
      total_tasks: 3,
    });
  });
});

describe('the file change a trace step records', () => {
  const step = (fields: Partial<StepRecord>): StepRecord => ({
    taskId: TASK,
    subtask: '',
    kind: 'file_op',
    name: 'write_file',
    outcome: 'ok',
    durationMs: 3,
    startedAt: '2026-12-04T10:00:02.000Z',
    detail: {},
    ...fields,
  });

  it('is a write, an edit or a restore, with the size when the step gives one', () => {
    expect(fileChangeOf(step({ detail: { arguments: {}, path: 'a.txt', bytes: 5, created: true } }))).toEqual({ path: 'a.txt', kind: 'created', bytes: 5 });
    expect(fileChangeOf(step({ name: 'edit_file', detail: { path: 'a.txt', bytes: 7, created: false } }))).toEqual({ path: 'a.txt', kind: 'modified', bytes: 7 });
    expect(fileChangeOf(step({ name: 'undo', subtask: 'undo', detail: { path: 'a.txt', undoOf: TASK } }))).toEqual({ path: 'a.txt', kind: 'restored', bytes: null });
  });

  it('is none for other steps, a step that failed, or a detail without a path', () => {
    expect(fileChangeOf(step({ kind: 'tool_call', name: 'read_file', detail: { path: 'a.txt' } }))).toBeNull();
    expect(fileChangeOf(step({ outcome: 'error', detail: { path: 'a.txt', bytes: 1 } }))).toBeNull();
    expect(fileChangeOf(step({ detail: { path: 3 } }))).toBeNull();
    expect(fileChangeOf(step({ detail: { path: 'a.txt', bytes: 1.5 } }))).toEqual({ path: 'a.txt', kind: 'modified', bytes: null });
  });
});
