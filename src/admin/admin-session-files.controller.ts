import { Get, Header, Param, Query, Req, StreamableFile } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiProduces } from '@nestjs/swagger';
import { AgentError } from '../common/agent-error.js';
import type { Caller } from '../identity/caller.js';
import { SessionFilesService } from '../session-files/session-files.service.js';
import { SessionsService } from '../sessions/sessions.service.js';
import { AdminAction, OwnView, type AdminRequest } from './admin-auth.guard.js';
import { SessionFileParamDto, SessionFilesQueryDto, UuidParamDto } from './admin.dto.js';
import { SessionFilePageDto } from './admin-responses.dto.js';
import { AdminRoutes, ApiAdminErrors, INVALID } from './admin-routes.decorator.js';
import { mapSessionFilePage } from './admin-views.js';

/** The files of a session's workspace that its Tasks created or changed: listed and downloaded (a user: their own sessions). */
@AdminRoutes('admin/sessions', 'sessions')
export class AdminSessionFilesController {
  constructor(
    private readonly files: SessionFilesService,
    private readonly sessions: SessionsService,
  ) {}

  @Get(':id/files')
  @OwnView()
  @AdminAction('admin.session_files')
  @ApiOperation({ summary: "A session's files that its Tasks created or changed, newest change first (100 per page)" })
  @ApiOkResponse({ type: SessionFilePageDto })
  @ApiAdminErrors(INVALID, [404, 'No such session (or another user’s)'])
  async list(@Param() { id }: UuidParamDto, @Query() query: SessionFilesQueryDto, @Req() req: AdminRequest): Promise<SessionFilePageDto> {
    await this.visible(req.caller!, id);
    return mapSessionFilePage(await this.files.listSession(id, query.cursor));
  }

  @Get(':id/files/*path')
  @OwnView()
  @AdminAction('admin.session_file_download')
  @ApiOperation({ summary: 'Download one file of a session workspace (at most mcp.resources.max_read_bytes)' })
  @ApiProduces('application/octet-stream')
  @ApiOkResponse({ schema: { type: 'string', format: 'binary' }, description: 'The file, as an attachment (its type guessed from its name)' })
  @ApiAdminErrors(
    INVALID,
    [404, 'No such session or file (or another user’s)'],
    [410, 'The session’s files expired (workspace.retention_days)'],
    [413, 'Larger than mcp.resources.max_read_bytes'],
  )
  // The type is guessed from the name of a file a command wrote: no browser may guess another (HTML).
  @Header('X-Content-Type-Options', 'nosniff')
  async download(@Param() { id, path }: SessionFileParamDto, @Req() req: AdminRequest) {
    await this.visible(req.caller!, id);
    const file = await this.files.readAny(id, path.join('/'));
    return new StreamableFile(file.bytes, { type: file.mimeType, length: file.size, disposition: `attachment; filename*=UTF-8''${encodeURIComponent(path.at(-1) ?? 'file')}` });
  }

  /** Another user's session answers as a missing one. */
  private async visible(caller: Caller, id: string): Promise<void> {
    if (caller.admin || (await this.sessions.findOwned(id, caller.user))) return;
    throw new AgentError('session_not_found', `session ${id} does not exist`);
  }
}
