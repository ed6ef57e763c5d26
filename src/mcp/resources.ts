import { Injectable, Logger } from '@nestjs/common';
import { ProtocolError, ProtocolErrorCode, ResourceNotFoundError, type McpServer, type ReadResourceResult, type ServerContext } from '@modelcontextprotocol/server';
import { AuditService, type AuditRecord } from '../audit/audit.service.js';
import { z } from 'zod';
import { AgentError, isAgentError, type AgentErrorCode } from '../common/agent-error.js';
import type { Caller } from '../identity/caller.js';
import { SessionFilesService, type SessionFileContent } from '../session-files/session-files.service.js';
import { SESSION_FILE_URI_TEMPLATE } from '../workspace/session-file-uri.js';
import { HistoryService } from '../history/history.service.js';
import { parseTaskDiffUri, TASK_DIFF_URI_TEMPLATE } from '../history/history-uri.js';
import { McpSkills } from './mcp-skills.js';

/** How each domain error code reads as a JSON-RPC error of resources/*; exhaustive by construction. */
const RPC_ERROR: Record<AgentErrorCode, (message: string, uri: unknown) => ProtocolError> = {
  // The 2026-07-28 "resource not found" (-32602, data exactly { uri }), on every era, as the SDK does.
  resource_not_found: (_message, uri) => new ResourceNotFoundError(String(uri)),
  resource_too_large: (message, uri) => new ProtocolError(ProtocolErrorCode.InvalidParams, message, { uri, reason: 'too_large' }),
  files_expired: (message, uri) => new ProtocolError(ProtocolErrorCode.InvalidParams, message, { uri, reason: 'expired' }),
  invalid_input: (message) => new ProtocolError(ProtocolErrorCode.InvalidParams, message),
  session_not_found: (_message, uri) => new ResourceNotFoundError(String(uri)),
  shutting_down: (message) => new ProtocolError(ProtocolErrorCode.InternalError, message),
  // Resources queue nothing; listed for exhaustiveness.
  queue_full: (message) => new ProtocolError(ProtocolErrorCode.InternalError, message),
  quota_exceeded: (message) => new ProtocolError(ProtocolErrorCode.InternalError, message),
  internal: () => new ProtocolError(ProtocolErrorCode.InternalError, 'the request could not be completed; see the service log'),
};

const utf8 = new TextDecoder('utf-8', { fatal: true });

const ANY_PARAMS = z.looseObject({});

/** A wrong `uri` as the audit and the error name it: its JSON type, never its content. */
const describeBadUri = (uri: unknown) =>
  uri === null ? 'null' : Array.isArray(uri) ? 'an array' : uri === undefined ? 'nothing' : typeof uri === 'object' ? 'an object' : `a ${typeof uri}`;

/**
 * Session files as MCP resources: resources/list (the caller's deliverables, newest first, paged),
 * resources/templates/list (the URI template) and resources/read (text or Base64). Every request is
 * audited, a read with the URI, size and SHA-256 of what was sent, never the content.
 */
@Injectable()
export class McpResources {
  private readonly logger = new Logger(McpResources.name);

  constructor(
    private readonly files: SessionFilesService,
    private readonly audit: AuditService,
    private readonly history: HistoryService,
    private readonly skills: McpSkills,
  ) {}

