import { afterAll, describe, expect, it } from '@jest/globals';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { validateConfig } from '../../src/config/agent-config.js';
import { SessionWorkspaces } from '../../src/workspace/session-workspaces.js';
import { WorkspacePaths } from '../../src/workspace/workspace-paths.js';
import { ManualClock } from '../support/manual-clock.js';

const SESSION = '11111111-1111-4111-8111-111111111111';
const ACTIVE = '22222222-2222-4222-8222-222222222222';

/** Issue 20, finding 1's class: retention removal walks descriptors and unlinks links as links. */
describe('retention removal of session workspaces', () => {
  const base = mkdtempSync(join(tmpdir(), 'oam-retention-'));
  afterAll(() => rmSync(base, { recursive: true, force: true }));

  it('removes an idle workspace and a removal a crash left behind, never what their links point at', async () => {
    const outside = join(base, 'outside');
    mkdirSync(outside);
    writeFileSync(join(outside, 'keep.txt'), 'keep\n');
    const root = join(base, 'root');
    const idle = join(root, 'sessions', SESSION);
    const leftover = join(root, 'sessions', `.${SESSION}.abcd1234.removing`);
    for (const dir of [idle, leftover]) {
      mkdirSync(join(dir, 'sub'), { recursive: true });
      writeFileSync(join(dir, 'sub', 'f.txt'), 'x');
      symlinkSync(outside, join(dir, 'link'));
      symlinkSync(outside, join(dir, 'sub', 'deeper'));
    }
    mkdirSync(join(root, 'sessions', ACTIVE));
    // Three days on by the service's clock: the workspaces written now are idle, unless a Task touched one since.
    const clock = new ManualClock(Date.now() + 3 * 86_400_000);
    const settings = validateConfig({ workspace: { root, retention_days: 1 } }).workspace;
    const sessions = await SessionWorkspaces.open(await WorkspacePaths.open(root), settings, clock);
    await sessions.touch(ACTIVE);
    expect(await sessions.sweep()).toEqual([SESSION]);
    expect(existsSync(join(root, 'sessions', ACTIVE))).toBe(true);
    expect(readFileSync(`${idle}.expired`, 'utf8')).toBe(`${new Date(clock.now()).toISOString()}\n`);
    expect(existsSync(idle)).toBe(false);
    expect(existsSync(leftover)).toBe(false);
    expect(existsSync(`${idle}.expired`)).toBe(true);
    expect(readFileSync(join(outside, 'keep.txt'), 'utf8')).toBe('keep\n');
  });
});
