import type { ApprovalsService } from '../../src/approvals/approvals.service.js';
import { afterEach, describe, expect, it, jest } from '@jest/globals';
import type { AgentRunner } from '../../src/agent/agent-runner.js';
import type { AuditService } from '../../src/audit/audit.service.js';
import type { AppConfig } from '../../src/config/app-config.js';
import type { HistoryService } from '../../src/history/history.service.js';
import { AbandonedTaskRecovery } from '../../src/queue/abandoned-task-recovery.js';
import { LeaseKeeper } from '../../src/queue/lease-keeper.js';
import { CancelSignal, LeaseLost } from '../../src/queue/run-signals.js';
import { RunnerIdentity } from '../../src/queue/runner-identity.js';
import type { TaskConversation } from '../../src/queue/task-conversation.js';
import { TaskExecution } from '../../src/queue/task-execution.js';
import { RunEventHub } from '../../src/agent/run-event-hub.js';
import { TaskStatusJournal } from '../../src/queue/task-status-journal.js';
import type { TaskEntity } from '../../src/queue/task.entity.js';
import type { Lease, TasksRepository } from '../../src/queue/tasks.repository.js';
import type { UsageService } from '../../src/usage/usage.service.js';
import { NO_TELEMETRY } from '../support/fakes/queue.js';

const config = { queue: { leaseMs: 30_000, pollIntervalMs: 1_000 } } as AppConfig;
const lease: Lease = { taskId: 't1', attempt: 1, owner: 'host/1/boot' };
const task = (fields: Partial<TaskEntity>) => ({ id: 't1', sessionId: 's1', attempt: 1, createdAt: '2026-01-01T00:00:00.000Z', ...fields }) as TaskEntity;
const audit = () => ({ record: jest.fn<AuditService['record']>(async () => undefined) });

afterEach(() => {
  jest.useRealTimers();
});

describe('LeaseKeeper', () => {
  /** A lease kept on fake timers, each renewal answering `renewed`. */
  const keepWith = (renewed: Awaited<ReturnType<TasksRepository['renew']>>) => {
    jest.useFakeTimers();
    const renew = jest.fn<TasksRepository['renew']>(async () => renewed);
    const controller = new AbortController();
    const renewal = new LeaseKeeper({ renew } as unknown as TasksRepository, config).keep(lease, controller);
    return { renew, controller, renewal };
  };

  it('renews at the poll interval and stops the run when the lease is lost', async () => {
    const { renew, controller, renewal } = keepWith({ held: false, cancelRequested: false });
    await jest.advanceTimersByTimeAsync(999);
    expect(renew).not.toHaveBeenCalled();
    await jest.advanceTimersByTimeAsync(1);
    expect(renew).toHaveBeenCalledWith(lease, 30_000);
    expect(controller.signal.reason).toBeInstanceOf(LeaseLost);
    renewal.stop();
  });

  it('fires the cancellation token when another replica flagged the Task', async () => {
    const { controller, renewal } = keepWith({ held: true, cancelRequested: true });
    await jest.advanceTimersByTimeAsync(1_000);
    expect(controller.signal.reason).toBeInstanceOf(CancelSignal);
    renewal.stop();
  });
});

describe('AbandonedTaskRecovery', () => {
  it('re-queues a planning Task once, and fails it when planning was interrupted twice or it was running', async () => {
    const abandoned = [task({ id: 'a', status: 'planning', attempt: 1 }), task({ id: 'b', status: 'planning', attempt: 2 }), task({ id: 'c', status: 'running', attempt: 1 })];
    const reclaim = jest.fn<TasksRepository['reclaim']>(async () => true);
    const tasks = { abandoned: jest.fn(async () => abandoned), reclaim } as unknown as TasksRepository;
    const events = audit();
    await new AbandonedTaskRecovery(tasks, new RunnerIdentity(), new TaskStatusJournal(events as unknown as AuditService), new RunEventHub()).recover();
    expect(reclaim.mock.calls.map(([row, to]) => [row.id, to])).toEqual([
      ['a', 'queued'],
      ['b', 'failed'],
      ['c', 'failed'],
    ]);
    expect(events.record.mock.calls.map(([event]) => event.detail)).toEqual([
      { status: 'queued', attempt: 1, reason: 'runner stopped while planning; re-queued' },
      { status: 'failed', attempt: 2, reason: 'Interrupted: the service stopped twice while this task was being planned.' },
      {
        status: 'failed',
        attempt: 1,
        reason: 'Interrupted: the service stopped while this task was running; it was not resumed because its actions may not be repeatable.',
      },
    ]);
  });
});

