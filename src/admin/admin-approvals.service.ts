import { Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import type { ApprovalEntity } from '../approvals/approval.entity.js';
import { decisionRequest, formOf, optionsOf } from '../approvals/approval-texts.js';
import { mapApproval } from '../approvals/approval-view.js';
import { alreadyDecided, ApprovalsService } from '../approvals/approvals.service.js';
import type { AuditDraft } from '../audit/audit.service.js';
import type { PersonLocale } from '../common/person-locale.js';
import { checkFormContent } from '../approvals/person-form.js';
import { AgentError } from '../common/agent-error.js';
import type { Caller } from '../identity/caller.js';
import { TaskQueueService } from '../queue/task-queue.service.js';
import { SessionsService } from '../sessions/sessions.service.js';
import type { ApprovalAnswerDto, ApprovalListDto, FormAnswerDto, QuestionAnswerDto, SessionApprovalDto } from './admin-responses.dto.js';

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
   * waits in place takes the decision as tasks/update would; an action left for the conversation is
   * decided here, and a new turn of its session continues the run with that decision (its request a
   * note for people, never read as an answer). A second decision is refused (already_decided, 409)
   * and queues nothing.
   */
  async answer(caller: Caller, id: string, decision: 'approve' | 'deny', locale: PersonLocale): Promise<ApprovalAnswerDto | null> {
    const row = await this.ownRequest(caller, id);
    if (!row) return null;
    // A form is not approved but filled: the message says where, rather than a 404 for a form that is there.
    if (row.kind === 'form' && decision === 'approve') {
      throw new AgentError(
        'invalid_input',
        `approval ${id} is a form of the MCP server "${formOf(row).server}": it is not approved but filled, with POST /admin/approvals/${id}/form?content={…} (the console's form) or in the Task's MCP client (tasks/update); POST /admin/approvals/${id}/deny declines it`,
      );
    }
    if (row.waiting && (await this.inPlace(caller, row, row.kind === 'form' ? { action: 'decline' } : { action: 'accept', content: { approve: decision === 'approve' } }))) {
      return { approval_id: id, decision, via: 'in_place', state: decision === 'approve' && row.kind !== 'form' ? 'granted' : 'denied', task_id: row.taskId };
    }
    const state = decision === 'approve' ? 'granted' : 'denied';
    const taskId = await this.continueWith(caller, row, { state, reason: null }, decisionRequest(row, decision), locale, {
      action: 'console.approval_answer',
      detail: { approval_id: id, decision },
    });
    return { approval_id: id, decision, via: 'conversation', state: 'answered_by_task', task_id: taskId };
  }

  /**
   * The caller's own request by id (null: none of theirs, answered as missing); a decided one is
   * refused as such, so that a second click, tab or client learns it was decided and nothing was done.
   */
  private async ownRequest(caller: Caller, id: string): Promise<ApprovalEntity | null> {
    const row = await this.approvals.find(id);
    if (!row || row.owner !== caller.user) return null;
    if (row.state !== 'pending') throw alreadyDecided(id);
    return row;
  }

  /**
   * An answer to a request its Task waits for: true when it was taken. False when the wait ended just
   * before (the request is then left for the conversation, and decided there); a decision that came
   * first is refused.
   */
  private async inPlace(caller: Caller, row: ApprovalEntity, response: Record<string, unknown>): Promise<boolean> {
    if (await this.approvals.answerInPlace(caller, row.taskId, { [row.id]: response })) return true;
    const after = await this.approvals.find(row.id);
    if (after?.state !== 'pending') throw alreadyDecided(row.id);
    return false;
  }

  /**
   * Decides a request left for the conversation and queues the turn that continues its run with the
   * decision, in one transaction (its texts for people in `locale`); the new Task's id.
   */
  private async continueWith(
    caller: Caller,
    row: ApprovalEntity,
    decided: { state: 'granted' | 'denied'; reason: string | null },
    request: string,
    locale: PersonLocale,
    accepted: AuditDraft,
  ) {
    const taskId = randomUUID();
    const decision = this.approvals.decision(caller, row, taskId, decided);
    await this.queue.enqueue(caller, { request, sessionId: row.sessionId, temperature: null, images: [], taskId, locale, decision: decision.steps }, accepted);
    await decision.record();
    return taskId;
  }

  /**
   * The owner's answer to another server's form that its Task waits for: `content` (JSON) checked against
   * the stored form, then given as tasks/update's `accept` would be (the same check, once, by its owner).
   * Null when it is not the caller's form waiting in place; a content that does not fit is refused (400).
   */
  async fill(caller: Caller, id: string, content: string | undefined): Promise<FormAnswerDto | null> {
    const row = await this.ownRequest(caller, id);
    if (!row || !row.waiting || row.kind !== 'form') return null;
    if (content === undefined) throw new AgentError('invalid_input', 'content: required (the form’s content as a JSON object)');
    let parsed: unknown;
    try {
      parsed = JSON.parse(content);
    } catch {
      throw new AgentError('invalid_input', 'content: not JSON (the form’s content as a JSON object)');
    }
    const checked = checkFormContent(parsed, formOf(row).schema);
    if ('problem' in checked) throw new AgentError('invalid_input', `content: ${checked.problem}`);
    if (!(await this.approvals.answerInPlace(caller, row.taskId, { [row.id]: { action: 'accept', content: checked.content } }))) throw alreadyDecided(id);
    return { approval_id: id, via: 'in_place', state: 'granted', task_id: row.taskId };
  }

  /**
   * The owner's choice of an option (1-based) of a pending question, by the same paths as `answer`:
   * in place as tasks/update would answer it, else as the next turn of its session (the option's
   * number, which the conversation reads back). Null when it is not the caller's pending question or
   * has no such option.
   */
  async choose(caller: Caller, id: string, option: number, locale: PersonLocale): Promise<QuestionAnswerDto | null> {
    const row = await this.ownRequest(caller, id);
    if (!row || row.kind !== 'question') return null;
    const choice = optionsOf(row)[option - 1];
    if (choice === undefined) return null;
    if (row.waiting && (await this.inPlace(caller, row, { action: 'accept', content: { choice } }))) {
      return { approval_id: id, option, via: 'in_place', state: 'granted', task_id: row.taskId };
    }
    const taskId = await this.continueWith(caller, row, { state: 'granted', reason: choice }, decisionRequest(row, 'choose', choice), locale, {
      action: 'console.question_answer',
      detail: { approval_id: id, option },
    });
    return { approval_id: id, option, via: 'conversation', state: 'answered_by_task', task_id: taskId };
  }

  /** A session's pending action (`pending: null` when nothing waits); null when there is no such session. */
  async ofSession(id: string): Promise<SessionApprovalDto | null> {
    if (!(await this.sessions.find(id))) return null;
    const pending = await this.approvals.pendingOfSession(id);
    return { session_id: id, pending: pending ? mapApproval(pending) : null };
  }
}
