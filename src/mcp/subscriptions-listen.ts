import { Injectable, Logger, type BeforeApplicationShutdown } from '@nestjs/common';
import { SERVER_INFO_META_KEY, SUBSCRIPTION_ID_META_KEY } from '@modelcontextprotocol/server';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { RunEvent } from '../agent/core/run-events.js';
import { AuditService } from '../audit/audit.service.js';
import { SERVER_INFO, TASKS_EXTENSION } from '../common/server-info.js';
import { isUuid } from '../common/uuid.js';
import { TaskEvents } from '../events/task-events.js';
import type { Caller } from '../identity/caller.js';
import { TaskQueueService } from '../queue/task-queue.service.js';
import { SessionsService } from '../sessions/sessions.service.js';
import { parseSessionFileUri, sessionFileUri } from '../workspace/session-file-uri.js';
import { TasksExtension } from './tasks-extension.js';

/** Most Task ids and resource URIs one subscription follows. */
const MAX_ITEMS = 100;
const KEEPALIVE_MS = 15_000;
/** Open streams this process holds at most (each sees every Task event), as the SDK's router bounds its own. */
const MAX_OPEN = 1024;
const MODERN = '2026-07-28';

type Id = string | number;
interface Filter {
  taskIds?: string[];
  resourceSubscriptions?: string[];
  resourcesListChanged?: boolean;
  toolsListChanged?: boolean;
  promptsListChanged?: boolean;
}

/** A JSON-RPC `subscriptions/listen` request of the 2026-07-28 era (what this class serves), or null. */
export function listenRequestOf(body: unknown): { id: Id; params: Record<string, unknown> } | null {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return null;
  const message = body as Record<string, unknown>;
  if (message.method !== 'subscriptions/listen' || (typeof message.id !== 'string' && typeof message.id !== 'number')) return null;
  const params = typeof message.params === 'object' && message.params !== null ? (message.params as Record<string, unknown>) : {};
  const meta = (params._meta ?? {}) as Record<string, unknown>;
  return meta['io.modelcontextprotocol/protocolVersion'] === MODERN ? { id: message.id, params } : null;
}

/**
 * `subscriptions/listen` over Streamable HTTP, served here rather than by the SDK's listen router,
 * which knows neither the Tasks extension's `taskIds` filter nor whose a Task or a session file is:
 * - `taskIds`: a `notifications/tasks` (the DetailedTask tasks/get answers) for the current state and
 *   every change of each of the caller's own Tasks named (another user's id is dropped from the ack,
 *   exactly as an unknown one); asking for them without declaring the extension is -32021;
 * - `resourceSubscriptions`: `notifications/resources/updated` when a Task changes one of those session
 *   files (the caller's sessions only); `resourcesListChanged`: `notifications/resources/list_changed`
 *   when one of the caller's sessions gains a file.
 * The ack comes first, and every notification carries the subscription id, as the SDK's router does.
 * Events come from TaskEvents, so a Task another replica runs is pushed too.
 */
@Injectable()
export class SubscriptionsListen implements BeforeApplicationShutdown {
  private readonly logger = new Logger('McpListen');
  /** The open streams, ended at shutdown (a held-open response would keep the server from closing). */
  private readonly streams = new Set<ServerResponse>();

  constructor(
    private readonly events: TaskEvents,
    private readonly tasks: TasksExtension,
    private readonly queue: TaskQueueService,
    private readonly sessions: SessionsService,
    private readonly audit: AuditService,
  ) {}

