import { Injectable } from '@nestjs/common';
import { createHash } from 'node:crypto';
import { TraceRepository, type ChangedFile } from '../agent/trace.repository.js';
import { AgentError } from '../common/agent-error.js';
import { decodeCursor, encodeCursor } from '../common/cursor.js';
import { AppConfig } from '../config/app-config.js';
import { SessionsService } from '../sessions/sessions.service.js';
import { mimeTypeOf, parseSessionFileUri, sessionFileUri } from '../workspace/session-file-uri.js';
import type { SessionFiles } from '../workspace/session-workspaces.js';
import { WorkspaceError } from '../workspace/workspace-error.js';
import { WorkspaceService } from '../workspace/workspace.service.js';

/** A deliverable as MCP resources/list and the admin API describe it. */
export interface SessionFileView {
  uri: string;
  sessionId: string;
  path: string;
  name: string;
  mimeType: string;
  size: number;
}

export interface SessionFileContent extends SessionFileView {
  bytes: Buffer;
  sha256: string;
}

const PAGE = 100;

/**
 * The files Tasks produced, per session, read from the session workspaces. Ownership is exactly as for
 * Tasks: another user's session, an unknown one and a path outside it are all the same "not found".
 */
@Injectable()
export class SessionFilesService {
  constructor(
    private readonly trace: TraceRepository,
    private readonly sessions: SessionsService,
    private readonly workspace: WorkspaceService,
    private readonly config: AppConfig,
  ) {}

  /** The files the caller's Tasks created or changed and that still exist, newest change first. */
  listOwned(owner: string, cursor: string | undefined): Promise<{ files: SessionFileView[]; nextCursor?: string }> {
    return this.page({ owner }, cursor);
  }

  /** Admin: the files of any session's Tasks. */
  async listSession(sessionId: string, cursor: string | undefined): Promise<{ files: SessionFileView[]; nextCursor?: string }> {
    if (!(await this.sessions.find(sessionId))) throw new AgentError('session_not_found', `session ${sessionId} does not exist`);
    return this.page({ sessionId }, cursor);
  }

  /** One file of one of the caller's sessions, named by its resource URI. */
  async readOwned(owner: string, uri: string): Promise<SessionFileContent> {
    const target = parseSessionFileUri(uri);
    if (!target || !(await this.sessions.findOwned(target.sessionId, owner))) throw notFound(uri);
    return this.read(target.sessionId, target.path, uri);
  }

  /** Admin: one file of any session. */
  async readAny(sessionId: string, path: string): Promise<SessionFileContent> {
    const uri = sessionFileUri(sessionId, path);
    if (!parseSessionFileUri(uri) || !(await this.sessions.find(sessionId))) throw notFound(uri);
    return this.read(sessionId, path, uri);
  }

  private async read(sessionId: string, path: string, uri: string): Promise<SessionFileContent> {
    const files = await this.workspace.forReading(sessionId);
    if (files.state === 'expired') {
      throw new AgentError(
        'files_expired',
        `the files of session ${sessionId} expired: its workspace was removed after ${this.config.workspace.retentionDays} idle days (workspace.retention_days)`,
      );
    }
    if (files.state === 'absent') throw notFound(uri);
    const max = this.config.mcp.resources.maxReadBytes;
    let bytes: Buffer;
    try {
      bytes = await this.workspace.files.readBytes(files.paths, path, max);
    } catch (error) {
      if (!(error instanceof WorkspaceError)) throw error;
      if (error.code === 'too_large') throw new AgentError('resource_too_large', `${uri}: ${error.message} (mcp.resources.max_read_bytes)`);
      throw notFound(uri);
    }
    return { ...view(sessionId, path, bytes.length), bytes, sha256: createHash('sha256').update(bytes).digest('hex') };
  }

  private async page(scope: { owner: string } | { sessionId: string }, cursor: string | undefined) {
    const rows = await this.trace.changedFiles(scope, PAGE + 1, cursor === undefined ? null : decodeCursor(cursor));
    const page = rows.slice(0, PAGE);
    const workspaces = new Map<string, Promise<SessionFiles>>();
    const files: SessionFileView[] = [];
    for (const row of page) {
      const size = await this.sizeOf(row, workspaces);
      if (size !== null) files.push(view(row.sessionId, row.path, size));
    }
    return rows.length > PAGE ? { files, nextCursor: encodeCursor(page[page.length - 1].seq) } : { files };
  }

  /** The file's current size; null when it is gone (deleted by a later command, or its session expired). */
  private async sizeOf(row: ChangedFile, workspaces: Map<string, Promise<SessionFiles>>): Promise<number | null> {
    if (!workspaces.has(row.sessionId)) workspaces.set(row.sessionId, this.workspace.forReading(row.sessionId));
    const files = await workspaces.get(row.sessionId)!;
    return files.state === 'present' ? this.workspace.files.sizeOf(files.paths, row.path) : null;
  }
}

function view(sessionId: string, path: string, size: number): SessionFileView {
  return { uri: sessionFileUri(sessionId, path), sessionId, path, name: path, mimeType: mimeTypeOf(path), size };
}

const notFound = (uri: string) => new AgentError('resource_not_found', `resource not found: ${uri}`);
