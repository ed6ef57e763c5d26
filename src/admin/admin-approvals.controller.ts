import { Get, Param, Query } from '@nestjs/common';
import { ApiOperation } from '@nestjs/swagger';
import { AdminAction } from './admin-auth.guard.js';
import { AdminApprovalsService } from './admin-approvals.service.js';
import { ApprovalListQueryDto, UuidParamDto } from './admin.dto.js';
import { AdminRoutes } from './admin-routes.decorator.js';
import { found } from './found.js';

@AdminRoutes('admin', 'approvals')
export class AdminApprovalsController {
  constructor(private readonly approvals: AdminApprovalsService) {}

  @Get('approvals')
  @AdminAction('admin.approval_list')
  @ApiOperation({ summary: 'Pending approvals, oldest first: Tasks waiting in place (waiting_in_place) and actions waiting for the conversation' })
  async list(@Query() query: ApprovalListQueryDto) {
    return this.approvals.listPending(query.limit ?? 100);
  }

  @Get('sessions/:id/approval')
  @AdminAction('admin.session_approval_read')
  @ApiOperation({ summary: "A session's pending action (null when nothing waits for approval)" })
  async ofSession(@Param() { id }: UuidParamDto) {
    return found(await this.approvals.ofSession(id), `no session ${id}`);
  }
}
