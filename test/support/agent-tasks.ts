import type { Client } from '@modelcontextprotocol/client';
import { pollUntil } from './poll.js';
import { fieldsOf, modernMeta, textOf, waitForTerminal, type RawDispatch } from './mcp-clients.js';
import type { ScriptedOllama, ScriptedReply } from './scripted-ollama.js';

/** A scripted model reply that calls one tool. */
export const toolCall = (name: string, args: Record<string, unknown>): ScriptedReply => ({ toolCalls: [{ name, arguments: args }] });

/** `client`'s agent_status text of a Task. */
export const statusText = async (client: Client, taskId: string) => textOf(await client.callTool({ name: 'agent_status', arguments: { task_id: taskId } }));

/**
 * agent_run (in `sessionId`'s session when given, `extra` arguments such as images) and agent_status until the
 * Task ends: its ids, its terminal status fields and its final agent_status text.
 */
export async function runTask(client: Client, request: string, sessionId?: string, extra: Record<string, unknown> = {}) {
  const accepted = fieldsOf(textOf(await client.callTool({ name: 'agent_run', arguments: { request, ...(sessionId ? { session_id: sessionId } : {}), ...extra } })));
  const final = await waitForTerminal((taskId) => statusText(client, taskId), accepted.task_id);
  return { task_id: accepted.task_id, session_id: accepted.session_id, final, text: await statusText(client, accepted.task_id) };
}

/** The tool results the agent sent the model in its last work chat, in order. */
export const lastToolResults = (ollama: ScriptedOllama) =>
  ollama.workChats
    .at(-1)!
    .body.messages.filter((message) => message.role === 'tool')
    .map((message) => message.content);

/** A request of a client that declares the Tasks extension, over `raw`. */
export const withTasks = (raw: RawDispatch, method: string, params: Record<string, unknown>) => raw({ method, params: { ...params, _meta: modernMeta(true) } });

/** tasks/get until the Task's Tasks-extension status is one of `wanted`; returns that result. */
export async function tasksGetUntil(raw: RawDispatch, taskId: string, wanted: string[], timeoutMs = 10_000) {
  let last: unknown;
  return pollUntil(
    async () => {
      const response = (last = await withTasks(raw, 'tasks/get', { taskId }));
      return response.kind === 'result' && wanted.includes(response.result.status) ? response.result : undefined;
    },
    `task ${taskId} reaching ${wanted.join(' or ')}`,
    { timeoutMs, lastSeen: () => JSON.stringify(last) },
  );
}
