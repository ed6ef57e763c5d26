import { Injectable } from '@nestjs/common';
import { ELICITATION_TOOL, formOf, optionsOf, QUESTION_TOOL } from '../approvals/approval-texts.js';
import { mapApproval } from '../approvals/approval-view.js';
import { ApprovalsService } from '../approvals/approvals.service.js';
import { checkFormContent } from '../approvals/person-form.js';
import { AgentError } from '../common/agent-error.js';
import type { Caller } from '../identity/caller.js';
import { TaskQueueService } from '../queue/task-queue.service.js';
import { SessionsService } from '../sessions/sessions.service.js';
import type { ApprovalAnswerDto, ApprovalListDto, FormAnswerDto, QuestionAnswerDto, SessionApprovalDto } from './admin-responses.dto.js';

/** The words a conversation answer is made of (approval-texts.ts reads them back). */
const CONVERSATION_WORD = { approve: '承認', deny: '拒否' } as const;

/** The console's views of pending approvals, and its owner's answers. */
@Injectable()
export class AdminApprovalsService {
  constructor(
    private readonly approvals: ApprovalsService,
    private readonly sessions: SessionsService,
    private readonly queue: TaskQueueService,
  ) {}

  /** Admins: everyone's; a user: their own. */
  async listPending(caller: Caller, limit: number): Promise<ApprovalListDto> {
    const pending = await this.approvals.listPending(caller.admin ? limit : 1000);
    return {
      items: pending
        .filter((row) => caller.admin || row.owner === caller.user)
        .slice(0, limit)
        .map(mapApproval),
    };
  }

  /**
   * Only the owner answers (an admin sees others' approvals but does not act for them). A Task that
   * waits in place takes the answer as tasks/update would; an action left for the conversation gets
   * the answer as the next turn of its session, as the owner's MCP client would have sent it.
   */
  async answer(caller: Caller, id: string, decision: 'approve' | 'deny'): Promise<ApprovalAnswerDto | null> {
    const row = await this.approvals.find(id);
    if (!row || row.state !== 'pending' || row.owner !== caller.user) return null;
    // A form is not approved but filled: the message says where, rather than a 404 for a form that is there.
    if (row.tool === ELICITATION_TOOL && decision === 'approve') {
      throw new AgentError(
        'invalid_input',
        `approval ${id} is a form of the MCP server "${formOf(row).server}": it is not approved but filled, with POST /admin/approvals/${id}/form?content={…} (the console's form) or in the Task's MCP client (tasks/update); POST /admin/approvals/${id}/deny declines it`,
      );
    }
    if (row.waiting) {
      const response = row.tool === ELICITATION_TOOL ? { action: 'decline' } : { action: 'accept', content: { approve: decision === 'approve' } };
      await this.approvals.answerInPlace(caller, row.taskId, { [row.id]: response });
      const after = await this.approvals.find(id);
      return { approval_id: id, decision, via: 'in_place', state: after?.state ?? row.state, task_id: row.taskId };
    }
    const request = { request: CONVERSATION_WORD[decision], sessionId: row.sessionId, temperature: null, images: [] };
    const task = await this.queue.enqueue(caller, request, { action: 'console.approval_answer', detail: { approval_id: id, decision } });
    return { approval_id: id, decision, via: 'conversation', state: 'answered_by_task', task_id: task.id };
  }

  /**
   * The owner's answer to another server's form that its Task waits for: `content` (JSON) checked against
   * the stored form, then given as tasks/update's `accept` would be (the same check, once, by its owner).
   * Null when it is not the caller's form waiting in place; a content that does not fit is refused (400).
   */
  async fill(caller: Caller, id: string, content: string | undefined): Promise<FormAnswerDto | null> {
    const row = await this.approvals.find(id);
    if (!row || row.state !== 'pending' || !row.waiting || row.owner !== caller.user || row.tool !== ELICITATION_TOOL) return null;
    if (content === undefined) throw new AgentError('invalid_input', 'content: required (the form’s content as a JSON object)');
    let parsed: unknown;
    try {
      parsed = JSON.parse(content);
    } catch {
      throw new AgentError('invalid_input', 'content: not JSON (the form’s content as a JSON object)');
    }
    const checked = checkFormContent(parsed, formOf(row).schema);
    if ('problem' in checked) throw new AgentError('invalid_input', `content: ${checked.problem}`);
    await this.approvals.answerInPlace(caller, row.taskId, { [row.id]: { action: 'accept', content: checked.content } });
    const after = await this.approvals.find(id);
    return { approval_id: id, via: 'in_place', state: after?.state ?? row.state, task_id: row.taskId };
  }

  /**
   * The owner's choice of an option (1-based) of a pending question, by the same paths as `answer`:
   * in place as tasks/update would answer it, else as the next turn of its session (the option's
   * number, which the conversation reads back). Null when it is not the caller's pending question or
   * has no such option.
   */
  async choose(caller: Caller, id: string, option: number): Promise<QuestionAnswerDto | null> {
    const row = await this.approvals.find(id);
    if (!row || row.state !== 'pending' || row.owner !== caller.user || row.tool !== QUESTION_TOOL) return null;
    const choice = optionsOf(row)[option - 1];
    if (choice === undefined) return null;
    if (row.waiting) {
      await this.approvals.answerInPlace(caller, row.taskId, { [row.id]: { action: 'accept', content: { choice } } });
      const after = await this.approvals.find(id);
      return { approval_id: id, option, via: 'in_place', state: after?.state ?? row.state, task_id: row.taskId };
    }
    const request = { request: String(option), sessionId: row.sessionId, temperature: null, images: [] };
    const task = await this.queue.enqueue(caller, request, { action: 'console.question_answer', detail: { approval_id: id, option } });
    return { approval_id: id, option, via: 'conversation', state: 'answered_by_task', task_id: task.id };
  }

  /** A session's pending action (`pending: null` when nothing waits); null when there is no such session. */
  async ofSession(id: string): Promise<SessionApprovalDto | null> {
    if (!(await this.sessions.find(id))) return null;
    const pending = await this.approvals.pendingOfSession(id);
    return { session_id: id, pending: pending ? mapApproval(pending) : null };
  }
}
