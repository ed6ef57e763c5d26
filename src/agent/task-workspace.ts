import type { WorkspacePaths } from '../workspace/workspace-paths.js';

/** The workspace one Task works in: its session's directory (or the shared root). */
export interface TaskWorkspace {
  sessionId: string;
  paths: WorkspacePaths;
}
