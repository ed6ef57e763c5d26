import { describe, expect, it } from '@jest/globals';
import type { Browser } from 'playwright-core';
import { openBrowser } from '../support/browser.js';
import { ClientFactory, ClientFactoryOptions, DefaultAgentCardResolver, JsonRpcTransportFactory } from '@a2a-js/sdk/client';
import OpenAI from 'openai';
import { a2aSend, a2aText } from '../support/a2a-clients.js';
import { probe } from '../support/database-probe.js';
import { useStack } from '../support/e2e-stack.js';
import { fieldsOf, textOf, waitForTerminal } from '../support/mcp-clients.js';
import { ADMIN, as, PROXY_AUTH } from '../support/proxy-identity.js';

/**
 * Issue 39: usage per user and UTC day (GET /admin/usage, JSON and CSV; admins everyone, users their own),
 * correct against the scripted model's token counts (every Task here: one model call of 10 prompt and 5
 * generated tokens, Ollama's prompt_eval_count and eval_count), and `quotas.tokens_per_user_day` refusing a
 * user already past it on each surface (MCP Tool error, Chat 429 with Retry-After, A2A error), audited, with a
 * group's override.
 */

const ALICE = as('alice@example.com', 'dev');
const BOB = as('bob@example.com', 'dev, heavy');
const DAVE = as('dave@example.com', 'dev');
const today = () => new Date().toISOString().slice(0, 10);
const nextMidnight = () => {
  const now = new Date();
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1)).toISOString();
};

