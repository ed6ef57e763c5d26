import type { SteerMessage } from './run-state.js';

/**
 * Where a person's corrections to a running Task arrive (issue 35): durable (the run may be on another
 * replica than the surface that took the message), read by the loop at step boundaries only.
 */
export interface SteerInbox {
  /** The messages accepted for the Task since the last take, in the order accepted; each is taken once. */
  take(taskId: string): Promise<SteerMessage[]>;
  /**
   * Closes the Task to steering when no message beyond the `received` first has been accepted: later
   * ones become follow-up Tasks. False: one was accepted in the meantime (take it and go on).
   */
  close(taskId: string, received: number): Promise<boolean>;
}
