import { describe, expect, it } from '@jest/globals';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { parse } from 'yaml';
import { validateConfig } from '../../src/config/agent-config.js';
import { describeConfigSource, loadConfig, locateConfig } from '../../src/config/config.loader.js';
import { runsFromClone, userConfigFile, userDataFolder } from '../../src/config/user-folders.js';
import { starterConfig } from '../../src/startup/starter-config.js';
import { formatAcceptedText, formatNotFoundText, formatStatusText, type TaskView } from '../../src/tools/status-text.js';

const INSTALLED = join(import.meta.dirname, '../../agent.yaml');

describe('which configuration file the service reads, and why', () => {
  const scratch = () => mkdtempSync(join(tmpdir(), 'oam-cwd-'));
  // A home of the test's own: the user's real ~/.config must not decide what these tests see.
  const home = scratch();
  const env = { HOME: home };
  const userFile = join(home, '.config/ollama-agent-mcp/agent.yaml');

  it('takes AGENT_CONFIG, else agent.yaml in the working directory, else the user config folder, else (in a clone) the one next to the installation', () => {
    const empty = scratch();
    expect(locateConfig(env, empty)).toMatchObject({
      file: INSTALLED,
      reason: `no agent.yaml in the working directory (${empty}) or ${userFile}; the one next to the installation`,
      found: true,
    });
    // Its relative paths resolve next to it, not in the directory the service was started from.
    expect(loadConfig(env, empty).workspace.root).toBe(join(import.meta.dirname, '../../workspace'));
    mkdirSync(dirname(userFile), { recursive: true });
    writeFileSync(userFile, 'database: { path: db/x.sqlite }\n');
    expect(locateConfig(env, empty)).toMatchObject({ file: userFile, reason: `no agent.yaml in the working directory (${empty}); the one in the user's config folder` });
    expect(loadConfig(env, empty).database.path).toBe(join(dirname(userFile), 'db/x.sqlite'));
    writeFileSync(join(empty, 'agent.yaml'), '{}\n');
    expect(locateConfig(env, empty)).toMatchObject({ file: join(empty, 'agent.yaml'), reason: 'agent.yaml in the working directory' });
    expect(locateConfig({ ...env, AGENT_CONFIG: 'other.yaml' }, empty)).toEqual({ file: join(empty, 'other.yaml'), reason: 'named by AGENT_CONFIG', found: false, base: empty });
    expect(describeConfigSource(env, empty)).toBe(`${join(empty, 'agent.yaml')} (agent.yaml in the working directory)`);
    rmSync(userFile);
  });

  it('honours XDG_CONFIG_HOME and XDG_DATA_HOME when absolute, and ignores them when relative (as the XDG specification says)', () => {
    expect(userConfigFile({ HOME: home, XDG_CONFIG_HOME: '/etc/xdg-test' })).toBe('/etc/xdg-test/ollama-agent-mcp/agent.yaml');
    expect(userConfigFile({ HOME: home, XDG_CONFIG_HOME: 'relative' })).toBe(userFile);
    expect(userDataFolder({ HOME: home, XDG_DATA_HOME: '/srv/data' })).toBe('/srv/data/ollama-agent-mcp');
    expect(userDataFolder({ HOME: home })).toBe(join(home, '.local/share/ollama-agent-mcp'));
  });

  it("keeps an installed package's data in the user data folder when no file configures it, and a clone's in the working directory", () => {
    const empty = scratch();
    const packaged = join(scratch(), 'lib/node_modules/ollama-agent-mcp');
    expect(runsFromClone(packaged)).toBe(false);
    expect(runsFromClone(join(import.meta.dirname, '../..'))).toBe(true);
    const data = join(home, '.local/share/ollama-agent-mcp');
    expect(locateConfig(env, empty, packaged)).toMatchObject({ found: false, base: data });
    const config = loadConfig(env, empty, packaged);
    expect([config.database.path, config.workspace.root]).toEqual([join(data, 'data/agent.sqlite'), join(data, 'workspace')]);
    expect(locateConfig(env, empty, scratch())).toMatchObject({ found: false, base: empty });
  });
});

describe('the starter configuration of `ollama-agent-mcp init`', () => {
  it('is the committed default with its data named in full in the data folder, comments kept, and valid', () => {
    const { text, model } = starterConfig(readFileSync(INSTALLED, 'utf8'), '/home/u/.local/share/ollama-agent-mcp');
    expect(text).toMatch(/^# ollama-agent-mcp configuration, written by `ollama-agent-mcp init`/);
    expect(text).not.toContain('the committed, runnable default');
    expect(text).toContain('lease_ms: 30000 # a running Task');
    const config = validateConfig(parse(text));
    expect([config.database.path, config.workspace.root]).toEqual(['/home/u/.local/share/ollama-agent-mcp/data/agent.sqlite', '/home/u/.local/share/ollama-agent-mcp/workspace']);
    expect(model).toBe(config.ollama.model);
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
