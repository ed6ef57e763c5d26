import { Module } from '@nestjs/common';
import { AgentModule } from '../agent/agent.module.js';
import { SessionsModule } from '../sessions/sessions.module.js';
import { WorkspaceModule } from '../workspace/workspace.module.js';
import { SessionFilesService } from './session-files.service.js';

/** The files Tasks produced in their session workspaces: listed from the trace's file changes (TraceRepository), read from the disk. */
@Module({
  imports: [AgentModule, SessionsModule, WorkspaceModule],
  providers: [SessionFilesService],
  exports: [SessionFilesService],
})
export class SessionFilesModule {}
