import { randomBytes } from 'node:crypto';
import { cp, mkdir, readdir, rename, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { openRoot, removeTreeAt } from './beneath.js';
import { join } from 'node:path';
import type { AgentConfig } from '../config/agent-config.js';
import { WorkspacePaths } from './workspace-paths.js';
import { SYSTEM_CLOCK, type Clock } from '../common/clock.js';
import { isUuid } from '../common/uuid.js';

const DAY_MS = 86_400_000;
/** The suffix of a workspace moved aside to be removed. */
const REMOVING = '.removing';

/** What readers find for a session: its files, a workspace removed by retention, or nothing yet. */
export type SessionFiles = { state: 'present'; paths: WorkspacePaths } | { state: 'expired' } | { state: 'absent' };

/**
 * Where each session's files live. `session` isolation: `<root>/sessions/<session_id>/`, created (from
 * the template) on the session's first Task, its mtime marking the last activity; retention replaces an
 * idle one by a `<session_id>.expired` tombstone. `shared`: every session works in the root itself.
 */
export class SessionWorkspaces {
  private constructor(
    private readonly rootPaths: WorkspacePaths,
    private readonly settings: AgentConfig['workspace'],
    private readonly clock: Clock,
  ) {}

  /** `clock`: the time a session's activity is marked at and its idleness counted against. */
  static async open(rootPaths: WorkspacePaths, settings: AgentConfig['workspace'], clock: Clock = SYSTEM_CLOCK): Promise<SessionWorkspaces> {
    if (settings.isolation === 'session') await mkdir(join(rootPaths.root, 'sessions'), { recursive: true });
    return new SessionWorkspaces(rootPaths, settings, clock);
  }

  get shared(): boolean {
    return this.settings.isolation === 'shared';
  }

  /** The workspace a Task of `sessionId` works in, created on the session's first Task (or after expiry). */
  async forTask(sessionId: string): Promise<WorkspacePaths> {
    if (this.shared) return this.rootPaths;
    const dir = this.dir(sessionId);
    if (!(await stat(dir).catch(() => null))) await this.create(sessionId, dir);
    await this.touch(sessionId);
    return this.open(dir);
  }

  /** The files of a session for readers (resources, admin); never creates anything. */
  async forReading(sessionId: string): Promise<SessionFiles> {
    if (this.shared) return { state: 'present', paths: this.rootPaths };
    const dir = this.dir(sessionId);
    if (await stat(dir).catch(() => null)) return { state: 'present', paths: await this.open(dir) };
    return (await stat(this.tombstone(sessionId)).catch(() => null)) ? { state: 'expired' } : { state: 'absent' };
  }

  /** Marks the session active now (its workspace's mtime), so retention counts idleness from here. */
  async touch(sessionId: string): Promise<void> {
    if (this.shared) return;
    const now = new Date(this.clock.now());
    await utimes(this.dir(sessionId), now, now).catch(() => undefined);
  }

  /** Removes the workspaces idle longer than `workspace.retention_days`; returns their session ids. */
  async sweep(): Promise<string[]> {
    const now = this.clock.now();
    const days = this.settings.retentionDays;
    if (this.shared || days === 0) return [];
    const base = join(this.rootPaths.root, 'sessions');
    const removed: string[] = [];
    for (const entry of await readdir(base, { withFileTypes: true }).catch(() => [])) {
      // Left by a removal a crash interrupted: already tombstoned, only the files remain to go.
      if (entry.isDirectory() && entry.name.endsWith(REMOVING)) await this.removeAt(base, entry.name);
      if (!entry.isDirectory() || !isUuid(entry.name)) continue;
      const info = await stat(join(base, entry.name)).catch(() => null);
      if (!info || now - info.mtimeMs < days * DAY_MS) continue;
      // The tombstone first: a reader never sees a half-removed workspace as merely absent.
      await writeFile(this.tombstone(entry.name), `${new Date(now).toISOString()}\n`);
      await this.remove(base, entry.name);
      removed.push(entry.name);
    }
    return removed;
  }

  private open(dir: string): Promise<WorkspacePaths> {
    return WorkspacePaths.open(dir, this.settings.maxSessionBytes, this.settings.maxSessionFiles);
  }

  /**
   * Moved aside first (one rename, so readers see the tombstone and nothing half-removed), then removed
   * through descriptors: a link met on the way is unlinked, never followed.
   */
  private async remove(base: string, name: string): Promise<void> {
    const doomed = `.${name}.${randomBytes(4).toString('hex')}${REMOVING}`;
    await rename(join(base, name), join(base, doomed));
    await this.removeAt(base, doomed);
  }

  private async removeAt(base: string, name: string): Promise<void> {
    const parent = await openRoot(base);
    try {
      await removeTreeAt(parent, name);
    } finally {
      await parent.close();
    }
  }

  private dir(sessionId: string): string {
    // Session ids are server-made UUIDs; anything else would be a path, and never reaches the disk.
    if (!isUuid(sessionId)) throw new Error(`not a session id: ${sessionId}`);
    return join(this.rootPaths.root, 'sessions', sessionId.toLowerCase());
  }

  private tombstone(sessionId: string): string {
    return `${this.dir(sessionId)}.expired`;
  }

  /**
   * Built beside its final place and renamed in, so a crash never leaves half a template copy. No
   * command can change either side meanwhile (the template is the operator's, the copy is invisible to
   * every sandbox until it is renamed in), so a path-based copy is race-free here; links are copied as
   * links, never followed.
   */
  private async create(sessionId: string, dir: string): Promise<void> {
    const building = join(this.rootPaths.root, 'sessions', `.${sessionId}.${randomBytes(4).toString('hex')}.tmp`);
    try {
      if (this.settings.template) await cp(this.settings.template, building, { recursive: true, verbatimSymlinks: true });
      else await mkdir(building);
      await rename(building, dir);
    } catch (error) {
      await rm(building, { recursive: true, force: true });
      // Another replica created it first: use theirs.
      if (!(await stat(dir).catch(() => null))) throw error;
    }
    await rm(this.tombstone(sessionId), { force: true });
  }
}
