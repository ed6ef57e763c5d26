import { Injectable } from '@nestjs/common';
import { SKILLS_EXTENSION_ID, SKILLS_GET_METHOD, SKILLS_LIST_METHOD } from '@modelcontextprotocol/server/ext/skills';
import { nodeSkillFiles } from '@modelcontextprotocol/server/ext/skills/node';
import { ProtocolError, ProtocolErrorCode, type McpServer, type ReadResourceResult, type ServerContext } from '@modelcontextprotocol/server';
import { z } from 'zod';
import { AuditService } from '../audit/audit.service.js';
import { AgentError } from '../common/agent-error.js';
import { AppConfig } from '../config/app-config.js';
import type { Caller } from '../identity/caller.js';
import { pathOfUri } from '../skills/operator-skills.js';
import { SkillsService } from '../skills/skills.service.js';

const LIST_PARAMS = z.looseObject({ cursor: z.string().optional() });
const GET_PARAMS = z.looseObject({ uri: z.string() });
const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * The operator's skills (`skills.dirs`) served to this service's own MCP clients through the skills
 * extension (SEP-2640, `io.modelcontextprotocol/skills`): `skills/list`, `skills/get`, and each file as
 * a `skill://` resource read with `resources/read` (McpResources hands those URIs here). Each caller
 * sees the skills its groups allow, as the agent does; any other URI reads as not found. The entries
 * are the SDK catalog's (digests and sizes included), so a client verifies what it reads. Hand-wired
 * rather than the SDK's `SkillsExtension.attach`, which registers its own `resources/*` handlers and
 * so cannot sit beside the session files' (McpResources).
 */
@Injectable()
export class McpSkills {
  constructor(
    private readonly skills: SkillsService,
    private readonly config: AppConfig,
    private readonly audit: AuditService,
  ) {}

  /** Served only where the operator configured skill folders: otherwise the capabilities stay as they were. */
  get serving(): boolean {
    return this.config.skills.dirs.length > 0;
  }

  register(server: McpServer, callerOf: (ctx: ServerContext) => Caller): void {
    if (!this.serving) return;
    const low = server.server;
    low.registerCapabilities({ extensions: { [SKILLS_EXTENSION_ID]: {} } });
    // One page: the catalog is the operator's folders, bounded by their size; no cursor is ever issued.
    low.setRequestHandler(SKILLS_LIST_METHOD, { params: LIST_PARAMS }, async (_params, ctx) => {
      const caller = callerOf(ctx);
      const skills = this.skills.operatorSkills(caller).map((skill) => skill.entry);
      await this.audit.record({ caller, action: SKILLS_LIST_METHOD, outcome: 'ok', detail: { count: skills.length } });
      return { skills, ttlMs: 0, cacheScope: 'private' as const };
    });
    low.setRequestHandler(SKILLS_GET_METHOD, { params: GET_PARAMS }, async (params, ctx) => {
      const caller = callerOf(ctx);
      const skill = this.skills.operatorSkills(caller).find((candidate) => candidate.entry.uri === params.uri);
      // A skill of a group the caller is not in reads exactly like one that does not exist.
      await this.audit.record({
        caller,
        action: SKILLS_GET_METHOD,
        outcome: skill ? 'ok' : 'rejected',
        detail: { uri: params.uri, ...(skill ? {} : { reason: 'resource_not_found' }) },
      });
      if (!skill) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `No skill is served at ${params.uri}`);
      return { skill: skill.entry, ttlMs: 0, cacheScope: 'private' as const };
    });
  }

  /** Whether `uri` is one of the skills' (the rest of `resources/read` is the session files'). */
  owns(uri: string): boolean {
    return this.serving && uri.startsWith('skill://');
  }

  /** One file of a skill the caller may see, as it is on disk now; any other URI is not found. */
  async read(caller: Caller, uri: string): Promise<{ result: ReadResourceResult; detail: Record<string, unknown> }> {
    for (const skill of this.skills.operatorSkills(caller)) {
      const resource = skill.entry.resources === 'dynamic' ? undefined : skill.entry.resources.find((candidate) => candidate.uri === uri);
      if (!resource) continue;
      const bytes = Buffer.from(await nodeSkillFiles(skill.root).read(pathOfUri(uri)));
      let text: string | null = null;
      try {
        text = utf8.decode(bytes);
      } catch {
        // not UTF-8: sent as a blob
      }
      const contents =
        text === null
          ? { uri, mimeType: 'application/octet-stream', blob: bytes.toString('base64') }
          : { uri, mimeType: uri.endsWith('.md') ? 'text/markdown' : 'text/plain', text };
      return { result: { contents: [contents] }, detail: { skill: skill.name, size: bytes.byteLength, digest: resource.digest } };
    }
    throw new AgentError('resource_not_found', `No skill file is served at ${uri}`);
  }
}
