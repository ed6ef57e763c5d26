import { Injectable, Logger, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import { StreamResponse, TaskState } from '@a2a-js/sdk';
import { V1PushNotificationSerializer } from '@a2a-js/sdk/server';
import type { RunEvent } from '../agent/core/run-events.js';
import { AppConfig } from '../config/app-config.js';
import { ConversationService } from '../conversation/conversation.service.js';
import { TaskEvents } from '../events/task-events.js';
import { PushDeliveries } from '../push/push-deliveries.js';
import { PushSigning } from '../push/push-signing.js';
import { A2aPushConfigRepository } from './a2a-push-config.repository.js';
import { a2aTaskOf } from './a2a-task.mapper.js';
import { a2aUrl } from './agent-card.js';
import { A2aContexts } from './a2a-contexts.js';

const serializer = new V1PushNotificationSerializer();

/**
 * A2A push notifications from the Task's own events, so they go out whichever replica runs the Task
 * and whether or not a client is connected: the process that sees a state change (WORKING once, then
 * the terminal Task with its artifacts) stores one delivery per push config of the Task's owner in the
 * outbox. Each request carries the config's token (`X-A2A-Notification-Token`), its `authentication`
 * as `Authorization`, or else (a2a.push.auth: jwt) a signed JWT verifiable from /.well-known/jwks.json.
 */
@Injectable()
export class A2aPushDispatch implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger('A2aPush');
  private unsubscribe: (() => void) | null = null;
  /** Tasks this process announced WORKING for (forgotten when they end). */
  private readonly working = new Set<string>();

  constructor(
    private readonly events: TaskEvents,
    private readonly configs: A2aPushConfigRepository,
    private readonly conversations: ConversationService,
    private readonly deliveries: PushDeliveries,
    private readonly signing: PushSigning,
    private readonly config: AppConfig,
    private readonly contexts: A2aContexts,
  ) {}

  onModuleInit(): void {
    if (this.config.a2a.push.allowedUrls.length === 0) return;
    this.deliveries.register('a2a', (row) => this.headers(row.taskId, row.target.slice(row.taskId.length + 1), row.payload, row.id));
    this.unsubscribe = this.events.subscribeAll((event, origin) => {
      if (origin !== 'local') return;
      this.announce(event)?.catch((error: Error) => this.logger.warn(`push of task ${event.taskId}: ${error.message}`));
    });
  }

  onModuleDestroy(): void {
    this.unsubscribe?.();
  }

  private announce(event: RunEvent): Promise<void> | null {
    if (event.type === 'status' && !this.working.has(event.taskId)) {
      this.working.add(event.taskId);
      return this.push(event.taskId, false);
    }
    if (event.type === 'ended') {
      this.working.delete(event.taskId);
      return this.push(event.taskId, true);
    }
    return null;
  }

  private async push(taskId: string, ended: boolean): Promise<void> {
    const row = await this.conversations.read(taskId);
    if (!row) return;
    const task = await this.contexts.view(row);
    const configs = await this.configs.ofTask(taskId, task.owner);
    if (configs.length === 0) return;
    const payload: StreamResponse = ended
      ? { payload: { $case: 'task', value: a2aTaskOf(await this.conversations.withFiles(task), await this.conversations.asking(task.id)) } }
      : {
          payload: {
            $case: 'statusUpdate',
            value: {
              taskId,
              contextId: task.contextId,
              status: { state: TaskState.TASK_STATE_WORKING, message: undefined, timestamp: task.updatedAt },
              metadata: { status: task.status },
            },
          },
        };
    const { body } = serializer.serialize(payload);
    for (const config of configs) {
      await this.deliveries.enqueue({ kind: 'a2a', target: `${taskId}/${config.configId}`, taskId, owner: task.owner, url: config.url, payload: body });
    }
  }

  private async headers(taskId: string, configId: string, body: string, deliveryId: string): Promise<Record<string, string> | null> {
    const config = await this.configs.one(taskId, configId);
    if (!config) return null;
    const headers: Record<string, string> = { 'Content-Type': 'application/a2a+json', 'X-A2A-Delivery': deliveryId };
    if (config.token) headers['X-A2A-Notification-Token'] = config.token;
    if (config.authScheme) headers.Authorization = `${config.authScheme} ${config.authCredentials}`;
    else if (this.config.a2a.push.auth === 'jwt')
      headers.Authorization = `Bearer ${await this.signing.jwt({ issuer: a2aUrl(this.config), audience: config.url, body, taskId, id: deliveryId })}`;
    return headers;
  }
}