describe('usage per user and day, and the daily token quota', () => {
  const stack = useStack({ config: { auth: PROXY_AUTH, quotas: { tokens_per_user_day: 20, tokens_per_user_day_by_group: { heavy: 1000 } } } });

  const run = async (headers: Record<string, string>, request: string) => {
    const client = await stack.mcpClient(headers);
    const result = await client.callTool({ name: 'agent_run', arguments: { request } });
    if (result.isError) return { refused: textOf(result) };
    const accepted = fieldsOf(textOf(result));
    await waitForTerminal(async (id) => textOf(await client.callTool({ name: 'agent_status', arguments: { task_id: id } })), accepted.task_id);
    return { taskId: accepted.task_id };
  };
  const usage = async (headers: Record<string, string>, query = '', accept = 'application/json') =>
    fetch(`${stack.base}/admin/usage${query}`, { headers: { ...headers, Accept: accept } });

  it('adds each ended Task to its owner’s day: Tasks, model and tool calls, tokens, wall time', async () => {
    expect(await run(ALICE, 'first')).toHaveProperty('taskId');
    expect(await run(ALICE, 'second')).toHaveProperty('taskId');
    const mine = await usage(ALICE);
    expect(mine.status).toBe(200);
    const report = (await mine.json()) as { from: string; to: string; user: string; days: Record<string, unknown>[] };
    expect(report).toMatchObject({ to: today(), user: 'alice@example.com' });
    expect(report.days).toEqual([
      { day: today(), user: 'alice@example.com', tasks: 2, model_calls: 2, tool_calls: 0, input_tokens: 20, output_tokens: 10, total_tokens: 30, wall_ms: expect.any(Number) },
    ]);
  });

  it('refuses a user past tokens_per_user_day on every surface, naming the quota and its reset, and audits it', async () => {
    const mcp = await run(ALICE, 'third');
    expect(mcp).toEqual({ refused: expect.stringMatching(/^Quota exceeded: you have used 30 tokens today/) });
    expect(mcp.refused).toContain('quotas.tokens_per_user_day: 20');
    expect(mcp.refused).toContain(`resets at ${nextMidnight()}`);

    const openai = new OpenAI({ baseURL: `${stack.base}/v1`, apiKey: 'unused', maxRetries: 0, defaultHeaders: ALICE });
    const chat = await openai.chat.completions
      .create({ model: 'ollama-agent', messages: [{ role: 'user', content: 'fourth' }] })
      .catch((error: unknown) => error as InstanceType<typeof OpenAI.APIError>);
    expect(chat).toBeInstanceOf(OpenAI.RateLimitError);
    const refusal = chat as InstanceType<typeof OpenAI.APIError>;
    expect(refusal.message).toContain('quotas.tokens_per_user_day: 20');
    const retryAfter = Number(refusal.headers?.get('retry-after'));
    const untilMidnight = (Date.parse(nextMidnight()) - Date.now()) / 1000;
    expect(Math.abs(retryAfter - untilMidnight)).toBeLessThan(120);

    const fetchImpl: typeof fetch = (input, init) => fetch(input, { ...init, headers: { ...Object.fromEntries(new Headers(init?.headers)), ...ALICE } });
    const a2a = await new ClientFactory(
      ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
        transports: [new JsonRpcTransportFactory({ fetchImpl })],
        cardResolver: new DefaultAgentCardResolver({ fetchImpl }),
      }),
    ).createFromUrl(stack.base);
    await expect(a2a.sendMessage(a2aSend([a2aText('fifth')]))).rejects.toThrow(/quota_exceeded: .*quotas\.tokens_per_user_day: 20/);

    // Nothing was queued; each refusal is in the audit log with its reason.
    const tasks = await probe<{ n: number }>(stack.database, "SELECT COUNT(*) AS n FROM tasks WHERE owner = 'alice@example.com'");
    expect(Number(tasks[0].n)).toBe(2);
    const refused = await probe<{ action: string; detail: string }>(
      stack.database,
      "SELECT action, detail FROM audit_events WHERE actor = 'alice@example.com' AND outcome = 'rejected' ORDER BY seq",
    );
    expect(refused.map((event) => event.action)).toEqual(['tools/call agent_run', 'chat.completions', 'a2a SendMessage']);
    for (const event of refused) expect(event.detail).toContain('quotas.tokens_per_user_day');
  });

  it('lets a group’s override raise the quota for its members', async () => {
    for (const request of ['b1', 'b2', 'b3']) expect(await run(BOB, request)).toHaveProperty('taskId');
  });

  it('ends a running Task that crosses the quota like a budget: the model call finishes, the model summarises, the Task completes and says why', async () => {
    const list = { toolCalls: [{ name: 'list_dir', arguments: { path: '.' } }], promptEvalCount: 10, evalCount: 5 };
    // 15 tokens a call: the second call reaches 30, past dave's 20, before its tool runs; the third is the summary.
    stack.ollama.enqueue(list, list, { content: 'Summary: listed the workspace once; the second listing was not run.', promptEvalCount: 10, evalCount: 5 });
    const client = await stack.mcpClient(DAVE);
    const accepted = fieldsOf(textOf(await client.callTool({ name: 'agent_run', arguments: { request: 'list the workspace, again and again' } })));
    const ended = await waitForTerminal(async (id) => textOf(await client.callTool({ name: 'agent_status', arguments: { task_id: id } })), accepted.task_id);
    expect(ended.status).toBe('completed');
    expect(ended.message).toContain('daily_tokens');
    expect(ended.result).toContain('Summary: listed the workspace once');
    const steps = await probe<{ kind: string; name: string }>(
      stack.database,
      "SELECT kind, name FROM task_steps WHERE task_id = ? AND kind IN ('limit', 'tool_call') ORDER BY seq",
      accepted.task_id,
    );
    expect(steps).toEqual([
      { kind: 'tool_call', name: 'list_dir' },
      { kind: 'limit', name: 'daily_tokens' },
    ]);
    expect(await run(DAVE, 'more')).toEqual({ refused: expect.stringContaining('you have used 45 tokens today') });
  });

  it('shows admins everyone (JSON and CSV) and a user only their own', async () => {
    const all = (await (await usage(ADMIN)).json()) as { user: null; days: { user: string; total_tokens: number; tasks: number }[] };
    expect(all.user).toBeNull();
    expect(all.days.map(({ user, tasks, total_tokens }) => ({ user, tasks, total_tokens }))).toEqual([
      { user: 'alice@example.com', tasks: 2, total_tokens: 30 },
      { user: 'bob@example.com', tasks: 3, total_tokens: 45 },
      { user: 'dave@example.com', tasks: 1, total_tokens: 45 },
    ]);
    const onlyBob = (await (await usage(ADMIN, '?user=bob%40example.com')).json()) as { days: { user: string }[] };
    expect(onlyBob.days.map((day) => day.user)).toEqual(['bob@example.com']);
    const csv = await usage(ADMIN, `?from=${today()}&to=${today()}`, 'text/csv');
    expect(csv.headers.get('content-type')).toMatch(/^text\/csv/);
    expect((await csv.text()).trim().split('\n')).toEqual([
      'day,user,tasks,model_calls,tool_calls,input_tokens,output_tokens,total_tokens,wall_ms',
      expect.stringMatching(new RegExp(`^"${today()}","alice@example.com","2","2","0","20","10","30","\\d+"$`)),
      expect.stringMatching(new RegExp(`^"${today()}","bob@example.com","3","3","0","30","15","45","\\d+"$`)),
      expect.stringMatching(new RegExp(`^"${today()}","dave@example.com","1","3","1","30","15","45","\\d+"$`)),
    ]);
    // A user never reads another's usage; a bad range is refused, never a 5xx.
    expect((await usage(ALICE, '?user=bob%40example.com')).status).toBe(400);
    expect((await usage(ALICE, '?from=2026-02-30')).status).toBe(400);
    expect((await usage(ALICE, '?from=2026-12-05&to=2026-12-01')).status).toBe(400);
    expect((await usage(ALICE, '?from=2020-01-01&to=2026-12-01')).status).toBe(400);
    expect((await usage({}, '')).status).toBe(401);
  });

  it('draws a bar per day in the console’s Usage page: a user’s own tokens, an admin’s everyone’s (Chromium)', async () => {
    const browser: Browser = stack.closeOnStop(await openBrowser());
    const bars = async (headers: Record<string, string>) => {
      const context = await browser.newContext({ extraHTTPHeaders: headers });
      const page = await context.newPage();
      page.setDefaultTimeout(10_000);
      await page.goto(`${stack.base}/admin#/usage`);
      await page.waitForSelector('#usage-chart .usage-day');
      expect(await page.isHidden('#nav-usage')).toBe(false);
      const days = await page.$$eval('#usage-chart .usage-day', (elements) =>
        elements.map((element) => [(element as HTMLElement).dataset.day, Number((element as HTMLElement).dataset.tokens)]),
      );
      const rows = await page.$$eval('#usage tr', (elements) => elements.map((element) => element.textContent));
      const height = await page.$eval(`#usage-chart .usage-day[data-day="${today()}"] .usage-bar`, (element) => (element as HTMLElement).style.height);
      await context.close();
      return { days, rows, height };
    };
    const mine = await bars(ALICE);
    expect(mine.days).toHaveLength(30);
    expect(mine.days.at(-1)).toEqual([today(), 30]);
    expect(mine.days.slice(0, -1).every(([, tokens]) => tokens === 0)).toBe(true);
    expect(mine.height).toBe('100%');
    expect(mine.rows).toEqual([expect.stringContaining('alice@example.com')]);
    const everyone = await bars(ADMIN);
    expect(everyone.days.at(-1)).toEqual([today(), 120]);
    expect(everyone.rows.join('\n')).toMatch(/bob@example\.com[\s\S]*alice@example\.com|alice@example\.com[\s\S]*bob@example\.com/);
  });
});