describe('TaskExecution', () => {
  /** An execution whose agent is cancelled mid-run, whose ending `finish` answers, and the usage it hands Tasks to. */
  function cancelledRun(finished: Awaited<ReturnType<TasksRepository['finish']>>) {
    const finish = jest.fn<TasksRepository['finish']>(async () => finished);
    const tasks = { finish, updateProgress: jest.fn(async () => true) } as unknown as TasksRepository;
    const conversation = { agentInput: jest.fn(async () => ({})) } as unknown as TaskConversation;
    const recordTask = jest.fn<UsageService['recordTask']>(async () => undefined);
    let execution: TaskExecution | undefined;
    const agent = {
      run: jest.fn(async (_input: unknown, _report: unknown, signal: AbortSignal) => {
        execution!.cancelLocal('another');
        expect(signal.aborted).toBe(false);
        execution!.cancelLocal('t1');
        throw signal.reason;
      }),
    } as unknown as AgentRunner;
    const leases = { keep: jest.fn(() => ({ stop: () => undefined })) } as unknown as LeaseKeeper;
    const events = audit();
    const history = { begin: jest.fn(async () => null), isUndo: () => false } as unknown as HistoryService;
    execution = new TaskExecution(
      tasks,
      conversation,
      agent,
      leases,
      new TaskStatusJournal(events as unknown as AuditService),
      new RunnerIdentity(),
      new RunEventHub(),
      history,
      NO_TELEMETRY,
      { recordTask } as unknown as UsageService,
      { carriesDecision: async () => false, pausedTaskAnsweredBy: async () => null } as unknown as ApprovalsService,
    );
    return { execution, finish, events, recordTask };
  }

  it('ends the running Task cancelled when its own token fires, and ignores a cancel for another Task', async () => {
    const { execution, finish, events } = cancelledRun({ owner: 'alice', inputTokens: 0, outputTokens: 0 });
    await execution.run(task({ status: 'planning', owner: 'alice', inputTokens: 0, outputTokens: 0 }));
    expect(finish).toHaveBeenCalledWith(expect.objectContaining({ taskId: 't1', attempt: 1 }), 'cancelled', 'Cancelled on request.', {});
    expect(events.record.mock.calls.map(([event]) => (event.detail as { status: string }).status)).toEqual(['planning', 'cancelled']);
  });

  it('runs the agent, not undo, for a Task that carries a decision whose text reads as undo (the intake read it as a choice first)', async () => {
    const runs: string[] = [];
    const tasks = { finish: jest.fn(async () => null), updateProgress: jest.fn(async () => true), resumedBy: jest.fn(async () => null) } as unknown as TasksRepository;
    const conversation = { agentInput: jest.fn(async () => ({})) } as unknown as TaskConversation;
    const ran = (what: string) => async () => {
      runs.push(what);
      return { result: what, progress: {} };
    };
    const agent = { run: jest.fn(ran('agent')) } as unknown as AgentRunner;
    const history = {
      begin: jest.fn(async () => null),
      finish: jest.fn(async (_history: unknown, result: string) => result),
      isUndo: () => true,
      undo: jest.fn(ran('undo')),
    } as unknown as HistoryService;
    const usage = { recordTask: jest.fn(async () => undefined) } as unknown as UsageService;
    const leases = { keep: jest.fn(() => ({ stop: () => undefined })) } as unknown as LeaseKeeper;
    const journal = new TaskStatusJournal(audit() as unknown as AuditService);
    const execution = (carries: boolean) =>
      new TaskExecution(tasks, conversation, agent, leases, journal, new RunnerIdentity(), new RunEventHub(), history, NO_TELEMETRY, usage, {
        carriesDecision: async () => carries,
        pausedTaskAnsweredBy: async () => null,
      } as unknown as ApprovalsService);
    await execution(true).run(task({ status: 'planning', owner: 'alice', request: 'undo', inputTokens: 0, outputTokens: 0 }));
    await execution(false).run(task({ status: 'planning', owner: 'alice', request: 'undo', inputTokens: 0, outputTokens: 0 }));
    expect(runs).toEqual(['agent', 'undo']);
  });

  it('hands usage the owner and tokens its fenced ending returned, and nothing when the ending was fenced out', async () => {
    const ended = cancelledRun({ owner: 'alice', inputTokens: 120, outputTokens: 30 });
    await ended.execution.run(task({ status: 'planning', owner: 'alice', startedAt: '2026-01-01T00:00:01.000Z', inputTokens: 0, outputTokens: 0 }));
    expect(ended.recordTask.mock.calls).toEqual([[{ taskId: 't1', startedAt: '2026-01-01T00:00:01.000Z', owner: 'alice', inputTokens: 120, outputTokens: 30 }]]);
    const fencedOut = cancelledRun(null);
    await fencedOut.execution.run(task({ status: 'planning', owner: 'alice', inputTokens: 0, outputTokens: 0 }));
    expect(fencedOut.finish).toHaveBeenCalled();
    expect(fencedOut.recordTask).not.toHaveBeenCalled();
  });
});
