import { Get, HttpCode, Param, Post, Query, Req } from '@nestjs/common';
import { ApiOkResponse, ApiOperation } from '@nestjs/swagger';
import { AdminAction, AuditOmits, OwnView, type AdminRequest } from './admin-auth.guard.js';
import { AdminApprovalsService } from './admin-approvals.service.js';
import { ApprovalAnswerParamDto, ApprovalListQueryDto, FormAnswerQueryDto, QuestionChoiceParamDto, UuidParamDto } from './admin.dto.js';
import { ApprovalAnswerDto, ApprovalListDto, FormAnswerDto, QuestionAnswerDto, SessionApprovalDto } from './admin-responses.dto.js';
import { AdminRoutes, ApiAdminErrors, INVALID } from './admin-routes.decorator.js';
import { found } from './found.js';

@AdminRoutes('admin', 'approvals')
export class AdminApprovalsController {
  constructor(private readonly approvals: AdminApprovalsService) {}

  @Get('approvals')
  @OwnView()
  @AdminAction('admin.approval_list')
  @ApiOperation({ summary: 'Pending approvals, oldest first: Tasks waiting in place (waiting_in_place) and actions waiting for the conversation (a user: their own)' })
  @ApiOkResponse({ type: ApprovalListDto })
  @ApiAdminErrors(INVALID)
  async list(@Query() query: ApprovalListQueryDto, @Req() req: AdminRequest) {
    return this.approvals.listPending(req.caller!, query.limit ?? 100);
  }

  // Before approvals/:id/:decision, which would otherwise take `form` for a decision (and refuse it).
  @Post('approvals/:id/form')
  @HttpCode(200)
  @OwnView()
  @AdminAction('console.form_answer')
  @AuditOmits('content')
  @ApiOperation({
    summary:
      "The owner fills another MCP server's form (mcp_elicitation) from the console: the content is checked as tasks/update's answer is, its server gets it and the waiting Task continues",
  })
  @ApiOkResponse({ type: FormAnswerDto })
  @ApiAdminErrors(
    [400, 'A parameter is invalid, or the content is missing, not JSON or does not fit the form (which field, and what it takes, in `message`); nothing is done'],
    [404, 'No form of the caller’s waiting in place with this id'],
  )
  async fill(@Param() { id }: UuidParamDto, @Query() query: FormAnswerQueryDto, @Req() req: AdminRequest) {
    return found(await this.approvals.fill(req.caller!, id, query.content), `no form ${id} of yours waiting for an answer`);
  }

  @Post('approvals/:id/:decision')
  @HttpCode(200)
  @OwnView()
  @AdminAction('console.approval_answer')
  @ApiOperation({
    summary:
      "The owner's answer from the console: a Task waiting in place continues at once; an action waiting for the conversation is answered by a new turn of its session (承認 / 拒否)",
  })
  @ApiOkResponse({ type: ApprovalAnswerDto })
  @ApiAdminErrors(
    [400, 'A parameter is invalid, or `approve` of a server’s form (mcp_elicitation: it is filled with POST …/form, or declined with …/deny); nothing is done'],
    [404, 'No pending approval of the caller’s with this id'],
  )
  async answer(@Param() { id, decision }: ApprovalAnswerParamDto, @Req() req: AdminRequest) {
    return found(await this.approvals.answer(req.caller!, id, decision), `no pending approval ${id} of yours`);
  }

  @Post('approvals/:id/choices/:option')
  @HttpCode(200)
  @OwnView()
  @AdminAction('console.question_answer')
  @ApiOperation({
    summary:
      "The owner's answer to an agent's question (ask_user) from the console: its option by number; a Task waiting in place continues at once, otherwise the number becomes the next turn of its session",
  })
  @ApiOkResponse({ type: QuestionAnswerDto })
  @ApiAdminErrors(INVALID, [404, 'No pending question of the caller’s with this id and option'])
  async choose(@Param() { id, option }: QuestionChoiceParamDto, @Req() req: AdminRequest) {
    return found(await this.approvals.choose(req.caller!, id, option), `no pending question ${id} of yours with an option ${option}`);
  }

  @Get('sessions/:id/approval')
  @AdminAction('admin.session_approval_read')
  @ApiOperation({ summary: "A session's pending action (null when nothing waits for approval)" })
  @ApiOkResponse({ type: SessionApprovalDto })
  @ApiAdminErrors(INVALID, [404, 'No such session'])
  async ofSession(@Param() { id }: UuidParamDto) {
    return found(await this.approvals.ofSession(id), `no session ${id}`);
  }
}
