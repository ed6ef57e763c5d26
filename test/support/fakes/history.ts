import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { TraceRepository } from '../../../src/agent/trace.repository.js';
import { type Clock, SYSTEM_CLOCK } from '../../../src/common/clock.js';
import type { AppConfig } from '../../../src/config/app-config.js';
import { CheckpointRecorder } from '../../../src/history/checkpoint-recorder.js';
import { HistoryBound } from '../../../src/history/history-bound.js';
import { HistoryTotalBound } from '../../../src/history/history-total-bound.js';
import { HistoryDiffs } from '../../../src/history/history-diffs.js';
import { HistoryFork } from '../../../src/history/history-fork.js';
import { HistoryRetention } from '../../../src/history/history-retention.js';
import { HistoryService } from '../../../src/history/history.service.js';
import { HistoryStores } from '../../../src/history/history-stores.js';
import { HistoryUndo } from '../../../src/history/history-undo.js';
import type { SessionsService } from '../../../src/sessions/sessions.service.js';
import type { WorkspaceService } from '../../../src/workspace/workspace.service.js';
import { MemoryTrace } from './memory-trace.js';

/**
 * Session workspaces as folders under `base` (`<base>/<session>`), made on first use, as WorkspaceService's
 * `forTask` does; `expire` marks one as retention would (what `forReading` then says).
 */
export class FolderWorkspaces implements Pick<WorkspaceService, 'forTask' | 'forReading'> {
  readonly expired = new Set<string>();
  constructor(private readonly base: string) {}

  root(sessionId: string): string {
    return join(this.base, sessionId);
  }

  async forTask(sessionId: string) {
    mkdirSync(this.root(sessionId), { recursive: true });
    return { root: this.root(sessionId) } as Awaited<ReturnType<WorkspaceService['forTask']>>;
  }

  async forReading(sessionId: string) {
    return { state: this.expired.has(sessionId) ? 'expired' : 'present' } as Awaited<ReturnType<WorkspaceService['forReading']>>;
  }
}

/**
 * The history module's providers built by hand, as Nest builds them (history.module.ts), over real git in the
 * folders the config names: a HistoryService and its parts.
 */
export function buildHistory(deps: {
  config: AppConfig;
  workspace: Pick<WorkspaceService, 'forTask' | 'forReading'>;
  sessions: Pick<SessionsService, 'find' | 'findOwned'>;
  trace?: MemoryTrace;
  clock?: Clock;
}) {
  const { config, clock = SYSTEM_CLOCK, trace = new MemoryTrace() } = deps;
  const workspace = deps.workspace as WorkspaceService;
  const sessions = deps.sessions as SessionsService;
  const stores = new HistoryStores(config, clock);
  const checkpoints = new CheckpointRecorder(stores, workspace, new HistoryBound(config, clock), new HistoryTotalBound(config, stores, clock), clock);
  const retention = new HistoryRetention(stores, workspace);
  const service = new HistoryService(
    config,
    stores,
    sessions,
    checkpoints,
    new HistoryDiffs(stores, sessions, config),
    new HistoryUndo(stores, workspace, trace as unknown as TraceRepository, clock),
    new HistoryFork(stores, workspace),
    retention,
  );
  return { service, stores, retention, trace };
}
