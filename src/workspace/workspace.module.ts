import { Module } from '@nestjs/common';
import { WorkspaceFiles } from './workspace-files.js';
import { WorkspaceService } from './workspace.service.js';

@Module({ providers: [WorkspaceFiles, WorkspaceService], exports: [WorkspaceService] })
export class WorkspaceModule {}
