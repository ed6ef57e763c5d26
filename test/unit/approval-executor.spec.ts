import { describe, expect, it } from '@jest/globals';
import type { AgentTask } from '../../src/agent/agent-runner.js';
import { ApprovalExecutor } from '../../src/agent/approval-executor.js';
import type { RunEvent } from '../../src/agent/core/run-events.js';
import type { OfferedTool, ToolCallContext, ToolResult, ToolSource } from '../../src/agent/core/tool-source.js';
import { validateConfig } from '../../src/config/agent-config.js';
import type { ChatToolCall } from '../../src/ollama/ollama.gateway.js';
import { buildAgent } from '../support/agent-harness.js';
import { ManualClock } from '../support/manual-clock.js';

/** ApprovalExecutor (issue 35 §3): every tool step recorded once, by the executor, with the run's clock; the offered tool decides who is asked. */

const tool = (name: string, fields: Partial<OfferedTool> = {}): OfferedTool => ({
  definition: { type: 'function', function: { name, description: name, parameters: { type: 'object', properties: {} } } },
  effect: 'read',
  stepKind: 'tool_call',
  ...fields,
});
const call = (name: string, args: Record<string, unknown> = {}): ChatToolCall => ({ function: { name, arguments: args } });

/** A source whose calls take `tookMs` on the run's clock and describe (or not) their step. */
function source(clock: ManualClock, offered: OfferedTool[], results: Record<string, ToolResult>, tookMs = 250): ToolSource & { ran: string[] } {
  const ran: string[] = [];
  return {
    id: 'test',
    ran,
    tools: async () => offered,
    execute: async (called) => {
      ran.push(called.function.name);
      clock.advance(tookMs);
      return results[called.function.name];
    },
  };
}

function setup(offered: OfferedTool[], results: Record<string, ToolResult>, mode = 'never', inPlace = false) {
  const clock = new ManualClock();
  const config = validateConfig({ agent: { approvals: { mode } }, queue: { poll_interval_ms: 10 } });
  const { approvals, approvalRows, waits } = buildAgent({}, config, { clock });
  const events: RunEvent[] = [];
  const src = source(clock, offered, results);
  const task = { id: 't1', sessionId: 's1', owner: 'alice', answersInPlace: inPlace, unattended: null } as AgentTask;
  const context = {
    taskId: 't1',
    subtask: 's2',
    signal: new AbortController().signal,
    caller: { user: 'alice', email: null, groups: [] },
    events: { emit: async (event: RunEvent) => void events.push(event) },
    clock,
  } as unknown as ToolCallContext;
  return {
    clock,
    events,
    src,
    context,
    approvals,
    approvalRows,
    waits,
    executor: async () => new ApprovalExecutor(await ApprovalExecutor.routesOf([src], context.caller), approvals, task, clock),
  };
}

describe('ApprovalExecutor', () => {
  it('records the step a call describes once, timed by the run’s clock, with the offered tool’s kind and the outcome from isError', async () => {
    const h = setup([tool('lookup'), tool('fetch', { stepKind: 'mcp_tool' }), tool('quiet')], {
      lookup: { output: 'found', step: { detail: { arguments: { q: 'x' } } } },
      fetch: { output: 'Error: down', isError: true, step: { name: 'fetch (wiki)', detail: {} } },
      quiet: { output: 'nothing to trace' },
    });
    const executor = await h.executor();
    h.clock.advance(60_000);
    expect(await executor.execute(call('lookup'), h.context)).toEqual({ kind: 'result', result: { output: 'found' } });
    await executor.execute(call('fetch'), h.context);
    await executor.execute(call('quiet'), h.context);
    expect(h.src.ran).toEqual(['lookup', 'fetch', 'quiet']);
    expect(h.events.map((event) => event.type === 'step' && event.step)).toEqual([
      { taskId: 't1', subtask: 's2', kind: 'tool_call', name: 'lookup', outcome: 'ok', startedAt: '2026-12-01T09:01:00.000Z', durationMs: 250, detail: { arguments: { q: 'x' } } },
      { taskId: 't1', subtask: 's2', kind: 'mcp_tool', name: 'fetch (wiki)', outcome: 'error', startedAt: '2026-12-01T09:01:00.250Z', durationMs: 250, detail: {} },
    ]);
  });

  it('asks a person only when the offered tool says so, showing what it says; a tool without its own rule is asked by its effect and the mode', async () => {
    const h = setup(
      [
        tool('deploy', {
          effect: 'command',
          personRequest: async (called) => (called.function.arguments.env === 'prod' ? { kind: 'approval', subject: 'deploy to prod', diff: null, baseSha256: null } : null),
        }),
        tool('touch', { effect: 'change' }),
      ],
      { deploy: { output: 'deployed' }, touch: { output: 'touched' } },
      'commands',
    );
    const executor = await h.executor();
    expect(await executor.execute(call('deploy', { env: 'staging' }), h.context)).toEqual({ kind: 'result', result: { output: 'deployed' } });
    const paused = await executor.execute(call('deploy', { env: 'prod' }), h.context);
    expect(paused).toMatchObject({ kind: 'pause', pause: { kind: 'approval', baseSha256: null } });
    const id = paused.kind === 'pause' && paused.pause.kind === 'approval' ? paused.pause.approvalId : '';
    expect(executor.requested.get(id)).toMatchObject({ kind: 'approval', tool: 'deploy', subject: 'deploy to prod' });
    // Left for the conversation: stored with the pause (PausedRuns), not before.
    expect(executor.unstoredRequest(id)).not.toBeNull();
    // `commands` mode: a change is not asked about.
    expect(await executor.execute(call('touch'), h.context)).toEqual({ kind: 'result', result: { output: 'touched' } });
    expect(h.src.ran).toEqual(['deploy', 'touch']);
  });

  it('a form another server asks during its call: a row of kind form its person answers in place, no wait of the run, and the call goes on with the answer', async () => {
    const schema = { type: 'object' as const, properties: { name: { type: 'string' as const, maxLength: 100 } }, required: ['name'] };
    const h = setup([tool('login')], {}, 'never', true);
    h.src.execute = async (_call, context) => {
      const answer = await context.askPerson!({ server: 'wiki', tool: 'login', message: 'Your name?', schema }, context.signal);
      return { output: JSON.stringify(answer), step: { detail: {} } };
    };
    const executor = await h.executor();
    const running = executor.execute(call('login'), h.context);
    while (h.approvalRows.rows.length === 0) await new Promise((next) => setImmediate(next));
    const [row] = h.approvalRows.rows;
    expect(row).toMatchObject({ kind: 'form', tool: 'mcp_elicitation', subject: 'Your name?', waiting: true, state: 'pending' });
    const alice = { user: 'alice', client: null } as never;
    expect(await h.approvals.answerInPlace(alice, 't1', { [row.id]: { action: 'accept', content: { name: 'Alice' } } })).toBe(true);
    expect(await running).toEqual({ kind: 'result', result: { output: '{"action":"accept","content":{"name":"Alice"}}' } });
    expect(h.waits.rows).toEqual([]);
    expect(row).toMatchObject({ state: 'granted', answeredVia: 'in_place' });
  });
});
