import { Get, NotFoundException, Param, Query } from '@nestjs/common';
import { ApiOperation } from '@nestjs/swagger';
import { mapApproval } from '../approvals/approval-view.js';
import { ApprovalsService } from '../approvals/approvals.service.js';
import { SessionsService } from '../sessions/sessions.service.js';
import { AdminAction } from './admin-auth.guard.js';
import { ApprovalListQueryDto, UuidParamDto } from './admin.dto.js';
import { AdminRoutes } from './admin-routes.decorator.js';

@AdminRoutes('admin', 'approvals')
export class AdminApprovalsController {
  constructor(
    private readonly approvals: ApprovalsService,
    private readonly sessions: SessionsService,
  ) {}

  @Get('approvals')
  @AdminAction('admin.approval_list')
  @ApiOperation({ summary: 'Pending approvals, oldest first: Tasks waiting in place (waiting_in_place) and actions waiting for the conversation' })
  async list(@Query() query: ApprovalListQueryDto) {
    return { items: (await this.approvals.listPending(query.limit ?? 100)).map(mapApproval) };
  }

  @Get('sessions/:id/approval')
  @AdminAction('admin.session_approval_read')
  @ApiOperation({ summary: "A session's pending action (null when nothing waits for approval)" })
  async ofSession(@Param() { id }: UuidParamDto) {
    if (!(await this.sessions.find(id))) throw new NotFoundException(`no session ${id}`);
    const pending = await this.approvals.pendingOfSession(id);
    return { session_id: id, pending: pending ? mapApproval(pending) : null };
  }
}