  register(server: McpServer, callerOf: (ctx: ServerContext) => Caller): void {
    // No list_changed or subscribe notifications are ever sent: promise neither.
    server.server.registerCapabilities({ resources: { listChanged: false, subscribe: false } });
    const low = server.server;
    low.setRequestHandler('resources/templates/list', (_request, ctx) =>
      this.handle('resources/templates/list', callerOf(ctx), {}, async () => ({
        result: {
          resourceTemplates: [
            {
              uriTemplate: SESSION_FILE_URI_TEMPLATE,
              name: 'session-file',
              title: 'A file of an agent session',
              description: 'A file in the workspace of one of your agent sessions (a Task deliverable).',
            },
            // Workspace history (issue 24): what one Task changed, as a unified diff.
            {
              uriTemplate: TASK_DIFF_URI_TEMPLATE,
              name: 'task-diff',
              title: 'What a Task changed',
              description: 'The unified diff of the workspace changes one Task of your sessions made.',
              mimeType: 'text/x-diff',
            },
          ],
        },
      })),
    );
    low.setRequestHandler('resources/list', (request, ctx) => {
      const cursor = request.params?.cursor;
      return this.handle('resources/list', callerOf(ctx), { cursor: cursor ?? null }, async (caller) => {
        const page = await this.files.listOwned(caller.user, cursor);
        return {
          result: {
            // Three sessions' calc.js would look alike by name: the title and description say whose session.
            resources: page.files.map(({ uri, name, mimeType, size, sessionId, path }) => ({
              uri,
              name,
              title: `${name} (session ${sessionId.slice(0, 8)})`,
              description: `${path} in the workspace of session ${sessionId}`,
              mimeType,
              size,
            })),
            ...(page.nextCursor ? { nextCursor: page.nextCursor } : {}),
          },
          detail: { count: page.files.length },
        };
      });
    });
    // Its own params schema, which takes anything: the SDK's would answer a `uri` that is no string
    // with -32603 and a zod issue dump; checked here, it is a short -32602, audited like any refusal.
    low.setRequestHandler('resources/read', { params: ANY_PARAMS }, (params, ctx) => {
      const uri: unknown = params.uri;
      return this.handle('resources/read', callerOf(ctx), { uri: typeof uri === 'string' ? uri : describeBadUri(uri) }, async (caller) => {
        if (typeof uri !== 'string') throw new AgentError('invalid_input', `uri: must be a string (got ${describeBadUri(uri)})`);
        if (this.skills.owns(uri)) return this.skills.read(caller, uri);
        const diff = parseTaskDiffUri(uri);
        if (diff) {
          const text = await this.history.diffOwned(caller.user, diff.sessionId, diff.taskId);
          const bytes = Buffer.byteLength(text);
          // eslint-disable-next-line @typescript-eslint/no-unnecessary-type-assertion -- it widens the literal to the union the callback returns (tsc needs it)
          return { result: { contents: [{ uri, mimeType: 'text/x-diff', text }] } as ReadResourceResult, sessionId: diff.sessionId, detail: { size: bytes } };
        }
        const file = await this.files.readOwned(caller.user, uri);
        return { result: readResult(file), sessionId: file.sessionId, detail: { size: file.size, sha256: file.sha256 } };
      });
    });
  }

  private async handle<R>(
    method: string,
    caller: Caller,
    request: Record<string, unknown>,
    act: (caller: Caller) => Promise<{ result: R; sessionId?: string; detail?: Record<string, unknown> }>,
  ): Promise<R> {
    const record = (outcome: AuditRecord['outcome'], extra: Partial<AuditRecord> & { detail?: Record<string, unknown> }) =>
      this.audit.record({ caller, action: method, outcome, ...extra, detail: { ...request, ...extra.detail } });
    let reply: Awaited<ReturnType<typeof act>>;
    try {
      reply = await act(caller);
    } catch (error) {
      const known = isAgentError(error);
      if (!known) this.logger.error(`${method} failed: ${(error as Error).stack ?? String(error)}`);
      await record(known && error.code !== 'internal' ? 'rejected' : 'error', { detail: { reason: known ? error.code : String((error as Error).message ?? error) } });
      throw RPC_ERROR[known ? error.code : 'internal'](known ? error.message : '', request.uri);
    }
    await record('ok', { sessionId: reply.sessionId ?? null, detail: reply.detail });
    return reply.result;
  }
}

/** UTF-8 text (without NUL) as `text`, anything else as Base64 `blob`. */
function readResult(file: SessionFileContent): ReadResourceResult {
  const base = { uri: file.uri, mimeType: file.mimeType };
  let text: string | null = null;
  try {
    text = utf8.decode(file.bytes);
  } catch {
    // not UTF-8
  }
  const contents = text !== null && !text.includes('\0') ? { ...base, text } : { ...base, blob: file.bytes.toString('base64') };
  return { contents: [contents] };
}
