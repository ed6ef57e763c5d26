import { beforeAll, describe, expect, it } from '@jest/globals';
import type { Client } from '@modelcontextprotocol/client';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { lastToolResults, statusText, toolCall as call } from '../support/agent-tasks.js';
import { fieldsOf, textOf, waitForTerminal } from '../support/mcp-clients.js';
import { useProxiedStack } from '../support/proxy-service.js';

const QUOTA = 1024 * 1024;

/**
 * Issue 37, round three (ADR 0038), against the built service and its bundle: the session quota holds while a
 * command runs. A command that would write past it and then wait is stopped, what it made or grew is taken back,
 * the model reads why, and a hard link fails. Without the watch the command would sleep out its 30 seconds.
 */
describe('the session quota while a command runs (the built service)', () => {
  const stack = useProxiedStack({ config: { workspace: { max_session_bytes: QUOTA, max_session_files: 100 } } });
  const { ollama } = stack;
  let alice: Client;
  beforeAll(() => void ({ alice } = stack));

  it('stops a command past the quota, takes back what it wrote, cuts back what it grew, and refuses a hard link', async () => {
    ollama.enqueue(
      call('write_file', { path: 'notes.txt', content: 'kept\n' }),
      call('write_file', { path: 'log.txt', content: 'log\n' }),
      call('run_command', { command: 'for i in $(seq 1 16); do head -c 100000 /dev/zero > f$i; done; sleep 30; echo finished' }),
      // Two files the file tool wrote, each grown within the room left (RLIMIT_FSIZE), together past the quota.
      call('run_command', { command: 'for f in notes.txt log.txt; do for i in 1 2 3 4 5 6; do head -c 100000 /dev/zero >> $f; done; done; sleep 30; echo finished' }),
      call('run_command', { command: 'ln notes.txt hard; echo "ln=$?"' }),
      { content: 'quota held' },
    );
    // A generous wait: a command the watch failed to stop would take its 30 seconds (and the test would say so below).
    const accepted = fieldsOf(textOf(await alice.callTool({ name: 'agent_run', arguments: { request: 'fill the disk slowly' } })));
    const final = await waitForTerminal((taskId) => statusText(alice, taskId), accepted.task_id, 100_000);
    const session_id = accepted.session_id;
    expect(final).toMatchObject({ status: 'completed', result: expect.stringMatching(/^quota held/) });
    const results = lastToolResults(ollama);
    expect(results[2]).toMatch(
      /^Error: after this command the session workspace would hold \d+ bytes, .*; the \d+ files and directories this command created were removed; the command was stopped while it ran/,
    );
    expect(results[2]).not.toMatch(/finished/);
    expect(results[3]).toMatch(/the 2 files that existed before and grew were cut back to their size before the command; the command was stopped while it ran/);
    expect(results[3]).not.toMatch(/finished/);
    expect(results[4]).toMatch(/ln=1[\s\S]*Invalid cross-device link/);
    const dir = join(stack.config.workspace, 'sessions', session_id);
    expect(readFileSync(join(dir, 'notes.txt'), 'utf8')).toBe('kept\n');
    expect(readFileSync(join(dir, 'log.txt'), 'utf8')).toBe('log\n');
    expect(existsSync(join(dir, 'f1'))).toBe(false);
    expect(existsSync(join(dir, 'hard'))).toBe(false);
  }, 120_000);
});
