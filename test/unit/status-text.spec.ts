import { describe, expect, it } from '@jest/globals';
import { TASK_STATUSES } from '../../src/queue/task-status.js';
import { formatStatusText, STATUS_MESSAGES, type TaskView } from '../../src/tools/status-text.js';

const view = (overrides: Partial<TaskView>): TaskView => ({
  taskId: '9ab4a40b-86fe-432a-904f-8e429c01ea8b',
  sessionId: '2a8105cc-84f9-4d37-a5bd-e48e04654eb7',
  status: 'running',
  completedSubtasks: 0,
  totalSubtasks: 1,
  currentTask: 'ollama chat',
  inputTokens: 1536,
  outputTokens: 284,
  criticalPathTokens: 0,
  result: null,
  createdAt: '',
  updatedAt: '',
  ...overrides,
});

describe('agent_status text (spec §3.4)', () => {
  it('renders the spec running example exactly', () => {
    expect(formatStatusText(view({}))).toBe(`task_id: 9ab4a40b-86fe-432a-904f-8e429c01ea8b
session_id: 2a8105cc-84f9-4d37-a5bd-e48e04654eb7
status: running
completed_tasks: 0/1
current_task: ollama chat
token_usage: input=1536 output=284 total=1820
critical_path_tokens: 0
message: タスクを実行しています。
result:`);
  });

  it('has a message for each of the six states, in the spec style', () => {
    expect(Object.keys(STATUS_MESSAGES).sort()).toEqual([...TASK_STATUSES].sort());
    for (const status of TASK_STATUSES) expect(STATUS_MESSAGES[status]).toMatch(/^タスク.+。$/);
    expect(formatStatusText(view({ status: 'cancelled', result: 'Cancelled on request.' }))).toContain('message: タスクは取り消されました。\nresult: Cancelled on request.');
  });

  it('names the limit a completed Task stopped at, and the corrections a running one took (issue 35)', () => {
    const stopped = view({ status: 'completed', stoppedBy: 'max_tool_calls', result: 'Read 3 files; 7 left.' });
    expect(formatStatusText(stopped)).toContain(
      'message: タスクが完了しました。上限 max_tool_calls に達したため、ツールの実行を止めて要約で回答しました。\nresult: Read 3 files; 7 left.',
    );
    expect(formatStatusText(stopped, 'en')).toContain('message: The task has completed. It stopped at the limit max_tool_calls and answered with a summary.');
    expect(formatStatusText(view({ steerCount: 2 }))).toContain('message: タスクを実行しています。修正指示を2件受け取りました。');
    // The key format stays the spec's: one line per key, in order.
    expect(
      formatStatusText(view({ steerCount: 1 }))
        .split('\n')
        .map((line) => line.split(':')[0]),
    ).toEqual(['task_id', 'session_id', 'status', 'completed_tasks', 'current_task', 'token_usage', 'critical_path_tokens', 'message', 'result']);
  });
});
