import { Injectable } from '@nestjs/common';
import type { AuditDraft } from '../audit/audit.service.js';
import type { SqlStep } from '../database/plain-sql.js';
import { ConversationIntake } from '../conversation/conversation-intake.js';
import { InputFilesStager } from '../conversation/input-files.stager.js';
import type { Caller } from '../identity/caller.js';
import { TaskQueueService } from '../queue/task-queue.service.js';
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
  /** The new session's id, chosen before when the claim keeps it as the source's continuing session. */
  newSessionId?: string;
  tier: string;
  approvals: UnattendedApprovals;
  /** Files for `inputs/` of the session workspace (a trigger's event). */
  files?: TaskRequestFile[];
  /**
   * When the schedule or trigger was made: the owner runs with the groups of their latest Task sent in
   * person since then, if any (TaskQueueService.presentedSince, ADR 0039); null for a schedule the configuration declares with its groups.
   */
  madeAt: string | null;
  /** The Task's id, chosen before it is made, as its run row names it. */
  taskId: string;
  /** The run row that takes the fire or delivery, committed in the Task's unit (ADR 0039); ClaimTaken when another process took it. */
  claim: SqlStep[];
}

/**
 * The one place schedules and triggers start a Task for their owner: through the one intake every surface
 * calls (ADR 0020: files staged into the session workspace, then one enqueue unit with the accepting audit
 * event, under the owner's queue limit), as a new request of the conversation, never a correction. The
 * fire's or delivery's run row is in that unit: a process that stops before it commits has taken nothing.
 */
@Injectable()
export class UnattendedIntake {
  constructor(
    private readonly intake: ConversationIntake,
    private readonly stager: InputFilesStager,
    private readonly queue: TaskQueueService,
  ) {}

  async start(stored: UnattendedOwner, work: UnattendedWork, accepted: AuditDraft): Promise<void> {
    const owner = work.madeAt === null ? stored : await this.currentOwner(stored, work.madeAt);
    const caller: Caller = { user: owner.user, email: owner.email, groups: owner.groups, admin: false, transport: work.surface, address: null, client: work.origin };
    const staged = await this.stager.stage(caller, {
      request: work.request,
      sessionId: work.sessionId,
      newSessionId: work.newSessionId,
      temperature: null,
      images: [],
      tier: work.tier,
      files: work.files,
      unattended: work.approvals,
      taskId: work.taskId,
      claim: work.claim,
    });
    const outcome = await this.intake.submit(caller, { request: staged, surface: work.surface }, accepted);
    // Without `steer` the intake always queues (ADR 0020's order); anything else would be a broken contract.
    if (outcome.kind !== 'queued') throw new Error(`the intake answered ${outcome.kind} to a new request`);
  }

  /**
   * Who a schedule or trigger made at `madeAt` runs as now (ADR 0039): the service learns a user's groups
   * only from the requests they make (the proxy's header, the token's claim), so the owner runs with the
   * groups they presented most recently in person since then, else with those they had when they made it.
   * A group the identity provider took away is gone from the next fire after the owner's next request.
   */
  private async currentOwner(stored: UnattendedOwner, madeAt: string): Promise<UnattendedOwner> {
    const latest = await this.queue.presentedSince(stored.user, madeAt);
    return latest ? { user: stored.user, groups: latest.groups, email: latest.email ?? stored.email } : stored;
  }
}
