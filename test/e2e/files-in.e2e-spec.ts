import { beforeAll, describe, expect, it } from '@jest/globals';
import { TaskState, type Part, type Task } from '@a2a-js/sdk';
import { ClientFactory, type Client } from '@a2a-js/sdk/client';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { a2aSend, a2aText } from '../support/a2a-clients.js';
import { useStack } from '../support/e2e-stack.js';

// A real (minimal) PDF and a ZIP local header: formats file-type recognises from their bytes.
const PDF = Buffer.from('%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n');
const ZIP = Buffer.concat([Buffer.from([0x50, 0x4b, 0x03, 0x04, 0x14, 0, 0, 0, 0, 0]), Buffer.alloc(40)]);
const dataUrl = (type: string, bytes: Buffer) => `data:${type};base64,${bytes.toString('base64')}`;
const filePart = (filename: string, type: string, bytes: Buffer) => ({ type: 'file', file: { filename, file_data: dataUrl(type, bytes) } });
const a2aFile = (filename: string, mediaType: string, bytes: Buffer): Part => ({ content: { $case: 'raw', value: bytes }, mediaType, filename, metadata: {} });

/** Files in: Chat API `file` parts and A2A file parts with bytes land in inputs/ of the session workspace, named to the model. */
describe('files brought along with a request (Chat API and A2A)', () => {
  const stack = useStack({ config: { queue: { progress_poll_ms: 20 }, mcp: { files: { max_count: 3, max_bytes: 4096 } }, workspace: { max_session_bytes: 8192 } } });
  const { ollama } = stack;
  let base: string;
  let workspace: string;
  let a2a: Client;

  const chat = (content: unknown[], extra: Record<string, unknown> = {}) =>
    fetch(`${base}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ model: 'ollama-agent', messages: [{ role: 'user', content }], ...extra }),
    });
  const inputsOf = (sessionId: string) => join(workspace, 'sessions', sessionId, 'inputs');

  beforeAll(async () => {
    base = stack.base;
    workspace = stack.config.workspace;
    a2a = await new ClientFactory().createFromUrl(base);
  });

  it('writes Chat API files to inputs/<safe name>, checks their type by content and names them to the model', async () => {
    ollama.enqueue({ content: 'read them' });
    const res = await chat([
      { type: 'text', text: 'Summarise the attached files' },
      filePart('../../etc/report.pdf', 'application/pdf', PDF),
      filePart('data.csv', 'text/csv', Buffer.from('a,b\n1,2\n')),
      filePart('data.csv', 'application/octet-stream', Buffer.from('x,y\n')),
    ]);
    expect(res.status).toBe(200);
    const body = (await res.json()) as { session_id?: string; agent?: { session_id: string } } & Record<string, any>;
    const sessionId = body.agent?.session_id ?? body.session_id;
    const dir = inputsOf(sessionId!);
    expect(readdirSync(dir).sort()).toEqual(['data-2.csv', 'data.csv', 'report.pdf']);
    expect(readFileSync(join(dir, 'report.pdf')).equals(PDF)).toBe(true);
    const prompt = ollama.workChats.at(-1)!.body.messages.at(-1)!.content;
    expect(prompt).toContain('Summarise the attached files');
    expect(prompt).toContain(`- inputs/report.pdf (${PDF.length} bytes, application/pdf)`);
    expect(prompt).toContain('- inputs/data.csv (8 bytes, text/csv)');
    expect(prompt).toContain('- inputs/data-2.csv (4 bytes, text/plain)');

    // The same names again in the same session (issue 37): kept beside the earlier files, never over them.
    ollama.enqueue({ content: 'read the new ones' });
    const again = await chat([{ type: 'text', text: 'Here is a newer one' }, filePart('data.csv', 'text/csv', Buffer.from('new\n'))], { session_id: sessionId });
    expect(again.status).toBe(200);
    expect(readdirSync(dir).sort()).toEqual(['data-2.csv', 'data-3.csv', 'data.csv', 'report.pdf']);
    expect(readFileSync(join(dir, 'data.csv'), 'utf8')).toBe('a,b\n1,2\n');
    expect(readFileSync(join(dir, 'data-3.csv'), 'utf8')).toBe('new\n');
    expect(ollama.workChats.at(-1)!.body.messages.at(-1)!.content).toContain('- inputs/data-3.csv (4 bytes, text/csv)');
  });

  it('refuses bad files with 400 in OpenAI error shape, writing nothing', async () => {
    const before = readdirSync(join(workspace, 'sessions')).length;
    const cases: [unknown[], RegExp, string][] = [
      [[filePart('x.png', 'image/png', Buffer.from('plain text, not a PNG'))], /declared as image\/png, but its content is plain text/, 'messages[0].content[1].file.file_data'],
      [[filePart('x.txt', 'text/plain', PDF)], /declared as text\/plain, but its content is application\/pdf/, ''],
      [[filePart('x.bin', '', Buffer.from([0x01, 0x02, 0x00, 0x80, 0x81, 0x00, 0x13, 0x07]))], /neither UTF-8 text nor a recognised file format/, ''],
      [[1, 2, 3, 4].map((n) => filePart(`${n}.txt`, 'text/plain', Buffer.from('x'))), /at most 3 files .*mcp\.files\.max_count/, ''],
      [[filePart('big.txt', 'text/plain', Buffer.alloc(5000, 'a'))], /more than mcp\.files\.max_bytes \(4096\)/, ''],
      [[{ type: 'file', file: { file_id: 'file-abc' } }], /keeps no uploaded files/, 'messages[0].content[1].file.file_id'],
      [[{ type: 'file', file: { filename: 'a.txt', file_data: 'data:text/plain;base64,@@@=' } }], /valid, padded Base64/, ''],
    ];
    for (const [content, message, param] of cases) {
      const res = await chat([{ type: 'text', text: 'look' }, ...content]);
      expect(res.status).toBe(400);
      const { error } = (await res.json()) as { error: { message: string; type: string; param: string | null } };
      expect(error.type).toBe('invalid_request_error');
      expect(error.message).toMatch(message);
      if (param) expect(error.param).toBe(param);
    }
    expect(readdirSync(join(workspace, 'sessions')).length).toBe(before);
  });

  it('counts files in the session quota (workspace.max_session_bytes)', async () => {
    ollama.enqueue({ content: 'one' });
    const first = (await (await chat([{ type: 'text', text: 'keep this' }, filePart('a.txt', 'text/plain', Buffer.alloc(4000, 'a'))])).json()) as Record<string, any>;
    const sessionId = first.agent?.session_id ?? first.session_id;
    const more = async () => chat([{ type: 'text', text: 'and this' }, filePart('b.txt', 'text/plain', Buffer.alloc(4000, 'b'))], { session_id: sessionId });
    ollama.enqueue({ content: 'two' });
    expect((await more()).status).toBe(200);
    const third = await more();
    expect(third.status).toBe(400);
    expect(((await third.json()) as { error: { message: string } }).error.message).toMatch(/quota of 8192 bytes/);
  });

  it('takes A2A file parts with bytes (non-image too) into inputs/, and refuses a bad one as a JSON-RPC error', async () => {
    ollama.enqueue({ content: 'unzipped' });
    const task = (await a2a.sendMessage(a2aSend([a2aText('What is in the archive?'), a2aFile('bundle.zip', 'application/zip', ZIP)]))) as Task;
    expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(existsSync(join(inputsOf(task.contextId), 'bundle.zip'))).toBe(true);
    expect(ollama.workChats.at(-1)!.body.messages.at(-1)!.content).toContain('- inputs/bundle.zip (50 bytes, application/zip)');
    await expect(a2a.sendMessage(a2aSend([a2aText('x'), a2aFile('notes.pdf', 'application/pdf', Buffer.from('just text'))]))).rejects.toThrow(
      /message\.parts\[1\]: declared as application\/pdf, but its content is plain text/,
    );
  });
});
