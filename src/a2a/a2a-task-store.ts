import type { ListTasksRequest, ListTasksResponse, Task, TaskState } from '@a2a-js/sdk';
import type { ServerCallContext, TaskStore } from '@a2a-js/sdk/server';
import { RequestMalformedError } from '@a2a-js/sdk/errors';
import { decodeCursor, encodeCursor } from '../common/cursor.js';
import type { ConversationService } from '../conversation/conversation.service.js';
import { TASK_STATUSES, type TaskStatus } from '../queue/task-status.js';
import { A2A_STATE, a2aTaskOf } from './a2a-task.mapper.js';
import { callerOf } from './a2a-user.js';
import { isUuid } from '../common/uuid.js';
import type { A2aContexts } from './a2a-contexts.js';

/**
 * The SDK's task store on our own tables: a Task is read from the tasks row (the record, whichever
 * surface accepted it and whichever replica runs it) and mapped; it is only ever written by the queue
 * and the worker, so `save` (the SDK's copy of the events it relayed) keeps nothing. Another user's
 * Task is not found, as on every surface, and a contextId means the caller's own conversation.
 */
export class A2aTaskStore implements TaskStore {
  constructor(
    private readonly conversations: ConversationService,
    private readonly contexts: A2aContexts,
  ) {}

  async save(): Promise<void> {}

  async load(taskId: string, context: ServerCallContext): Promise<Task | undefined> {
    if (!isUuid(taskId)) return undefined;
    const task = await this.conversations.find(callerOf(context), taskId);
    return task ? a2aTaskOf(await this.contexts.view(await this.conversations.withFiles(task)), await this.conversations.asking(task.id)) : undefined;
  }

  /** `statusTimestampAfter` arrives checked and normalised (A2aRequestHandler.listTasks). */
  async list(params: ListTasksRequest, context: ServerCallContext): Promise<ListTasksResponse> {
    const caller = callerOf(context);
    const pageSize = params.pageSize ?? 50;
    const sessionId = params.contextId ? await this.contexts.find(caller, params.contextId) : undefined;
    if (sessionId === null) return { tasks: [], nextPageToken: '', pageSize, totalSize: 0 };
    const beforeSeq = params.pageToken ? pageAfter(params.pageToken) : null;
    const filters = { sessionId, status: params.status ? statusesOf(params.status) : undefined, updatedFrom: params.statusTimestampAfter || undefined };
    const [rows, totalSize] = await Promise.all([this.conversations.listOwned(caller, filters, pageSize + 1, beforeSeq), this.conversations.countOwned(caller, filters)]);
    const page = rows.slice(0, pageSize);
    const withArtifacts = params.includeArtifacts === true;
    // Without artifacts the files would be dropped with them: they are not read.
    const withFiles = await this.contexts.views(withArtifacts ? await this.conversations.allWithFiles(page) : page.map((task) => ({ ...task, files: [] })));
    const tasks = await Promise.all(withFiles.map(async (task) => a2aTaskOf(task, await this.conversations.asking(task.id))));
    if (!withArtifacts) for (const task of tasks) task.artifacts = [];
    return { tasks, nextPageToken: rows.length > pageSize ? encodeCursor(page[page.length - 1].seq) : '', pageSize, totalSize };
  }
}

function pageAfter(token: string): number {
  try {
    return decodeCursor(token);
  } catch {
    throw new RequestMalformedError('pageToken: not a token this server gave out');
  }
}

/** The agent statuses an A2A state stands for (WORKING: planning or running). */
const statusesOf = (state: TaskState): TaskStatus[] => TASK_STATUSES.filter((status) => A2A_STATE[status] === state);
