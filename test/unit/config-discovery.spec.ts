import { describe, expect, it } from '@jest/globals';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describeConfigSource, loadConfig, locateConfig } from '../../src/config/config.loader.js';
import { formatAcceptedText, formatNotFoundText, formatStatusText, type TaskView } from '../../src/tools/status-text.js';

const INSTALLED = join(import.meta.dirname, '../../agent.yaml');

describe('which configuration file the service reads, and why', () => {
  it('takes AGENT_CONFIG, else agent.yaml in the working directory, else the one next to the installation', () => {
    const empty = mkdtempSync(join(tmpdir(), 'oam-cwd-'));
    expect(locateConfig({}, empty)).toEqual({ file: INSTALLED, reason: `no agent.yaml in the working directory (${empty}); the one next to the installation`, found: true });
    // Its relative paths resolve next to it, not in the directory the service was started from.
    expect(loadConfig({}, empty).workspace.root).toBe(join(import.meta.dirname, '../../workspace'));
    writeFileSync(join(empty, 'agent.yaml'), '{}\n');
    expect(locateConfig({}, empty)).toMatchObject({ file: join(empty, 'agent.yaml'), reason: 'agent.yaml in the working directory' });
    expect(locateConfig({ AGENT_CONFIG: 'other.yaml' }, empty)).toEqual({ file: join(empty, 'other.yaml'), reason: 'named by AGENT_CONFIG', found: false });
    expect(describeConfigSource({}, empty)).toBe(`${join(empty, 'agent.yaml')} (agent.yaml in the working directory)`);
  });
});

describe('mcp.locale', () => {
  const view: TaskView = {
    taskId: 't1',
    sessionId: 's1',
    status: 'completed',
    completedSubtasks: 1,
    totalSubtasks: 1,
    currentTask: '',
    inputTokens: 1,
    outputTokens: 2,
    criticalPathTokens: 3,
    result: 'ok',
    createdAt: '',
    updatedAt: '',
  };

  it('keeps the specified Japanese texts by default and changes only the message values in en', () => {
    expect(formatStatusText(view)).toContain('message: タスクが完了しました。');
    expect(formatAcceptedText('t1', 's1')).toContain('message: タスク t1 をセッション s1 に登録しました。');
    expect(formatNotFoundText('t1')).toBe('task_id: t1\nstatus: failed\nmessage: タスク t1 が見つかりません。');
    const en = formatStatusText(view, 'en');
    expect(en).toContain('message: The task has completed.');
    expect(en.split('\n').map((line) => line.split(':')[0])).toEqual(
      formatStatusText(view)
        .split('\n')
        .map((line) => line.split(':')[0]),
    );
    expect(formatNotFoundText('t1', 'en')).toBe('task_id: t1\nstatus: failed\nmessage: Task t1 was not found.');
  });
});
