import { Injectable, Logger, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import type { RunEvent, RunEvents } from '../agent/core/run-events.js';
import { RunEventHub } from '../agent/run-event-hub.js';
import { AppConfig } from '../config/app-config.js';
import { PgEventChannel } from './pg-event-channel.js';
import { splitForWire } from './wire-event.js';

/** `local`: emitted in this process; `remote`: relayed from another replica (thin: see wire-event.ts). */
export type EventOrigin = 'local' | 'remote';
export type TaskEventListener = (event: RunEvent, origin: EventOrigin) => void;

/**
 * The per-Task event stream (ADR 0009's RunEvents, issue 23): what runs emit, delivered in order to the
 * followers in this process at once, and on PostgreSQL to every replica with NOTIFY. Followers treat it
 * as a prompt, not the record: the row, the trace and the answer draft are, so a dropped notification
 * (or a reconnect, announced to `onGap` listeners) is caught up by reading them.
 */
@Injectable()
export class TaskEvents implements RunEvents, OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger('TaskEvents');
  /** Tells this process's notifications from another replica's. */
  readonly origin = randomUUID();
  private readonly byTask = new Map<string, Set<TaskEventListener>>();
  private readonly everything = new Set<TaskEventListener>();
  private readonly gapListeners = new Set<() => void>();
  private readonly answerSeq = new Map<string, number>();
  private readonly channel: PgEventChannel | null;

  private unhook: (() => void) | null = null;

  constructor(
    config: AppConfig,
    private readonly hub: RunEventHub,
  ) {
    this.channel =
      config.database.type === 'postgres'
        ? new PgEventChannel(
            config.database.url,
            this.origin,
            (event) => this.dispatch(event, 'remote'),
            () => this.gap(),
            this.logger,
          )
        : null;
  }

  /** Every run's events (and the queue's `accepted`/`ended`) come from the agent core's hub. */
  async onModuleInit(): Promise<void> {
    await this.channel?.start();
    this.unhook = this.hub.subscribe((event) => this.emit(event));
  }

  async onApplicationShutdown(): Promise<void> {
    this.unhook?.();
    await this.channel?.stop();
  }

  /**
   * Delivers `event` here (synchronously, in emit order) and to the other replicas. Answer deltas get
   * their `seq`; one too large for a notification is split into consecutive deltas first.
   */
  async emit(event: RunEvent): Promise<void> {
    for (const part of event.type === 'answer_delta' ? splitForWire(event) : [event]) {
      if (part.type === 'answer_delta' && part.seq === undefined) part.seq = this.nextSeq(part.taskId);
      if (part.type === 'ended') this.answerSeq.delete(part.taskId);
      this.dispatch(part, 'local');
      this.channel?.publish(part);
    }
  }

  /** Follows one Task's events; returns the unsubscribe. */
  subscribe(taskId: string, listener: TaskEventListener): () => void {
    let set = this.byTask.get(taskId);
    if (!set) this.byTask.set(taskId, (set = new Set()));
    set.add(listener);
    return () => {
      set.delete(listener);
      if (set.size === 0 && this.byTask.get(taskId) === set) this.byTask.delete(taskId);
    };
  }

  /** Every Task's events (deliveries, resource notifications). */
  subscribeAll(listener: TaskEventListener): () => void {
    this.everything.add(listener);
    return () => this.everything.delete(listener);
  }

  /** Called when events from other replicas may have been missed (the LISTEN connection was re-opened). */
  onGap(listener: () => void): () => void {
    this.gapListeners.add(listener);
    return () => this.gapListeners.delete(listener);
  }

  private nextSeq(taskId: string): number {
    const seq = (this.answerSeq.get(taskId) ?? 0) + 1;
    this.answerSeq.set(taskId, seq);
    return seq;
  }

  private dispatch(event: RunEvent, origin: EventOrigin): void {
    for (const listener of [...(this.byTask.get(event.taskId) ?? []), ...this.everything]) {
      try {
        listener(event, origin);
      } catch (error) {
        this.logger.error(`event listener failed on ${event.type} of task ${event.taskId}: ${(error as Error).stack ?? String(error)}`);
      }
    }
  }

  private gap(): void {
    for (const listener of this.gapListeners) listener();
  }
}
