import { Injectable } from '@nestjs/common';
import { dirname, join, resolve } from 'node:path';
import { Clock, SYSTEM_CLOCK } from '../common/clock.js';
import { isUuid } from '../common/uuid.js';
import { AppConfig } from '../config/app-config.js';
import { CheckpointStore } from './checkpoint-store.js';
import { GitRepository } from './git-repository.js';

/**
 * Where each session's history repository is (one bare repository per session workspace, `shared.git` for a shared
 * root, under `history.dir`), whether there is a history at all (configured, and git runs), and the lock that lets
 * one checkpoint or restore at a time touch a repository.
 */
@Injectable()
export class HistoryStores {
  /** The folder of every history repository. */
  readonly dir: string;
  private gitMissing = false;
  private readonly queues = new Map<string, Promise<unknown>>();

  constructor(
    private readonly config: AppConfig,
    private readonly clock: Clock = SYSTEM_CLOCK,
  ) {
    const beside = config.database.type === 'sqlite' ? join(dirname(config.database.path), 'history') : './data/history';
    this.dir = resolve(config.history.dir || beside);
  }

  /** Runs `git --version` once (at boot): without git the history is off and the error says why; null when git runs. */
  async probeGit(): Promise<Error | null> {
    const version = await new GitRepository(this.dir).git(['--version'], { bare: false }).catch((error: Error) => error);
    this.gitMissing = version instanceof Error;
    return version instanceof Error ? version : null;
  }

  get enabled(): boolean {
    return this.config.history.enabled && !this.gitMissing;
  }

  get shared(): boolean {
    return this.config.workspace.isolation === 'shared';
  }

  /** The checkpoint store of a session's repository (the shared root's for every session under `isolation: shared`). */
  store(sessionId: string): CheckpointStore {
    if (!isUuid(sessionId)) throw new Error(`not a session id: ${sessionId}`);
    const repoDir = this.shared ? join(this.dir, 'shared.git') : join(this.dir, 'sessions', `${sessionId.toLowerCase()}.git`);
    return new CheckpointStore(new GitRepository(repoDir), { maxFiles: this.config.history.maxFiles, largeFileBytes: this.config.history.largeFileBytes }, this.clock);
  }

  /** One checkpoint or restore at a time per repository (an admin fork may read while a Task writes). */
  serial<T>(sessionId: string, work: () => Promise<T>): Promise<T> {
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
}
