import { describe, expect, it } from '@jest/globals';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ConfigError } from '../../src/config/agent-config.js';
import { loadConfig } from '../../src/config/config.loader.js';

/** A config file with `yaml` in a fresh directory. */
function configFile(yaml: string): { dir: string; file: string } {
  const dir = mkdtempSync(join(tmpdir(), 'oam-loader-'));
  const file = join(dir, 'agent.yaml');
  writeFileSync(file, yaml);
  return { dir, file };
}

const problemsOf = (env: NodeJS.ProcessEnv, cwd = '/') => {
  try {
    loadConfig(env, cwd);
    return [];
  } catch (error) {
    return (error as ConfigError).problems;
  }
};

describe('loading the configuration', () => {
  it("resolves the file's relative paths, and the defaults, against the file's directory", () => {
    const { dir, file } = configFile('database:\n  path: ./state/agent.sqlite\n');
    const config = loadConfig({ AGENT_CONFIG: file }, '/');
    expect(config.database.path).toBe(join(dir, 'state/agent.sqlite'));
    expect(config.workspace.root).toBe(join(dir, 'workspace'));
  });

  it('resolves relative paths from environment overrides against the working directory', () => {
    const { file } = configFile('{}\n');
    const cwd = mkdtempSync(join(tmpdir(), 'oam-cwd-'));
    mkdirSync(join(cwd, 'ws'));
    const config = loadConfig({ AGENT_CONFIG: file, AGENT__DATABASE__PATH: 'db/x.sqlite', AGENT__WORKSPACE__ROOT: 'ws' }, cwd);
    expect(config.database.path).toBe(join(cwd, 'db/x.sqlite'));
    expect(config.workspace.root).toBe(join(cwd, 'ws'));
  });

  it('keeps :memory: and absolute paths as they are', () => {
    const { file } = configFile('database:\n  path: ":memory:"\nworkspace:\n  root: /tmp\n');
    expect(loadConfig({ AGENT_CONFIG: file }, '/')).toMatchObject({ database: { path: ':memory:' }, workspace: { root: '/tmp' } });
  });

  it('refuses a configured workspace root that does not exist, by its resolved path', () => {
    const { dir, file } = configFile('workspace:\n  root: ./wrokspace\n');
    expect(problemsOf({ AGENT_CONFIG: file })).toEqual([
      `${file}: workspace.root: ${join(dir, 'wrokspace')} does not exist (create it, or leave the key out for ${join(dir, 'workspace')})`,
    ]);
  });

  it('resolves workspace.template against the file and refuses one that is not a directory', () => {
    const { dir, file } = configFile('workspace:\n  template: ./seed\n');
    expect(problemsOf({ AGENT_CONFIG: file })).toEqual([`${file}: workspace.template: ${join(dir, 'seed')} is not a directory`]);
    mkdirSync(join(dir, 'seed'));
    expect(loadConfig({ AGENT_CONFIG: file }, '/').workspace.template).toBe(join(dir, 'seed'));
    expect(loadConfig({ AGENT_CONFIG: configFile('{}\n').file }, '/').workspace.template).toBe('');
  });

  it('names the variable behind a bad override, and suggests the closest known key', () => {
    const { file } = configFile('{}\n');
    expect(problemsOf({ AGENT_CONFIG: file, AGENT__OLAMA__MODEL: 'llama3.2' })).toEqual(['AGENT__OLAMA__MODEL (olama): unknown key (did you mean ollama?)']);
    expect(problemsOf({ AGENT_CONFIG: file, AGENT__SERVER__PROT: '80' })).toEqual(['AGENT__SERVER__PROT (server.prot): unknown key (did you mean server.port?)']);
    expect(problemsOf({ AGENT_CONFIG: file, AGENT__SERVER__PORT: 'eighty' })).toEqual(['AGENT__SERVER__PORT (server.port): expected an integer']);
  });

  it('names the file behind every bad key in it, with a suggestion only when one is close', () => {
    const { file } = configFile('olama:\n  model: x\nserver:\n  colour: red\n');
    expect(problemsOf({ AGENT_CONFIG: file })).toEqual([`${file}: olama: unknown key (did you mean ollama?)`, `${file}: server.colour: unknown key`]);
  });

  it('refuses ollama.host schemes other than http and https', () => {
    const { file } = configFile('ollama:\n  host: ftp://127.0.0.1:11434\n');
    expect(problemsOf({ AGENT_CONFIG: file })).toEqual([`${file}: ollama.host: must be an http:// or https:// URL (got "ftp://127.0.0.1:11434")`]);
    expect(problemsOf({ AGENT_CONFIG: file, AGENT__OLLAMA__HOST: 'https://ollama.internal' })).toEqual([]);
  });
});