  async serve(req: IncomingMessage, res: ServerResponse, caller: Caller, request: { id: Id; params: Record<string, unknown> }): Promise<void> {
    const refuse = async (code: number, message: string, data?: unknown) => {
      await this.audit.record({ caller, action: 'subscriptions/listen', outcome: 'rejected', detail: { reason: message } });
      res
        .writeHead(code === -32021 || code === -32020 ? 400 : 200, { 'Content-Type': 'application/json' })
        .end(JSON.stringify({ jsonrpc: '2.0', id: request.id, error: { code, message, ...(data ? { data } : {}) } }));
    };
    // The routing headers the SDK's ladder checks on every other request (-32020 HeaderMismatch).
    if (req.headers['mcp-protocol-version'] !== MODERN) return refuse(-32020, `Header mismatch: MCP-Protocol-Version must be ${MODERN}, as in _meta`);
    if (req.headers['mcp-method'] !== 'subscriptions/listen') return refuse(-32020, 'Header mismatch: Mcp-Method must be subscriptions/listen');
    if (this.streams.size >= MAX_OPEN) return refuse(-32603, 'Subscription limit reached');
    const filter = filterOf(request.params.notifications);
    if (typeof filter === 'string') return refuse(-32602, `Invalid params: ${filter}`);
    const meta = (request.params._meta ?? {}) as Record<string, { extensions?: Record<string, unknown> } | undefined>;
    if (filter.taskIds && meta['io.modelcontextprotocol/clientCapabilities']?.extensions?.[TASKS_EXTENSION] === undefined) {
      return refuse(-32021, 'Missing required client capability', { requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } } });
    }
    const honored = await this.honor(caller, filter);
    await this.audit.record({
      caller,
      action: 'subscriptions/listen',
      outcome: 'ok',
      detail: { notifications: { ...honored, taskIds: honored.taskIds?.length, resourceSubscriptions: honored.resourceSubscriptions?.length } },
    });
    res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache, no-transform', Connection: 'keep-alive', 'X-Accel-Buffering': 'no' });
    const send = (message: object) => res.write(`event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', ...message })}\n\n`);
    const notify = (method: string, params: Record<string, unknown>) =>
      send({ method, params: { ...params, _meta: { ...(params._meta as object), [SUBSCRIPTION_ID_META_KEY]: request.id } } });
    notify('notifications/subscriptions/acknowledged', { notifications: honored });
    if (Object.keys(honored).length === 0) {
      send({ id: request.id, result: { resultType: 'complete', _meta: { [SUBSCRIPTION_ID_META_KEY]: request.id, [SERVER_INFO_META_KEY]: SERVER_INFO } } });
      return void res.end();
    }
    const stop = this.follow(caller, honored, notify);
    const keepalive = setInterval(() => res.write(': keepalive\n\n'), KEEPALIVE_MS);
    this.streams.add(res);
    res.once('close', () => {
      this.streams.delete(res);
      clearInterval(keepalive);
      stop();
    });
  }

  /** Before the HTTP server closes, which waits for every open response. */
  beforeApplicationShutdown(): void {
    for (const res of this.streams) res.end();
  }

  /** The filter as this service delivers it: only the caller's Tasks and session files; list_changed of tools/prompts never happens. */
  private async honor(caller: Caller, filter: Filter): Promise<Filter> {
    const honored: Filter = {};
    if (filter.taskIds) {
      const owned = await Promise.all([...new Set(filter.taskIds)].filter(isUuid).map(async (id) => ((await this.queue.findOwned(caller, id)) ? id : null)));
      const ids = owned.filter((id): id is string => id !== null);
      if (ids.length > 0) honored.taskIds = ids;
    }
    if (filter.resourceSubscriptions) {
      const owned = await Promise.all(
        [...new Set(filter.resourceSubscriptions)].map(async (uri) => {
          const parsed = parseSessionFileUri(uri);
          return parsed && (await this.sessions.findOwned(parsed.sessionId, caller.user)) ? uri : null;
        }),
      );
      const uris = owned.filter((uri): uri is string => uri !== null);
      if (uris.length > 0) honored.resourceSubscriptions = uris;
    }
    if (filter.resourcesListChanged === true) honored.resourcesListChanged = true;
    return honored;
  }

  /** Subscribes the stream to its Tasks' and files' events; returns the unsubscribe. */
  private follow(caller: Caller, honored: Filter, notify: (method: string, params: Record<string, unknown>) => void): () => void {
    const last = new Map<string, string>();
    const open = new Set(honored.taskIds ?? []);
    const pushTask = (taskId: string) =>
      this.tasks
        .detailedTask(caller, taskId)
        .then((detailed) => {
          if (!detailed || !open.has(taskId)) return;
          const { resultType: _resultType, ...task } = detailed;
          const key = `${task.status}|${task.statusMessage}`;
          if (last.get(taskId) === key) return;
          last.set(taskId, key);
          notify('notifications/tasks', task);
          if (task.status === 'completed' || task.status === 'cancelled') open.delete(taskId);
        })
        .catch((error: Error) => this.logger.warn(`notifications/tasks for ${taskId}: ${error.message}`));
    // One chain per stream keeps the notifications in event order.
    let chain: Promise<unknown> = Promise.resolve();
    const enqueue = (work: () => Promise<unknown>): void => {
      // A failed step is logged and the chain goes on: one bad read must not stop the stream's later notifications.
      chain = chain.then(work).catch((error: Error) => this.logger.warn(`subscriptions/listen: ${error.message}`));
    };
    for (const taskId of open) enqueue(() => pushTask(taskId));
    const sessionOf = new Map<string, Promise<{ sessionId: string; owner: string } | null>>();
    const onEvent = (event: RunEvent) => {
      if (open.has(event.taskId) && ['status', 'progress', 'paused', 'ended', 'accepted'].includes(event.type)) enqueue(() => pushTask(event.taskId));
      const change = fileChangeOf(event);
      if (change && (honored.resourceSubscriptions || honored.resourcesListChanged)) {
        if (!sessionOf.has(event.taskId))
          sessionOf.set(
            event.taskId,
            this.queue.find(event.taskId).then((task) => task && { sessionId: task.sessionId, owner: task.owner }),
          );
        enqueue(async () => {
          const task = await sessionOf.get(event.taskId);
          if (!task || task.owner !== caller.user) return;
          const uri = sessionFileUri(task.sessionId, change.path);
          if (honored.resourceSubscriptions?.includes(uri)) notify('notifications/resources/updated', { uri });
          if (honored.resourcesListChanged && change.created) notify('notifications/resources/list_changed', {});
        });
      }
    };
    const unsubscribe = this.events.subscribeAll((event) => onEvent(event));
    // A reconnect between replicas may have dropped notifications: read the Tasks again.
    const ungap = this.events.onGap(() => open.forEach((taskId) => enqueue(() => pushTask(taskId))));
    return () => {
      unsubscribe();
      ungap();
      open.clear();
    };
  }
}

/** A changed workspace file (the run's `file_change` event). */
const fileChangeOf = (event: RunEvent) => (event.type === 'file_change' ? event.change : null);

/** The listen filter, or what is wrong with it. */
function filterOf(value: unknown): Filter | string {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return "'notifications' is required and must be an object";
  const filter = value as Record<string, unknown>;
  for (const key of ['taskIds', 'resourceSubscriptions'] as const) {
    const list = filter[key];
    if (list === undefined) continue;
    if (!Array.isArray(list) || !list.every((item) => typeof item === 'string')) return `'notifications.${key}' must be a list of strings`;
    if (list.length > MAX_ITEMS) return `'notifications.${key}' takes at most ${MAX_ITEMS} entries`;
  }
  for (const key of ['resourcesListChanged', 'toolsListChanged', 'promptsListChanged'] as const) {
    if (filter[key] !== undefined && typeof filter[key] !== 'boolean') return `'notifications.${key}' must be true or false`;
  }
  return filter;
}
