import { Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { AgentFailure, AgentRunner, type AgentTask } from '../agent/agent-runner.js';
import { AuditService } from '../audit/audit.service.js';
import { AppConfig } from '../config/app-config.js';
import { SYSTEM_CALLER } from '../identity/caller.js';
import type { TaskStatus } from './task-status.js';
import type { TaskEntity } from './task.entity.js';
import { TasksRepository, type TaskProgress } from './tasks.repository.js';

const INTERRUPTED_BY_RESTART = 'Interrupted: the service stopped while this task was running; it was not resumed.';
const INTERRUPTED_BY_SHUTDOWN = 'Interrupted: the service shut down while this task was running.';
const CANCELLED = 'Cancelled on request.';

/**
 * The single worker: claims the oldest queued Task, runs it with the agent, ends it, and goes on.
 * A scheduler interval drives it, and `wake()` runs it at once when a Task is queued. The database,
 * not this class, guarantees that only one Task is active application-wide.
 */
@Injectable()
export class TaskWorker implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(TaskWorker.name);
  private draining: Promise<void> | null = null;
  /** A wake that arrived mid-drain, possibly after its last empty claim: drain once more. */
  private wakeAgain = false;
  private stopped = false;
  private current: { id: string; controller: AbortController } | null = null;

  constructor(
    private readonly tasks: TasksRepository,
    private readonly agent: AgentRunner,
    private readonly audit: AuditService,
    private readonly config: AppConfig,
    private readonly scheduler: SchedulerRegistry,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    for (const task of await this.tasks.failInterrupted(INTERRUPTED_BY_RESTART)) {
      this.logger.warn(`task ${task.id} was ${task.status} when the service stopped; marked failed`);
      await this.recordStatus(task, 'failed', INTERRUPTED_BY_RESTART);
    }
    this.scheduler.addInterval('task-worker', setInterval(() => this.wake(), this.config.queue.pollIntervalMs));
    this.wake();
  }

  async onApplicationShutdown(): Promise<void> {
    this.stopped = true;
    if (this.scheduler.doesExist('interval', 'task-worker')) this.scheduler.deleteInterval('task-worker');
    this.current?.controller.abort(new ShutdownSignal());
    await this.draining;
  }

  /** Starts draining the queue unless a drain is already in progress here. */
  wake(): void {
    if (this.stopped) return;
    if (this.draining) {
      this.wakeAgain = true;
      return;
    }
    this.wakeAgain = false;
    this.draining = this.drain()
      .catch((error) => this.logger.error(`worker tick failed: ${(error as Error).message}`))
      .finally(() => {
        this.draining = null;
        if (this.wakeAgain) this.wake();
      });
  }

  /** Fires the cancellation token of the Task running in this process, if it is that one. */
  cancelLocal(taskId: string): boolean {
    if (this.current?.id !== taskId) return false;
    this.current.controller.abort(new CancelSignal());
    return true;
  }

  private async drain(): Promise<void> {
    while (!this.stopped) {
      const task = await this.tasks.claimNext();
      if (!task) return;
      await this.recordStatus(task, 'planning');
      await this.runClaimed(task);
    }
  }

  private async runClaimed(task: TaskEntity): Promise<void> {
    const controller = new AbortController();
    this.current = { id: task.id, controller };
    // A cancel may arrive through another process sharing the database; the flag reaches us by polling.
    const cancelPoll = setInterval(() => void this.pollCancel(task.id, controller), this.config.queue.pollIntervalMs);
    let progressSoFar: TaskProgress = {};
    const report = async (progress: TaskProgress) => {
      progressSoFar = { ...progressSoFar, ...progress };
      if (progress.status && progress.status !== task.status) await this.recordStatus(task, progress.status);
      await this.tasks.updateProgress(task.id, progress);
    };
    try {
      const input = await this.agentInput(task);
      const outcome = await this.agent.run(input, report, controller.signal);
      if (controller.signal.aborted) throw controller.signal.reason;
      await this.end(task, 'completed', outcome.result, { ...progressSoFar, ...outcome.progress });
    } catch (error) {
      const reason = controller.signal.reason;
      if (reason instanceof CancelSignal) await this.end(task, 'cancelled', CANCELLED, progressSoFar);
      else if (reason instanceof ShutdownSignal) await this.end(task, 'failed', INTERRUPTED_BY_SHUTDOWN, progressSoFar);
      else if (error instanceof AgentFailure) await this.end(task, 'failed', error.message, { ...progressSoFar, ...error.progress });
      else {
        this.logger.error(`task ${task.id} crashed: ${(error as Error).stack ?? String(error)}`);
        await this.end(task, 'failed', `Internal error: ${(error as Error).message ?? String(error)}`, progressSoFar);
      }
    } finally {
      clearInterval(cancelPoll);
      this.current = null;
    }
  }

  private async agentInput(task: TaskEntity): Promise<AgentTask> {
    const [images, history] = await Promise.all([this.tasks.images(task.id), this.tasks.history(task.sessionId, task.seq)]);
    const historyImages = await this.tasks.imagesOf(history.map((turn) => turn.id));
    return {
      id: task.id,
      request: task.request,
      temperature: task.temperature ?? this.config.ollama.temperature,
      images: images.map(({ mimeType, dataBase64 }) => ({ mimeType, dataBase64 })),
      history: history.map((turn) => ({
        request: turn.request,
        imageCount: historyImages.filter((image) => image.taskId === turn.id).length,
        answer: turn.result ?? '',
      })),
    };
  }

  private async pollCancel(taskId: string, controller: AbortController): Promise<void> {
    if (controller.signal.aborted) return;
    try {
      if (await this.tasks.isCancelRequested(taskId)) controller.abort(new CancelSignal());
    } catch (error) {
      this.logger.warn(`cancel poll for ${taskId} failed: ${(error as Error).message}`);
    }
  }

  private async end(task: TaskEntity, status: TaskStatus, result: string, progress: TaskProgress): Promise<void> {
    const { status: _ignored, ...fields } = progress;
    if (await this.tasks.finish(task.id, status, result, fields)) await this.recordStatus(task, status, result);
  }

  private async recordStatus(task: TaskEntity, status: TaskStatus, reason?: string): Promise<void> {
    task.status = status;
    await this.audit.record({
      caller: SYSTEM_CALLER,
      action: 'task.status',
      outcome: status === 'failed' ? 'error' : 'ok',
      taskId: task.id,
      sessionId: task.sessionId,
      detail: { status, ...(reason && status !== 'completed' ? { reason } : {}) },
    });
  }
}

class CancelSignal extends Error {
  constructor() {
    super('cancelled');
  }
}

class ShutdownSignal extends Error {
  constructor() {
    super('shutdown');
  }
}
