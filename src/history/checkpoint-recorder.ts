import { Injectable, Logger } from '@nestjs/common';
import { Clock, nowIso, SYSTEM_CLOCK } from '../common/clock.js';
import { WorkspaceService } from '../workspace/workspace.service.js';
import { sameFiles } from './change-set.js';
import type { Checkpoint, CheckpointStore } from './checkpoint-store.js';
import { HistoryBound } from './history-bound.js';
import { historyJournal, type Marker } from './history-journal.js';
import { HistoryStores } from './history-stores.js';
import { HistoryTotalBound } from './history-total-bound.js';
import { timelineOf } from './history-timeline.js';
import { taskDiffUri } from './history-uri.js';

/** The Task a checkpoint pair belongs to. */
export interface HistoryTask {
  id: string;
  sessionId: string;
  owner: string;
  request: string;
}

/** What `begin` hands to `finish`: the start checkpoint, or why there is none. */
export interface TaskHistory {
  task: HistoryTask;
  before: Checkpoint | null;
  undoOf?: string;
}

const PHASE_TEXT: Record<Marker['phase'], string> = {
  before: 'the service stopped during its start checkpoint',
  running: 'the service stopped while it ran',
  after: 'the service stopped during its end checkpoint',
};

/**
 * The checkpoint before and after every Task, taken by the queue around the agent run (never inside the loop). A
 * failure never fails the Task: it is logged and journaled, and the Task goes without a diff. A marker says which
 * Task is being checkpointed, so that the next `begin` after a crash records that Task's end late.
 */
@Injectable()
export class CheckpointRecorder {
  private readonly logger = new Logger('History');

  constructor(
    private readonly stores: HistoryStores,
    private readonly workspace: WorkspaceService,
    private readonly sizeBound: HistoryBound,
    private readonly totalBound: HistoryTotalBound,
    private readonly clock: Clock = SYSTEM_CLOCK,
  ) {}

  /** The start checkpoint. A marker left by a previous process that stopped mid-Task is settled first. */
  async begin(task: HistoryTask): Promise<TaskHistory> {
    if (!this.stores.enabled) return { task, before: null };
    return this.stores.serial(task.sessionId, async () => {
      const store = this.stores.store(task.sessionId);
      try {
        const root = (await this.workspace.forTask(task.sessionId)).root;
        await store.ensure();
        await this.settleStaleMarker(store, root);
        await historyJournal.mark(store, { taskId: task.id, sessionId: task.sessionId, phase: 'before', at: nowIso(this.clock) });
        const before = await store.take(root, { kind: 'before', taskId: task.id, sessionId: task.sessionId });
        await historyJournal.mark(store, { taskId: task.id, sessionId: task.sessionId, phase: 'running', at: nowIso(this.clock) });
        return { task, before };
      } catch (error) {
        await this.failed(store, task.id, 'before', error);
        return { task, before: null };
      }
    });
  }

  /** The end checkpoint; returns the result with its deliverable line `diff: agent-session://…` when files changed. */
  async finish(history: TaskHistory, result: string): Promise<string> {
    if (!this.stores.enabled || !history.before) return result;
    const { task } = history;
    const text = await this.stores.serial(task.sessionId, async () => {
      const store = this.stores.store(task.sessionId);
      try {
        await historyJournal.mark(store, { taskId: task.id, sessionId: task.sessionId, phase: 'after', at: nowIso(this.clock) });
        const root = (await this.workspace.forTask(task.sessionId)).root;
        const after = await store.take(root, { kind: 'after', taskId: task.id, sessionId: task.sessionId, undoOf: history.undoOf });
        await historyJournal.clearMarker(store);
        await this.sizeBound.bound(store, task.id);
        // A Task that changed nothing has no diff to deliver (its URI still reads, as an empty diff). Told by the
        // two trees and permission bits in hand, not by a `git diff-tree` (each git process costs the service a fork).
        if (sameFiles(history.before!, after)) return result;
      } catch (error) {
        await this.failed(store, task.id, 'after', error);
        return result;
      }
      return `${result}\n\ndiff: ${taskDiffUri(task.sessionId, task.id)}`;
    });
    // Outside this session's queue: the total bound queues its removals on the other sessions' own.
    if (!this.stores.shared) await this.totalBound.bound(task.sessionId).catch((error: Error) => this.logger.warn(`history total bound failed: ${error.message}`));
    return text;
  }

  /** A previous process stopped mid-Task: the journal says so, and the state found now is that Task's end. */
  private async settleStaleMarker(store: CheckpointStore, root: string): Promise<void> {
    const raw = await historyJournal.readMarker(store);
    if (raw === null) return;
    await store.distrustHead();
    let marker: Marker | null = null;
    try {
      marker = JSON.parse(raw) as Marker;
    } catch {
      // A marker cut by the crash itself: nothing more is known.
    }
    if (marker) {
      const note = `${PHASE_TEXT[marker.phase] ?? 'the service stopped'} (${marker.at}); the end checkpoint is the workspace as the next Task found it`;
      await historyJournal.append(store, { at: nowIso(this.clock), taskId: marker.taskId, event: 'interrupted', phase: marker.phase, note });
      const recorded = (await timelineOf(store.repo)).find((task) => task.taskId === marker.taskId);
      if (recorded?.before && !recorded.after) {
        await store.take(root, { kind: 'after', taskId: marker.taskId, sessionId: marker.sessionId, note });
      }
    }
    await historyJournal.clearMarker(store);
  }

  private async failed(store: CheckpointStore, taskId: string, phase: 'before' | 'after', error: unknown): Promise<void> {
    const message = (error as Error).message ?? String(error);
    this.logger.warn(`task ${taskId}: the ${phase === 'before' ? 'start' : 'end'} checkpoint failed: ${message}`);
    await historyJournal.append(store, { at: nowIso(this.clock), taskId, event: 'checkpoint_failed', phase, note: message.slice(0, 500) }).catch(() => undefined);
    // The checkpoint may have been recorded before the failure: the next one asks git which is the newest.
    await store.distrustHead().catch(() => undefined);
    await historyJournal.clearMarker(store).catch(() => undefined);
  }
}
