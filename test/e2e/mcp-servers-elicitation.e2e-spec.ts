import { describe, expect, it, beforeAll } from '@jest/globals';
import { probe } from '../support/database-probe.js';
import { fieldsOf, httpRawDispatch, modernMeta, type RawDispatch, type RawResponse } from '../support/mcp-clients.js';
import { ADMIN_TOKEN, answer, calls, EVERYTHING, stdio, useMcpStack } from '../support/mcp-servers-stack.js';
import { openBrowser } from '../support/browser.js';

/**
 * A server's form put to the person (elicitation, server-everything's trigger-elicitation-request): in place for a
 * Tasks-extension client, from the console by the Task's owner, declined for a client that cannot answer. Split
 * from mcp-servers-policy.e2e-spec.ts (issue 42: no e2e file over 30 CPU s).
 */

describe('elicitation: a server asks the person a form, in place for a Tasks-extension client, declined for others', () => {
  const h = useMcpStack(() => ({
    mcp: { locale: 'en' },
    agent: { approvals: { mode: 'never', wait_ms: 60_000 }, mcp_servers: { everything: { ...stdio(EVERYTHING, ['stdio']), tools: { allow: ['trigger-elicitation-request'] } } } },
  }));
  let raw: RawDispatch;
  beforeAll(() => void (raw = httpRawDispatch(h.service.url)));
  const withTasks = (method: string, params: Record<string, unknown>): Promise<RawResponse> => raw({ method, params: { ...params, _meta: modernMeta(true) } });
  /** Submits `request` as a Tasks-extension client and waits until its Task asks for input; its one input request. */
  async function askedInPlace(request: string): Promise<{ taskId: string; key: string; method: string; params: any }> {
    const created = await withTasks('tools/call', { name: 'agent_run', arguments: { request } });
    const taskId = (created as { result: { taskId: string } }).result.taskId;
    for (const deadline = Date.now() + 20_000; Date.now() < deadline; await new Promise((done) => setTimeout(done, 50))) {
      const got = await withTasks('tasks/get', { taskId });
      if (got.kind !== 'result' || got.result.status !== 'input_required') continue;
      const [[key, input]] = Object.entries(got.result.inputRequests as Record<string, { method: string; params: any }>);
      return { taskId, key, ...input };
    }
    throw new Error('the Task never asked for input');
  }
  const rows = (taskId: string) =>
    probe<{ tool: string; state: string; reason: string | null; answered_via: string | null }>(h.db, 'SELECT * FROM approvals WHERE task_id = ?', taskId);

  it("puts server-everything's form to the person, who answers in place; the server gets the answer", async () => {
    h.ollama.enqueue(calls(['everything__trigger-elicitation-request', {}]), answer('thanks'));
    const { taskId, key, method, params } = await askedInPlace('Ask me for my details.');
    expect(method).toBe('elicitation/create');
    expect(params.message).toBe(
      'The MCP server "everything" asks you this while the agent calls its tool trigger-elicitation-request. Your answer goes to that server; decline if you did not expect it.\n\nPlease provide inputs for the following fields:',
    );
    // Every kind of field the server asks for, in one shape: free text, yes/no, numbers, choices.
    expect(params.requestedSchema.required).toEqual(['name']);
    expect(params.requestedSchema.properties).toMatchObject({
      name: { type: 'string', title: 'String', description: 'Your full, legal name', maxLength: 2000 },
      check: { type: 'boolean' },
      email: { type: 'string', format: 'email' },
      integer: { type: 'integer', minimum: 1, maximum: 100, default: 42 },
      legacyTitledEnum: { type: 'string', oneOf: expect.arrayContaining([{ const: 'pet-1', title: 'Cats' }]) },
      titledMultipleSelectEnum: { type: 'array', items: { anyOf: expect.arrayContaining([{ const: 'fish-1', title: 'Tuna' }]) }, maxItems: 3 },
    });
    expect(fieldsOf(await h.statusText(taskId)).current_task).toBe('question from MCP server everything: Please provide inputs for the following fields:');
    // Not what the form takes (out of range): ignored, as the extension requires for a malformed answer.
    await withTasks('tasks/update', { taskId, inputResponses: { [key]: { action: 'accept', content: { name: 'Alice', integer: 500 } } } });
    expect((await rows(taskId))[0].state).toBe('pending');
    await withTasks('tasks/update', { taskId, inputResponses: { [key]: { action: 'accept', content: { name: 'Alice', check: true, integer: 7 } } } });
    expect(fieldsOf(await h.finished(taskId))).toMatchObject({ status: 'completed', result: 'thanks' });
    const result = h.toolResults()[0].content;
    expect(result).toContain('User provided the requested information!');
    expect(result).toContain('- Name: Alice');
    expect(result).toContain('- Favorite Integer: 7');
    expect(await rows(taskId)).toMatchObject([{ tool: 'mcp_elicitation', state: 'granted', answered_via: 'in_place', reason: '{"name":"Alice","check":true,"integer":7}' }]);
    const [asked] = await h.audit(taskId, 'elicitation.asked');
    expect(JSON.parse(asked.detail)).toMatchObject({
      server: 'everything',
      mcp_tool: 'trigger-elicitation-request',
      message: 'Please provide inputs for the following fields:',
      in_place: true,
    });
    const [answered] = await h.audit(taskId, 'elicitation.answered');
    expect(JSON.parse(answered.detail)).toMatchObject({ via: 'in_place', reason: '{"name":"Alice","check":true,"integer":7}' });
  });

  it('lets its owner fill the form from the console: checked as tasks/update checks it; approve says where a form is filled', async () => {
    h.ollama.enqueue(calls(['everything__trigger-elicitation-request', {}]), answer('filled in the console'));
    const { taskId, key, params } = await askedInPlace('Ask me in the console.');
    const post = async (path: string) => {
      const response = await fetch(`${h.stack.base}/admin/approvals/${key}/${path}`, { method: 'POST', headers: { Authorization: `Bearer ${ADMIN_TOKEN}` } });
      return { status: response.status, body: (await response.json()) as { message?: string; state?: string; via?: string } };
    };
    // The console draws the form from the schema its Task page carries: the one tasks/get shows.
    const [pending] = (await h.admin(`/admin/tasks/${taskId}`)).pending_approvals;
    expect(pending).toMatchObject({ approval_id: key, tool: 'mcp_elicitation', server: 'everything', form_schema: params.requestedSchema });

    const approve = await post('approve');
    expect(approve.status).toBe(400);
    expect(approve.body.message).toContain(`is a form of the MCP server "everything": it is not approved but filled, with POST /admin/approvals/${key}/form?content=`);
    const form = (content: string) => post(`form?content=${encodeURIComponent(content)}`);
    expect(await post('form')).toMatchObject({ status: 400, body: { message: 'content: required (the form’s content as a JSON object)' } });
    expect(await form('{"name":')).toMatchObject({ status: 400, body: { message: 'content: not JSON (the form’s content as a JSON object)' } });
    expect(await form('{"name":"Bob","integer":500}')).toMatchObject({ status: 400, body: { message: 'content: field "integer" takes an integer from 1 to 100' } });
    expect(await form('{"check":true}')).toMatchObject({ status: 400, body: { message: 'content: required field missing: name' } });
    expect((await rows(taskId))[0].state).toBe('pending');

    // Filled on the Task page: one input per field (defaults as the server gave them), sent to its server.
    const browser = await openBrowser();
    try {
      const page = await browser.newPage({ viewport: { width: 1300, height: 900 } });
      page.setDefaultTimeout(10_000);
      await page.goto(`${h.stack.base}/admin#/tasks/${taskId}`);
      await page.fill('#token', ADMIN_TOKEN);
      await page.press('#token', 'Enter');
      await page.waitForSelector('form.mcp-form');
      expect(await page.$$eval('form.mcp-form label[data-field]', (labels) => labels.map((label) => (label as HTMLElement).dataset.field))).toEqual(
        Object.keys(params.requestedSchema.properties),
      );
      expect(await page.inputValue('label[data-field="integer"] input')).toBe('42');
      await page.fill('label[data-field="name"] input', 'Bob');
      await page.fill('label[data-field="integer"] input', '9');
      await page.click('form.mcp-form button.send-form');
      expect(fieldsOf(await h.finished(taskId))).toMatchObject({ status: 'completed', result: 'filled in the console' });
    } finally {
      await browser.close();
    }
    expect(h.toolResults()[0].content).toContain('- Name: Bob');
    expect(h.toolResults()[0].content).toContain('- Favorite Integer: 9');
    const [answered] = await rows(taskId);
    expect(answered).toMatchObject({ state: 'granted', answered_via: 'in_place' });
    expect(JSON.parse(answered.reason!)).toMatchObject({ name: 'Bob', integer: 9 });
    expect(await h.audit(taskId, 'elicitation.answered')).toHaveLength(1);
    // Answered once: a second answer is refused as decided (issue 36), and changes nothing.
    expect((await form('{"name":"Eve"}')).status).toBe(409);
  });

  it('tells the server decline when the person declines in place', async () => {
    h.ollama.enqueue(calls(['everything__trigger-elicitation-request', {}]), answer('they said no'));
    const { taskId, key } = await askedInPlace('Ask me again.');
    await withTasks('tasks/update', { taskId, inputResponses: { [key]: { action: 'decline' } } });
    expect(fieldsOf(await h.finished(taskId))).toMatchObject({ status: 'completed', result: 'they said no' });
    expect(h.toolResults()[0].content).toContain('User declined to provide the requested information.');
    expect(await rows(taskId)).toMatchObject([{ state: 'denied', reason: 'decline', answered_via: 'in_place' }]);
    expect(await h.audit(taskId, 'elicitation.declined')).toHaveLength(1);
  });

  it('tells the server decline for a client without the Tasks extension, and audits it', async () => {
    h.ollama.enqueue(calls(['everything__trigger-elicitation-request', {}]), answer('declined'));
    const { taskId, text } = await h.run('Ask me plainly.');
    expect(fieldsOf(text).status).toBe('completed');
    expect(h.toolResults()[0].content).toContain('User declined to provide the requested information.');
    const [declined] = await h.audit(taskId, 'elicitation.declined');
    expect(JSON.parse(declined.detail)).toMatchObject({ server: 'everything', mcp_tool: 'trigger-elicitation-request', in_place: false });
    expect(await rows(taskId)).toEqual([]);
  });
});
