import { Injectable, Logger, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import { appendFile, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { AgentFailure, type AgentOutcome } from '../agent/agent-runner.js';
import { TraceRepository } from '../agent/trace.repository.js';
import { AgentError } from '../common/agent-error.js';
import { Clock, nowIso, SYSTEM_CLOCK } from '../common/clock.js';
import { isUuid } from '../common/uuid.js';
import { AppConfig } from '../config/app-config.js';
import { SessionsService } from '../sessions/sessions.service.js';
import { WorkspaceService } from '../workspace/workspace.service.js';
import { changeSet, sameFiles, type FileChange } from './change-set.js';
import { CheckpointStore, type Checkpoint } from './checkpoint-store.js';
import { renderDiff } from './diff-text.js';
import { GitRepository } from './git-repository.js';
import { HistoryBounds } from './history-bounds.js';
import { taskDiffUri } from './history-uri.js';
import { timelineOf, type TaskCheckpoints } from './history-timeline.js';
import { planUndo } from './undo-plan.js';
import { undoRequestOf } from './undo-request.js';
import { restoreCheckpoint } from './workspace-restore.js';

/** The Task a checkpoint pair belongs to. */
export interface HistoryTask {
  id: string;
  sessionId: string;
  request: string;
}

/** What `begin` hands to `finish`: the start checkpoint, or why there is none. */
export interface TaskHistory {
  task: HistoryTask;
  before: Checkpoint | null;
  undoOf?: string;
}

/** A stale marker: the service stopped while a Task ran or was checkpointed. */
interface Marker {
  taskId: string;
  sessionId: string;
  phase: 'before' | 'running' | 'after';
  at: string;
}

const MARKER = 'oam-task.json';
const JOURNAL = 'oam-journal.jsonl';
const SWEEP_EVERY_MS = 3_600_000;

const PHASE_TEXT: Record<Marker['phase'], string> = {
  before: 'the service stopped during its start checkpoint',
  running: 'the service stopped while it ran',
  after: 'the service stopped during its end checkpoint',
};

/**
 * Workspace history: a checkpoint before and after every Task, taken by the queue around the agent run
 * (never inside the loop); each Task's changes as one change set and unified diff; undo as a Task of
 * its own; the workspace of a fork. One bare git repository per session workspace (the shared root has
 * one for all), under `history.dir`, outside every workspace, bounded by `history.max_bytes` each and
 * `history.max_total_bytes` together (history-bounds.ts).
 */
@Injectable()
export class HistoryService implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger('History');
  private sweeper: NodeJS.Timeout | null = null;
  private gitMissing = false;
  private readonly dir: string;
  private readonly queues = new Map<string, Promise<unknown>>();
  private readonly bounds: HistoryBounds;

  constructor(
    private readonly config: AppConfig,
    private readonly workspace: WorkspaceService,
    private readonly trace: TraceRepository,
    private readonly sessions: SessionsService,
    private readonly clock: Clock = SYSTEM_CLOCK,
  ) {
    const beside = config.database.type === 'sqlite' ? join(dirname(config.database.path), 'history') : './data/history';
    this.dir = resolve(config.history.dir || beside);
    const dropped = (repo: GitRepository, taskId: string, note: string) => this.journalAt(repo.dir, { at: nowIso(this.clock), taskId, event: 'dropped', note });
    const inProgress = (repo: GitRepository) =>
      stat(join(repo.dir, MARKER)).then(
        () => true,
        () => false,
      );
    this.bounds = new HistoryBounds(this.dir, { maxBytes: config.history.maxBytes, maxTotalBytes: config.history.maxTotalBytes }, dropped, inProgress);
  }

  /** A session workspace removed by `workspace.retention_days` takes its history along (hourly, as the workspaces). */
  async onModuleInit(): Promise<void> {
    if (!this.enabled) return;
    // Without git there is no history: said once at boot, and every Task runs without checkpoints.
    const version = await new GitRepository(this.dir).git(['--version'], { bare: false }).catch((error: Error) => error);
    if (version instanceof Error) {
      this.gitMissing = true;
      this.logger.warn(`workspace history is off: git could not be run (${version.message}); install git or set history.enabled: false`);
      return;
    }
    if (this.shared || this.config.workspace.retentionDays === 0) return;
    void this.sweep();
    this.sweeper = setInterval(() => void this.sweep(), SWEEP_EVERY_MS).unref();
  }

  onModuleDestroy(): void {
    if (this.sweeper) clearInterval(this.sweeper);
  }

  private async sweep(): Promise<void> {
    try {
      const dir = join(this.dir, 'sessions');
      for (const name of await readdir(dir).catch(() => [] as string[])) {
        const sessionId = name.replace(/\.git$/, '');
        if (!isUuid(sessionId) || (await this.workspace.forReading(sessionId)).state !== 'expired') continue;
        await rm(join(dir, name), { recursive: true, force: true });
      }
    } catch (error) {
      this.logger.warn(`history retention sweep failed: ${(error as Error).message}`);
    }
  }

  get enabled(): boolean {
    return this.config.history.enabled && !this.gitMissing;
  }

  get shared(): boolean {
    return this.config.workspace.isolation === 'shared';
  }

  /** Whether `request` asks to undo (then the queue runs `undo` instead of the agent). */
  isUndo(request: string): boolean {
    return this.enabled && undoRequestOf(request) !== null;
  }

  /**
   * The start checkpoint. A failure never fails the Task: it is logged, journaled, and the Task runs
   * without a diff. A marker left by a previous process that stopped mid-Task is settled first.
   */
  async begin(task: HistoryTask): Promise<TaskHistory> {
    if (!this.enabled) return { task, before: null };
    return this.serial(task.sessionId, async () => {
      const store = this.store(task.sessionId);
      try {
        const root = (await this.workspace.forTask(task.sessionId)).root;
        await store.ensure();
        await this.settleStaleMarker(store, root);
        await this.mark(store, { taskId: task.id, sessionId: task.sessionId, phase: 'before', at: nowIso(this.clock) });
        const before = await store.take(root, { kind: 'before', taskId: task.id, sessionId: task.sessionId });
        await this.mark(store, { taskId: task.id, sessionId: task.sessionId, phase: 'running', at: nowIso(this.clock) });
        return { task, before };
      } catch (error) {
        await this.failed(store, task.id, 'before', error);
        return { task, before: null };
      }
    });
  }

  /** The end checkpoint; returns the result with its deliverable line `diff: agent-session://…` when files changed. */
  async finish(history: TaskHistory, result: string): Promise<string> {
    if (!this.enabled || !history.before) return result;
    const { task } = history;
    const text = await this.serial(task.sessionId, async () => {
      const store = this.store(task.sessionId);
      try {
        await this.mark(store, { taskId: task.id, sessionId: task.sessionId, phase: 'after', at: nowIso(this.clock) });
        const root = (await this.workspace.forTask(task.sessionId)).root;
        const after = await store.take(root, { kind: 'after', taskId: task.id, sessionId: task.sessionId, undoOf: history.undoOf });
        await rm(join(store.repo.dir, MARKER), { force: true });
        await this.bounds.boundRepository(store.repo, task.id);
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
    if (!this.shared)
      await this.bounds
        .boundTotal(task.sessionId, (sessionId, work) => this.serial(sessionId, work))
        .catch((error: Error) => this.logger.warn(`history total bound failed: ${error.message}`));
    return text;
  }

  /**
   * Runs an undo request as the Task's work: restores what the target Task changed to its start
   * checkpoint, traces each path, and answers in words for the person who asked (the conversation keeps
   * them, so the model reads them with the next request too). A refusal is an AgentFailure naming the
   * reason and the files.
   */
  async undo(history: TaskHistory): Promise<AgentOutcome> {
    const target = undoRequestOf(history.task.request);
    if (!target || !history.before) throw new AgentFailure('Undo is not possible: the workspace history could not record this Task (see the service log).');
    const store = this.store(history.task.sessionId);
    const timeline = await timelineOf(store.repo);
    const plan = await planUndo(store.repo, timeline, history.task, target, history.before.commit);
    const root = (await this.workspace.forTask(history.task.sessionId)).root;
    const started = this.clock.now();
    const outcome = await this.serial(history.task.sessionId, () => restoreCheckpoint(store.repo, plan.target.before!.commit, root, plan.paths));
    history.undoOf = plan.target.taskId;
    for (const path of outcome.restored) {
      await this.trace.append({
        taskId: history.task.id,
        subtask: 'undo',
        kind: 'file_op',
        name: 'undo',
        outcome: 'ok',
        durationMs: this.clock.now() - started,
        startedAt: nowIso(this.clock),
        detail: { path, undoOf: plan.target.taskId },
      });
    }
    const names = (paths: string[]) => paths.map((path) => JSON.stringify(path)).join(', ');
    const count = outcome.restored.length;
    const lines = [
      count === 0
        ? `Undid task ${plan.target.taskId}: it had changed no file, so nothing needed restoring.`
        : `Undid task ${plan.target.taskId}: ${count === 1 ? 'the file it changed is' : `the ${count} files it changed are`} back as they were before it (${names(outcome.restored)}).`,
    ];
    if (outcome.notRestorable.length > 0) {
      lines.push(`Not restored, because only their hash was recorded (large files): ${names(outcome.notRestorable)}.`);
    }
    return { result: lines.join('\n'), progress: { completedSubtasks: 1, totalSubtasks: 1, currentTask: 'undo' } };
  }

  /** Whether an undo of `taskId` (or of the last Task) would be refused now: the admin asks before queuing one. */
  async checkUndo(sessionId: string, taskId: string | null): Promise<{ target: string; paths: string[] }> {
    const store = this.store(sessionId);
    const timeline = await timelineOf(store.repo);
    const current = timeline.at(-1)?.after ?? timeline.at(-1)?.before;
    if (!current) throw new AgentError('invalid_input', 'Nothing to undo: this session has no recorded Task.');
    const probe = { id: '00000000-0000-4000-8000-000000000000', sessionId, request: '' };
    try {
      const plan = await planUndo(store.repo, timeline, probe, taskId ? { kind: 'task', taskId } : { kind: 'last' }, current.commit);
      return { target: plan.target.taskId, paths: plan.paths };
    } catch (error) {
      if (error instanceof AgentFailure) throw new AgentError('invalid_input', error.message);
      throw error;
    }
  }

  /** A Task's change set and unified diff; a Task the history could not record says why instead. */
  async diff(sessionId: string, taskId: string): Promise<{ text: string; changes: FileChange[] }> {
    const store = this.store(sessionId);
    // The session too: a shared root's repository holds every session's Tasks.
    const task = (await timelineOf(store.repo)).find((entry) => entry.taskId === taskId && entry.sessionId === sessionId);
    if (!task?.before || !task.after) return { text: await this.missingText(store, taskId, task), changes: [] };
    const changes = await changeSet(store.repo, task.before.commit, task.after.commit);
    const blobs = await store.repo.objects(changes.flatMap((change) => [change.before?.oid, change.after?.oid]).filter((oid): oid is string => !!oid));
    const scope = this.shared ? `# workspace: the shared root (workspace.isolation: shared), as changed while task ${taskId} ran\n` : '';
    const notes = (await this.journalOf(store, taskId)).map((entry) => `# ${entry.event}: ${entry.note}\n`).join('');
    const text = renderDiff(changes, blobs, {
      maxLines: this.config.history.diffMaxLinesPerFile,
      maxChars: this.config.mcp.resources.maxReadBytes,
      maxTotalChars: this.config.mcp.resources.maxReadBytes,
    });
    return { text: scope + notes + text, changes };
  }

  /**
   * The diff of a Task of one of `user`'s sessions. Another user's session, and a Task the session's
   * history never heard of (no checkpoint, no journal line), read as the same missing resource: an
   * answer must not tell which ids exist.
   */
  async diffOwned(user: string, sessionId: string, taskId: string): Promise<string> {
    const missing = () => new AgentError('resource_not_found', `no diff for task ${taskId}`);
    if (!(await this.sessions.findOwned(sessionId, user))) throw missing();
    if (!this.enabled) throw new AgentError('resource_not_found', 'the workspace history is off (history.enabled: false)');
    if (!(await this.knows(sessionId, taskId))) throw missing();
    return (await this.diff(sessionId, taskId)).text;
  }

  /** Whether the session's history recorded anything of the Task: a checkpoint, or a journal line (a failure, a drop). */
  private async knows(sessionId: string, taskId: string): Promise<boolean> {
    const store = this.store(sessionId);
    const recorded = (await timelineOf(store.repo)).some((entry) => entry.taskId === taskId && entry.sessionId === sessionId);
    return recorded || (await this.journalOf(store, taskId)).length > 0;
  }

  /** Undo and fork act on the caller's own sessions only (admins included): another's reads as missing. */
  async assertOwned(user: string, sessionId: string): Promise<void> {
    if (!(await this.sessions.findOwned(sessionId, user))) throw new AgentError('session_not_found', `session ${sessionId} does not exist.`);
  }

  /** Admin reads: any session, but one that exists. */
  async assertExists(sessionId: string): Promise<void> {
    if (!(await this.sessions.find(sessionId))) throw new AgentError('session_not_found', `session ${sessionId} does not exist.`);
  }

  /** The session's Tasks as the history recorded them, oldest first. */
  async timeline(sessionId: string): Promise<TaskCheckpoints[]> {
    return (await timelineOf(this.store(sessionId).repo)).filter((task) => task.sessionId === sessionId);
  }

  /** A fork's workspace: the source session's workspace as it was at the end of `taskId`. */
  async materializeFork(sourceSessionId: string, taskId: string, targetSessionId: string): Promise<{ notRestorable: string[] }> {
    if (this.shared) throw new AgentError('invalid_input', 'fork_from: forking needs workspace.isolation: session (every session shares one workspace here).');
    const task = (await this.timeline(sourceSessionId)).find((entry) => entry.taskId === taskId);
    if (!task?.after) throw new AgentError('invalid_input', `fork_from: task ${taskId} has no recorded end checkpoint to fork from.`);
    const root = (await this.workspace.forTask(targetSessionId)).root;
    const outcome = await restoreCheckpoint(this.store(sourceSessionId).repo, task.after.commit, root, 'all');
    return { notRestorable: outcome.notRestorable };
  }

  private store(sessionId: string): CheckpointStore {
    if (!isUuid(sessionId)) throw new Error(`not a session id: ${sessionId}`);
    const repoDir = this.shared ? join(this.dir, 'shared.git') : join(this.dir, 'sessions', `${sessionId.toLowerCase()}.git`);
    return new CheckpointStore(new GitRepository(repoDir), { maxFiles: this.config.history.maxFiles, largeFileBytes: this.config.history.largeFileBytes }, this.clock);
  }

  /** One checkpoint or restore at a time per repository (an admin fork may read while a Task writes). */
  private serial<T>(sessionId: string, work: () => Promise<T>): Promise<T> {
    const key = this.shared ? 'shared' : sessionId;
    const previous = this.queues.get(key) ?? Promise.resolve();
    const next = previous.then(work, work);
    const settled = next.catch(() => undefined);
    this.queues.set(key, settled);
    void settled.then(() => {
      if (this.queues.get(key) === settled) this.queues.delete(key);
    });
    return next;
  }

  private async mark(store: CheckpointStore, marker: Marker): Promise<void> {
    await writeFile(join(store.repo.dir, MARKER), JSON.stringify(marker));
  }

  /** A previous process stopped mid-Task: the journal says so, and the state found now is that Task's end. */
  private async settleStaleMarker(store: CheckpointStore, root: string): Promise<void> {
    const raw = await readFile(join(store.repo.dir, MARKER), 'utf8').catch(() => null);
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
      await this.journal(store, { at: nowIso(this.clock), taskId: marker.taskId, event: 'interrupted', phase: marker.phase, note });
      const recorded = (await timelineOf(store.repo)).find((task) => task.taskId === marker.taskId);
      if (recorded?.before && !recorded.after) {
        await store.take(root, { kind: 'after', taskId: marker.taskId, sessionId: marker.sessionId, note });
      }
    }
    await rm(join(store.repo.dir, MARKER), { force: true });
  }

  private async failed(store: CheckpointStore, taskId: string, phase: 'before' | 'after', error: unknown): Promise<void> {
    const message = (error as Error).message ?? String(error);
    this.logger.warn(`task ${taskId}: the ${phase === 'before' ? 'start' : 'end'} checkpoint failed: ${message}`);
    await this.journal(store, { at: nowIso(this.clock), taskId, event: 'checkpoint_failed', phase, note: message.slice(0, 500) }).catch(() => undefined);
    // The checkpoint may have been recorded before the failure: the next one asks git which is the newest.
    await store.distrustHead().catch(() => undefined);
    await rm(join(store.repo.dir, MARKER), { force: true }).catch(() => undefined);
  }

  private journal(store: CheckpointStore, entry: Record<string, unknown>): Promise<void> {
    return this.journalAt(store.repo.dir, entry);
  }

  private async journalAt(repoDir: string, entry: Record<string, unknown>): Promise<void> {
    await appendFile(join(repoDir, JOURNAL), `${JSON.stringify(entry)}\n`);
  }

  /** What the journal says of a Task (interrupted, a failed checkpoint, dropped by the bound). */
  private async journalOf(store: CheckpointStore, taskId: string): Promise<{ event: string; note: string }[]> {
    const journal = await readFile(join(store.repo.dir, JOURNAL), 'utf8').catch(() => '');
    return journal
      .split('\n')
      .filter((line) => line.includes(taskId))
      .flatMap((line) => {
        try {
          return [JSON.parse(line) as { event: string; note: string }];
        } catch {
          return [];
        }
      });
  }

  /** Why a Task has no diff, from the journal. */
  private async missingText(store: CheckpointStore, taskId: string, task: TaskCheckpoints | undefined): Promise<string> {
    const reasons = (await this.journalOf(store, taskId)).map((entry) => `# ${entry.event}: ${entry.note}`);
    const head = task ? `# the end checkpoint of task ${taskId} was not recorded` : `# no checkpoint was recorded for task ${taskId}`;
    return [head, ...reasons].join('\n') + '\n';
  }
}
