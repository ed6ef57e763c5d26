import { Injectable } from '@nestjs/common';
import { mapApproval } from '../approvals/approval-view.js';
import { ApprovalsService } from '../approvals/approvals.service.js';
import { SessionsService } from '../sessions/sessions.service.js';

/** The admin API's views of pending approvals. */
@Injectable()
export class AdminApprovalsService {
  constructor(
    private readonly approvals: ApprovalsService,
    private readonly sessions: SessionsService,
  ) {}

  async listPending(limit: number) {
    return { items: (await this.approvals.listPending(limit)).map(mapApproval) };
  }

  /** A session's pending action (`pending: null` when nothing waits); null when there is no such session. */
  async ofSession(id: string) {
    if (!(await this.sessions.find(id))) return null;
    const pending = await this.approvals.pendingOfSession(id);
    return { session_id: id, pending: pending ? mapApproval(pending) : null };
  }
}
