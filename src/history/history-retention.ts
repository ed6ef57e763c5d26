import { Injectable, Logger } from '@nestjs/common';
import { readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { isUuid } from '../common/uuid.js';
import { WorkspaceService } from '../workspace/workspace.service.js';
import { HistoryStores } from './history-stores.js';

const SWEEP_EVERY_MS = 3_600_000;

/** A session workspace removed by `workspace.retention_days` takes its history along (hourly, as the workspaces). */
@Injectable()
export class HistoryRetention {
  private readonly logger = new Logger('History');
  private sweeper: NodeJS.Timeout | null = null;

  constructor(
    private readonly stores: HistoryStores,
    private readonly workspace: WorkspaceService,
  ) {}

  /** Sweeps now and every hour; nothing to sweep under a shared root or without retention. */
  start(retentionDays: number): void {
    if (this.stores.shared || retentionDays === 0) return;
    void this.sweep();
    this.sweeper = setInterval(() => void this.sweep(), SWEEP_EVERY_MS).unref();
  }

  stop(): void {
    if (this.sweeper) clearInterval(this.sweeper);
    this.sweeper = null;
  }

  /** Removes the history of every session whose workspace has expired. */
  async sweep(): Promise<void> {
    try {
      const dir = join(this.stores.dir, 'sessions');
      for (const name of await readdir(dir).catch(() => [] as string[])) {
        const sessionId = name.replace(/\.git$/, '');
        if (!isUuid(sessionId) || (await this.workspace.forReading(sessionId)).state !== 'expired') continue;
        await rm(join(dir, name), { recursive: true, force: true });
      }
    } catch (error) {
      this.logger.warn(`history retention sweep failed: ${(error as Error).message}`);
    }
  }
}
