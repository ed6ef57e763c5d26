import { Module } from '@nestjs/common';
import { SessionsModule } from '../sessions/sessions.module.js';
import { WorkspaceModule } from '../workspace/workspace.module.js';
import { SessionFilesRepository } from './session-files.repository.js';
import { SessionFilesService } from './session-files.service.js';

/** The files Tasks produced in their session workspaces: listed from the table of file changes, read from the disk. */
@Module({
  imports: [SessionsModule, WorkspaceModule],
  providers: [SessionFilesRepository, SessionFilesService],
  exports: [SessionFilesService],
})
export class SessionFilesModule {}
