import type { TaskPushNotificationConfig } from '@a2a-js/sdk';
import { RequestMalformedError } from '@a2a-js/sdk/errors';
import type { PushNotificationSender, PushNotificationStore, ServerCallContext } from '@a2a-js/sdk/server';
import { randomUUID } from 'node:crypto';
import { checkPushUrl } from '../push/url-guard.js';
import { type A2aPushConfigRepository, type PushConfigRow } from './a2a-push-config.repository.js';
import { callerOf } from './a2a-user.js';

/** Configs one Task may have: enough for a client's few receivers, bounded against a flood. */
const MAX_CONFIGS_PER_TASK = 10;
const MAX_FIELD_CHARS = 2000;

/**
 * The SDK's push-config store on `a2a_push_configs`: a config is the caller's own (another user's is
 * never seen), its URL checked against `a2a.push.allowed_urls` and the address guard when it is given
 * (a refusal names the rule), and it survives a restart. The SDK has already checked that the Task is
 * the caller's (or is being created by this call).
 */
export class A2aPushStore implements PushNotificationStore {
  constructor(
    private readonly repository: A2aPushConfigRepository,
    private readonly allowedUrls: readonly string[],
  ) {}

  async save(taskId: string, context: ServerCallContext, config: TaskPushNotificationConfig): Promise<void> {
    const checked = checkPushUrl(config.url, this.allowedUrls);
    if ('problem' in checked) throw new RequestMalformedError(`pushNotificationConfig.url: ${checked.problem}`);
    for (const [name, value] of [
      ['id', config.id],
      ['token', config.token],
      ['authentication.credentials', config.authentication?.credentials ?? ''],
      ['url', config.url],
    ] as const) {
      if (value.length > MAX_FIELD_CHARS || /[\r\n\0]/.test(value))
        throw new RequestMalformedError(`pushNotificationConfig.${name}: at most ${MAX_FIELD_CHARS} characters on one line`);
    }
    const owner = callerOf(context).user;
    if (!config.id) config.id = randomUUID();
    if (!(await this.repository.one(taskId, config.id)) && (await this.repository.count(taskId)) >= MAX_CONFIGS_PER_TASK) {
      throw new RequestMalformedError(`a Task takes at most ${MAX_CONFIGS_PER_TASK} push notification configs`);
    }
    await this.repository.upsert({
      taskId,
      configId: config.id,
      owner,
      url: config.url,
      token: config.token,
      authScheme: config.authentication?.scheme ?? '',
      authCredentials: config.authentication?.credentials ?? '',
    });
  }

  async load(taskId: string, context: ServerCallContext): Promise<TaskPushNotificationConfig[]> {
    return (await this.repository.ofTask(taskId, callerOf(context).user)).map(configOf);
  }

  async delete(taskId: string, context: ServerCallContext, configId?: string): Promise<void> {
    await this.repository.delete(taskId, callerOf(context).user, configId);
  }
}

export const configOf = (row: PushConfigRow): TaskPushNotificationConfig => ({
  tenant: '',
  id: row.configId,
  taskId: row.taskId,
  url: row.url,
  token: row.token,
  authentication: row.authScheme ? { scheme: row.authScheme, credentials: row.authCredentials } : undefined,
});

/** The SDK would send from the events of calls this process relays; pushes come from the Task's own events instead (A2aPushDispatch). */
export const NO_SDK_SENDER: PushNotificationSender = { send: async () => undefined };
