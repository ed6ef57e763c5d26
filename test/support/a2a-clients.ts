import { Role, TaskState, type Message, type Part } from '@a2a-js/sdk';
import { randomUUID } from 'node:crypto';

/** A text part, in the SDK's (protobuf-shaped) form. */
export const a2aText = (value: string): Part => ({ content: { $case: 'text', value }, mediaType: 'text/plain', filename: '', metadata: {} });

export const a2aMessage = (parts: Part[], contextId = ''): Message => ({
  messageId: randomUUID(),
  contextId,
  taskId: '',
  role: Role.ROLE_USER,
  parts,
  metadata: {},
  extensions: [],
  referenceTaskIds: [],
});

/** SendMessage / SendStreamingMessage params: a new message, blocking unless `returnImmediately`. */
export const a2aSend = (parts: Part[], options: { contextId?: string; returnImmediately?: boolean } = {}) => ({
  tenant: '',
  message: a2aMessage(parts, options.contextId),
  configuration: { acceptedOutputModes: [], taskPushNotificationConfig: undefined, returnImmediately: options.returnImmediately ?? false },
  metadata: {},
});

/** ListTasks params: the caller's Tasks, of one context when given. */
export const a2aList = (contextId = '', pageSize = 100) => ({
  tenant: '',
  contextId,
  status: TaskState.TASK_STATE_UNSPECIFIED,
  pageSize,
  pageToken: '',
  historyLength: undefined,
  statusTimestampAfter: undefined,
  includeArtifacts: false,
});
