import { Injectable } from '@nestjs/common';
import type { AuditDraft } from '../audit/audit.service.js';
import { ConversationService } from '../conversation/conversation.service.js';
import { InputFilesStager } from '../conversation/input-files.stager.js';
import type { Caller } from '../identity/caller.js';
import type { TaskRequestFile } from '../queue/task-request.js';
import type { UnattendedApprovals, UnattendedOwner } from './unattended.js';

/** The work one fire or delivery starts. */
export interface UnattendedWork {
  surface: 'schedule' | 'trigger';
  /** What made it (`schedule/<id>`, `trigger/<id>`): the Task's client, which every view shows. */
  origin: string;
  request: string;
  /** The session to continue, or null for a new one. */
  sessionId: string | null;
  tier: string;
  approvals: UnattendedApprovals;
  /** Files for `inputs/` of the session workspace (a trigger's event). */
  files?: TaskRequestFile[];
}

/**
 * The one place schedules and triggers start a Task for their owner: today through the accept path the
 * Chat API and A2A use (files staged into the session workspace, then one enqueue unit with the
 * accepting audit event, under the owner's queue limit). When the run core's one intake lands
 * (ADR 0020, issue 35), this file is what changes.
 */
@Injectable()
export class UnattendedIntake {
  constructor(
    private readonly conversations: ConversationService,
    private readonly stager: InputFilesStager,
  ) {}

  async start(owner: UnattendedOwner, work: UnattendedWork, accepted: AuditDraft): Promise<{ taskId: string; sessionId: string }> {
    const caller: Caller = { user: owner.user, email: owner.email, groups: owner.groups, admin: false, transport: work.surface, address: null, client: work.origin };
    const staged = await this.stager.stage(caller, {
      request: work.request,
      sessionId: work.sessionId,
      temperature: null,
      images: [],
      tier: work.tier,
      files: work.files,
      unattended: work.approvals,
    });
    const task = await this.conversations.accept(caller, staged, accepted);
    return { taskId: task.id, sessionId: task.sessionId };
  }
}
