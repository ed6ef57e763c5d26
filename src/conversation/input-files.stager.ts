import { Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { AgentError } from '../common/agent-error.js';
import { AppConfig } from '../config/app-config.js';
import type { Caller } from '../identity/caller.js';
import type { TaskRequest } from '../queue/task-request.js';
import { SessionFork } from '../queue/session-fork.js';
import { SessionsService } from '../sessions/sessions.service.js';
import { WorkspaceError } from '../workspace/workspace-error.js';
import type { WorkspacePaths } from '../workspace/workspace-paths.js';
import { assertRoom } from '../workspace/workspace-usage.js';
import { WorkspaceService } from '../workspace/workspace.service.js';
import { checkInputFiles, filesNote, INPUTS_DIR, numberedName } from './input-files.js';

/** Names tried for one file beside earlier files of the same name (`data-2.csv`…) before the request is refused. */
const MAX_NAME_TRIES = 100;

/**
 * Files in (Chat API and A2A): a request's attachments are checked, then written to `inputs/<name>` of
 * the session workspace before the Task is queued, so its first step can read them; the request the
 * model reads names them. A new session's id is chosen here, since its workspace must exist first.
 * Every refusal is `invalid_input` (the surface answers 400 in its own shape), and nothing is written.
 */
@Injectable()
export class InputFilesStager {
  constructor(
    private readonly config: AppConfig,
    private readonly sessions: SessionsService,
    private readonly workspace: WorkspaceService,
    private readonly forks: SessionFork,
  ) {}

  async stage(caller: Caller, request: TaskRequest): Promise<TaskRequest> {
    if (!request.files?.length) return request;
    const checked = await checkInputFiles(request.files, this.config.mcp.files);
    // A fork (issue 24) is made first, so the files land in the forked session's workspace.
    const input = request.forkFrom ? { ...request, sessionId: (await this.forks.fork(caller, request.forkFrom)).sessionId, forkFrom: undefined } : request;
    if (input.sessionId !== null && !(await this.sessions.findOwned(input.sessionId, caller.user))) {
      throw new AgentError('session_not_found', `session_id: session ${input.sessionId} does not exist.`);
    }
    const newSessionId = input.sessionId === null ? (input.newSessionId ?? randomUUID()) : undefined;
    const paths = await this.workspace.forTask(input.sessionId ?? newSessionId!);
    const inputs = [];
    try {
      // All of them or none: the whole batch against the quota first, then each write (confined, atomic) checks again.
      await assertRoom(
        paths,
        checked.reduce((sum, file) => sum + file.data.length, 0),
        checked.length,
      );
      for (const file of checked) {
        const path = await this.writeBeside(paths, file.name, file.data);
        inputs.push({ path, mimeType: file.mimeType, bytes: file.data.length, sha256: file.sha256 });
      }
    } catch (error) {
      if (error instanceof WorkspaceError) throw new AgentError('invalid_input', `files: ${error.message}`);
      throw error;
    }
    const { files: _written, ...rest } = input;
    return { ...rest, newSessionId, inputs, request: `${input.request}\n\n${filesNote(inputs)}` };
  }

  /** Writes `inputs/<name>`, or beside a file of that name (`<stem>-2<ext>`…) that an earlier request left: never over it. */
  private async writeBeside(paths: WorkspacePaths, name: string, data: Buffer): Promise<string> {
    for (let n = 1; ; n++) {
      const path = `${INPUTS_DIR}/${n === 1 ? name : numberedName(name, n)}`;
      try {
        await this.workspace.files.writeFile(paths, path, data, { replace: false });
        return path;
      } catch (error) {
        if (!(error instanceof WorkspaceError && error.code === 'exists') || n >= MAX_NAME_TRIES) throw error;
      }
    }
  }
}
