import { Injectable, Logger } from '@nestjs/common';
import type { RunEvent, RunEventListener, RunEvents } from './core/run-events.js';

/**
 * Where RunEvents go. Each run gets its own RunEvents with its required subscribers (the trace, the
 * Task row's progress: a failure there fails the run); the listeners subscribed here (streaming edges,
 * webhooks, checkpoints) get every run's events after them, and a failing one is logged and dropped.
 */
@Injectable()
export class RunEventHub {
  private readonly logger = new Logger('RunEvents');
  private readonly listeners = new Set<RunEventListener>();

  /** Adds a listener for every run's events; returns its removal. */
  subscribe(listener: RunEventListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** The events of one run: delivered in order, to `required` first, then to the subscribers. */
  forRun(required: RunEventListener[]): RunEvents {
    return {
      emit: async (event) => {
        for (const listener of required) await listener(event);
        await this.publish(event);
      },
    };
  }

  /** An event from outside a run's loop (`ended`, once the Task's row holds its result). */
  async publish(event: RunEvent): Promise<void> {
    for (const listener of [...this.listeners]) {
      try {
        await listener(event);
      } catch (error) {
        this.logger.warn(`a run event subscriber failed on ${event.type} of task ${event.taskId}: ${(error as Error).message}`);
      }
    }
  }
}
