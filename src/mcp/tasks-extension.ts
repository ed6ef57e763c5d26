import { Injectable } from '@nestjs/common';
import { ProtocolError, ProtocolErrorCode, type McpServer, type ServerContext } from '@modelcontextprotocol/server';
import { z } from 'zod';
import { ApprovalsService } from '../approvals/approvals.service.js';
import { AuditService } from '../audit/audit.service.js';
import { AppConfig } from '../config/app-config.js';
import { TASKS_EXTENSION } from '../common/server-info.js';
import type { Caller } from '../identity/caller.js';
import { ACTIVE_STATUSES } from '../queue/task-status.js';
import { TaskQueueService } from '../queue/task-queue.service.js';
import { mapTaskView } from '../tools/task-view.mapper.js';
import { declaresTasks } from './envelope.js';
import { getTaskResult } from './task-mapping.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
// Params are checked by hand, after the capability check: a strict schema would answer -32602 first.
const LOOSE = { params: z.looseObject({}), result: z.looseObject({}) };

/**
 * tasks/get, tasks/cancel and tasks/update over the durable queue; the MCP task id is the agent Task
 * id. Every request is audited; another user's Task answers exactly like an unknown one.
 */
@Injectable()
export class TasksExtension {
  constructor(
    private readonly queue: TaskQueueService,
    private readonly audit: AuditService,
    private readonly config: AppConfig,
    private readonly approvals: ApprovalsService,
  ) {}

  register(server: McpServer, callerOf: (ctx: ServerContext) => Caller): void {
    server.server.registerCapabilities({ extensions: { [TASKS_EXTENSION]: {} } });
    const low = server.server;
    low.setRequestHandler('tasks/get', LOOSE, (params, ctx) => this.handle('tasks/get', params, ctx, callerOf(ctx), (caller, taskId) => this.detailedTask(caller, taskId)));
    low.setRequestHandler('tasks/cancel', LOOSE, (params, ctx) =>
      this.handle('tasks/cancel', params, ctx, callerOf(ctx), async (caller, taskId) => (await this.queue.cancel(caller, taskId)) && {}),
    );
    low.setRequestHandler('tasks/update', LOOSE, (params, ctx) =>
      // Answers to anything but the request the Task waits for are acknowledged and ignored, as the extension requires.
      this.handle('tasks/update', params, ctx, callerOf(ctx), async (caller, taskId) => {
        const task = await this.queue.findOwned(caller, taskId);
        if (!task) return null;
        const responses = ctx.mcpReq.inputResponses;
        if (responses && ACTIVE_STATUSES.includes(task.status)) await this.approvals.answerInPlace(caller, task.id, responses);
        return {};
      }),
    );
  }

  /** The caller's Task as tasks/get answers it (and notifications/tasks carries it); null when not the caller's. */
  async detailedTask(caller: Caller, taskId: string): Promise<ReturnType<typeof getTaskResult> | null> {
    const task = await this.queue.findOwned(caller, taskId);
    if (!task) return null;
    const waiting = ACTIVE_STATUSES.includes(task.status) ? await this.approvals.inputRequestsOf(task.id) : null;
    return getTaskResult(mapTaskView(task), this.config.mcp.tasks, waiting, this.config.mcp.locale);
  }

  private async handle(
    method: string,
    params: Record<string, unknown>,
    ctx: ServerContext,
    caller: Caller,
    act: (caller: Caller, taskId: string) => Promise<Record<string, unknown> | null>,
  ): Promise<Record<string, unknown>> {
    const taskId = typeof params.taskId === 'string' ? params.taskId : null;
    const record = (outcome: 'ok' | 'rejected', reason?: string) =>
      this.audit.record({
        caller,
        action: method,
        outcome,
        taskId: taskId && UUID.test(taskId) ? taskId : null,
        detail: reason ? { taskId: params.taskId ?? null, reason } : { taskId },
      });
    if (!declaresTasks(ctx)) {
      await record('rejected', 'missing client capability');
      throw new ProtocolError(ProtocolErrorCode.MissingRequiredClientCapability, 'Missing required client capability', {
        requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } },
      });
    }
    const result = taskId && UUID.test(taskId) ? await act(caller, taskId) : null;
    if (!result) {
      await record('rejected', 'task not found');
      throw new ProtocolError(ProtocolErrorCode.InvalidParams, 'Failed to retrieve task: Task not found');
    }
    await record('ok');
    return result;
  }
}
