import { describe, expect, it } from '@jest/globals';
import type { TaskStepEntity } from '../../src/agent/task-step.entity.js';
import { deliverablesOf, downloadPath } from '../../src/admin/task-deliverables.js';

const SESSION = '11111111-2222-4333-8444-555555555555';
let seq = 0;
const step = (kind: TaskStepEntity['kind'], outcome: string, detail: Record<string, unknown>): TaskStepEntity => ({
  seq: ++seq,
  taskId: 't',
  subtask: '',
  kind,
  name: 'write_file',
  outcome,
  inputTokens: 0,
  outputTokens: 0,
  durationMs: 1,
  detail: JSON.stringify(detail),
  startedAt: '',
});

describe('the deliverables of a Task (GET /admin/tasks/:id), from its trace', () => {
  it('lists each file once, in the order first written, with what was done to it first and the size of the last write', () => {
    const trace = [
      step('file_op', 'ok', { arguments: {}, path: 'b.md', bytes: 3, created: false }),
      step('file_op', 'ok', { arguments: {}, path: 'docs/a b#.txt', bytes: 5, created: true }),
      step('command', 'ok', { exitCode: 0, output: '' }),
      step('tool_call', 'error', { arguments: {}, error: 'denied' }),
      step('file_op', 'denied', { arguments: {}, path: 'never.txt' }),
      step('file_op', 'ok', { arguments: {}, path: 'docs/a b#.txt', bytes: 9, created: false }),
    ];
    expect(deliverablesOf(SESSION, trace)).toEqual([
      {
        path: 'b.md',
        change: 'modified',
        bytes: 3,
        uri: `agent-session://${SESSION}/files/b.md`,
        mime_type: 'text/markdown',
        download_path: `/admin/sessions/${SESSION}/files/b.md`,
      },
      {
        path: 'docs/a b#.txt',
        change: 'created',
        bytes: 9,
        uri: `agent-session://${SESSION}/files/docs/a%20b%23.txt`,
        mime_type: 'text/plain',
        download_path: `/admin/sessions/${SESSION}/files/docs/a%20b%23.txt`,
      },
    ]);
  });

  it('marks the files an undo put back as restored, without a size', () => {
    expect(deliverablesOf(SESSION, [step('file_op', 'ok', { path: 'x.js', undoOf: 'other-task' })])).toMatchObject([{ path: 'x.js', change: 'restored', bytes: null }]);
  });

  it('has none for a Task that wrote nothing', () => {
    expect(deliverablesOf(SESSION, [step('model_call', 'ok', { content: 'hi' })])).toEqual([]);
  });

  it('encodes each path segment of the download, keeping the slashes', () => {
    expect(downloadPath(SESSION, 'a/ü?/c')).toBe(`/admin/sessions/${SESSION}/files/a/%C3%BC%3F/c`);
  });
});
