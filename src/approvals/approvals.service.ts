import { Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import { createHash, randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { AuditService } from '../audit/audit.service.js';
import { AgentError } from '../common/agent-error.js';
import { Clock, nowIso, SYSTEM_CLOCK } from '../common/clock.js';
import { cutText } from '../common/cut-text.js';
import { AppConfig } from '../config/app-config.js';
import { UnitOfWork, type SharedItem } from '../database/unit-of-work.js';
import type { SqlStep } from '../database/plain-sql.js';
import { SYSTEM_CALLER, type Caller } from '../identity/caller.js';
import { ApprovalEntity, type PersonAskKind } from './approval.entity.js';
import { ApprovalPolicy } from './approval-policy.js';
import {
  APPROVAL_FORM_SCHEMA,
  chosenOption,
  conversationAnswer,
  ELICITATION_TOOL,
  elicitationMessage,
  formMessage,
  formOf,
  optionsOf,
  questionFormSchema,
  questionMessage,
  type ConversationAnswer,
} from './approval-texts.js';
import { ApprovalsRepository, type ApprovalAnswer } from './approvals.repository.js';
import { patternsRunningOtherPrograms } from './command-pattern.js';
import { readChoice, readElicitResult, readFormAnswer } from './in-place-answers.js';
import { auditedFormContent, shownFormSchema, type FormAnswer, type FormSchema, type FormValue } from './person-form.js';

export interface NewApproval {
  taskId: string;
  sessionId: string;
  owner: string;
  /** An action to approve, or a question with options (a server's form is `askForm`'s). */
  kind: Exclude<PersonAskKind, 'form'>;
  tool: string;
  /** The command text, the file's path, or the question. */
  subject: string;
  diff: string | null;
  /** A question's options; absent for an action to approve. */
  options?: string[];
  /** The Task's client declared the Tasks extension, so it can answer while the Task waits. */
  inPlace: boolean;
}

/**
 * A new request and what stores it: its row and its audit event, for one unit of work. A request the
 * Task waits for in place is stored at once (`store`); one left for the conversation is stored by the
 * agent with the run's wait and resume point, in the same unit, so that neither exists without the other.
 */
export interface ApprovalDraft {
  row: ApprovalEntity;
  writes: SqlStep[];
  shared: SharedItem[];
}

/** The Task whose request may answer its session's pending action. */
export interface AnsweringTask {
  id: string;
  sessionId: string;
  owner: string;
  client: string | null;
  request: string;
}

export type InPlaceOutcome = { state: 'granted' | 'denied'; reason: string | null } | { state: 'expired' };

/** Another MCP server's form for the Task's person, during one of its tool calls (elicitation). */
export interface NewForm {
  taskId: string;
  sessionId: string;
  owner: string;
  server: string;
  tool: string;
  message: string;
  schema: FormSchema;
}

/** A server's message as stored and shown: bounded (the form says who asks before it). */
const FORM_MESSAGE_CHARS = 2000;

const ANSWER_STATE: Record<ConversationAnswer, ApprovalAnswer['state']> = { approve: 'granted', deny: 'denied', instruction: 'dropped' };

/**
 * Approval rules: which tool calls wait for a person, how a request is stored and audited, how the
 * Task waits for an in-place answer (polling the database, so the answer may reach any replica), and
 * how the next request of the session answers it in the conversation.
 */
@Injectable()
export class ApprovalsService implements OnModuleInit {
  readonly policy: ApprovalPolicy;
  private readonly logger = new Logger('Approvals');

  constructor(
    private readonly approvals: ApprovalsRepository,
    private readonly audit: AuditService,
    private readonly unitOfWork: UnitOfWork,
    private readonly config: AppConfig,
    private readonly clock: Clock = SYSTEM_CLOCK,
  ) {
    this.policy = new ApprovalPolicy(config.agent.approvals.mode, config.agent.approvals.allow);
  }

  /** The guard statement a correction kept for the wait `id` is stored under (ApprovalsRepository.stillPending). */
  stillPending(id: string, taskId: string): Extract<SqlStep, { op: 'all' }> {
    return this.approvals.stillPending(id, taskId);
  }

  onModuleInit(): void {
    const { mode, allow } = this.config.agent.approvals;
    const risky = mode === 'never' ? [] : patternsRunningOtherPrograms(allow);
    if (risky.length > 0) {
      this.logger.warn(
        `agent.approvals.allow: ${risky.map((pattern) => `"${pattern}"`).join(', ')} name programs whose options or config files can run other programs (git -c/--extcmd/hooks, npm scripts, find -exec, interpreters): such a command can run anything without approval; see docs/security.md`,
      );
    }
  }

  /** A new request with its audit event, not stored yet (see ApprovalDraft). */
  draft(input: NewApproval): ApprovalDraft {
    return this.drafted(
      newRow(nowIso(this.clock), {
        ...input,
        diffSha256: input.diff === null ? null : sha256(input.diff),
        options: input.options ? JSON.stringify(input.options) : null,
        form: null,
        waiting: this.answersInPlace(input.inPlace),
      }),
    );
  }

  /** Stores a request with its audit event, in one unit of work. */
  async store(draft: ApprovalDraft): Promise<void> {
    await this.unitOfWork.commit({ writes: draft.writes, shared: draft.shared });
  }

  /** Whether a Task of this client waits in place for its person's answers (`wait_ms` 0: it never does). */
  answersInPlace(clientAnswersInPlace: boolean): boolean {
    return clientAnswersInPlace && this.config.agent.approvals.waitMs > 0;
  }

  private drafted(row: ApprovalEntity): ApprovalDraft {
    const event = this.audit.entry({ ...this.event(SYSTEM_CALLER, actionOf(row, 'requested'), row), detail: { ...actionDetail(row), in_place: row.waiting } });
    return { row, writes: [this.approvals.insertion(row)], shared: [event] };
  }

  /**
   * Holds the Task until its owner answers (tasks/update, on any replica), `wait_ms` passes, or the
   * Task is stopped. A request nobody can answer any more is settled before the abort propagates.
   */
  async awaitInPlace(approval: ApprovalEntity, signal: AbortSignal): Promise<InPlaceOutcome> {
    const deadline = this.clock.now() + this.config.agent.approvals.waitMs;
    try {
      for (;;) {
        const row = await this.approvals.findById(approval.id);
        if (row && row.state !== 'pending') return { state: row.state === 'granted' ? 'granted' : 'denied', reason: row.reason };
        const left = deadline - this.clock.now();
        if (left <= 0) {
          // Conditional: an answer that arrived in the meantime wins, and is read on the next turn. A form
          // cannot wait for the conversation (its server waits for the answer now): it ends unanswered.
          const stopped = approval.kind === 'form' ? await this.approvals.settleWaiting(approval.id) : await this.approvals.stopWaiting(approval.id);
          if (!stopped) continue;
          await this.audit.record({
            ...this.event(SYSTEM_CALLER, actionOf(approval, 'expired'), approval),
            detail: { ...actionDetail(approval), wait_ms: this.config.agent.approvals.waitMs },
          });
          return { state: 'expired' };
        }
        await sleep(Math.min(left, this.config.queue.pollIntervalMs), undefined, { signal });
      }
    } catch (error) {
      if (signal.aborted) await this.approvals.settle(approval.id, 'cancelled').catch(() => undefined);
      throw error;
    }
  }

  /**
   * Another server's form, put to the Task's person in place (the run holds its slot): the answer as the
   * server is told it. Declined, cancelled, unanswered within `wait_ms` or the Task stopped: the server
   * is told `decline` or `cancel`, and the call goes on. `waiting` is called once the person can answer.
   */
  async askForm(input: NewForm, signal: AbortSignal, waiting: (row: ApprovalEntity) => Promise<void>): Promise<FormAnswer> {
    const row = newRow(nowIso(this.clock), {
      ...input,
      kind: 'form',
      tool: ELICITATION_TOOL,
      subject: cutText(input.message, FORM_MESSAGE_CHARS),
      diff: null,
      diffSha256: null,
      options: null,
      form: JSON.stringify({ server: input.server, tool: input.tool, schema: input.schema }),
      waiting: true,
    });
    await this.store(this.drafted(row));
    await waiting(row);
    let outcome: InPlaceOutcome;
    try {
      outcome = await this.awaitInPlace(row, signal);
    } catch (error) {
      // The Task is being cancelled: the server hears `cancel` first, then the call's own cancellation.
      if (signal.aborted) return { action: 'cancel' };
      throw error;
    }
    if (outcome.state === 'granted') return { action: 'accept', content: JSON.parse(outcome.reason ?? '{}') as Record<string, FormValue> };
    return { action: outcome.state === 'denied' && outcome.reason === 'decline' ? 'decline' : 'cancel' };
  }

  /** tasks/get: one form elicitation for the request the Task waits for, or null. */
  async inputRequestsOf(taskId: string): Promise<Record<string, unknown> | null> {
    const row = await this.approvals.waitingFor(taskId);
    if (!row) return null;
    const params =
      row.kind === 'question'
        ? { mode: 'form', message: questionMessage(row), requestedSchema: questionFormSchema(row) }
        : row.kind === 'form'
          ? { mode: 'form', message: formMessage(row, this.config.mcp.locale), requestedSchema: shownFormSchema(formOf(row).schema) }
          : { mode: 'form', message: elicitationMessage(row), requestedSchema: APPROVAL_FORM_SCHEMA };
    return { [row.id]: { method: 'elicitation/create', params } };
  }

  /**
   * tasks/update: the owner's answer to the request the Task waits for. Unknown keys, answered keys and
   * malformed answers are ignored, as the Tasks extension requires; a refusal may carry a reason. True
   * when this answer was the one taken (the console refuses a second decision with it).
   */
  async answerInPlace(caller: Caller, taskId: string, responses: Record<string, unknown>): Promise<boolean> {
    const row = await this.approvals.waitingFor(taskId);
    if (!row || !Object.hasOwn(responses, row.id)) return false;
    const response = responses[row.id];
    const decision =
      row.kind === 'question' ? readChoice(response, optionsOf(row)) : row.kind === 'form' ? readFormAnswer(response, formOf(row).schema) : readElicitResult(response);
    if (!decision) return false;
    const answer: ApprovalAnswer = { ...decision, answeredBy: caller.user, answeredClient: caller.client, answeredVia: 'in_place' };
    if (!(await this.approvals.answerWaiting(row.id, taskId, caller.user, answer))) return false;
    await this.recordAnswer(caller, row, answer);
    return true;
  }

  /**
   * A person's decision (approve, deny, a question's option) on a request left for the conversation,
   * carried by the new Task `answerTaskId` that continues the run: the steps to commit with that Task
   * (they refuse with `already_decided`, so nothing is queued, when another decision came first), and
   * the decision's audit event for once they have committed. The Task's request is never read as an
   * answer: the decision is the approval's own state.
   */
  decision(caller: Caller, row: ApprovalEntity, answerTaskId: string, decided: Pick<ApprovalAnswer, 'state' | 'reason'>) {
    const answer: ApprovalAnswer = { ...decided, answeredBy: caller.user, answeredClient: caller.client, answeredVia: 'conversation' };
    return {
      steps: this.approvals.decision(row.id, caller.user, answerTaskId, answer, () => alreadyDecided(row.id)),
      // The audit names what was decided as the conversation path always did: a question's choice, or approve / deny.
      record: () =>
        this.recordAnswer(caller, row, answer, { answer_task_id: answerTaskId, answer: row.kind === 'question' ? 'choice' : decided.state === 'granted' ? 'approve' : 'deny' }),
    };
  }

  /** Whether the Task was queued with a person's decision (`decision`): it continues the paused run, whatever its text. */
  async carriesDecision(sessionId: string, taskId: string): Promise<boolean> {
    return (await this.approvals.decidedBy(sessionId, taskId)) !== null;
  }

  /**
   * The request the session's newest turn decided, if it carries a decision (ConversationIntake refuses a
   * second one): `newestTaskId` is the session's newest Task (TaskQueueService.newestOfSession; the queue owns `tasks`).
   */
  async decidedLast(sessionId: string, newestTaskId: string | null): Promise<ApprovalEntity | null> {
    return newestTaskId === null ? null : this.approvals.decidedBy(sessionId, newestTaskId);
  }

  /**
   * The conversation path: the first request of the session after the pause answers its pending
   * action (approve, deny, or anything else: a new instruction). Null when nothing was pending.
   */
  async takeAnswer(task: AnsweringTask): Promise<{ approval: ApprovalEntity; answer: ConversationAnswer } | null> {
    // A Task queued with a person's decision (`decision`) continues with it, whatever its request says.
    const decided = await this.approvals.decidedBy(task.sessionId, task.id);
    if (decided) return { approval: decided, answer: decided.state === 'granted' ? 'approve' : 'deny' };
    const pending = await this.approvals.pendingOfSession(task.sessionId);
    if (!pending) return null;
    // A question is answered by an option's number or text (kept as the reason); anything else is a new instruction.
    const choice = pending.kind === 'question' ? chosenOption(task.request, pending) : null;
    const kind: ConversationAnswer = pending.kind === 'question' ? (choice === null ? 'instruction' : 'approve') : conversationAnswer(task.request);
    const answer: ApprovalAnswer = { state: ANSWER_STATE[kind], answeredBy: task.owner, answeredClient: task.client, answeredVia: 'conversation', reason: choice };
    const approval = await this.approvals.takeForSession(task.sessionId, task.id, answer);
    if (!approval) return null;
    const said = pending.kind === 'question' ? (choice === null ? 'instruction' : 'choice') : kind;
    await this.recordAnswer({ ...SYSTEM_CALLER, user: task.owner, client: task.client }, approval, answer, { answer_task_id: task.id, answer: said });
    return { approval, answer: kind };
  }

  /**
   * A request left for the conversation that no run can continue (the agent found no stored pause for it:
   * its Task stopped before storing one, or a version before the run's waits left it unreadable): it ends
   * `dropped` and is never taken as answered.
   */
  async dropUnanswerable(row: ApprovalEntity): Promise<void> {
    await this.approvals.settle(row.id, 'dropped');
    this.logger.warn(`approval ${row.id} of task ${row.taskId}: no stored pause continues it; dropped, and the session's next request is a new one`);
  }

  /** The Task whose paused run `answerTaskId` continues (it answered that Task's request), or null. */
  async pausedTaskAnsweredBy(answerTaskId: string): Promise<string | null> {
    return (await this.approvals.answeredBy(answerTaskId))?.taskId ?? null;
  }

  /** Which of `taskIds` wait for a request nobody has answered yet. */
  pendingAmong(taskIds: string[]): Promise<Set<string>> {
    return this.approvals.pendingAmong(taskIds);
  }

  /** The Tasks (of `owner`, or everyone's) that wait for a request nobody has answered yet. */
  pendingTaskIds(owner: string | undefined): Promise<string[]> {
    return this.approvals.pendingTaskIds(owner);
  }

  /** Admin: pending requests, oldest first (those a Task waits for, and those waiting for the conversation). */
  listPending(limit: number): Promise<ApprovalEntity[]> {
    return this.approvals.listPending(limit);
  }

  /** Admin: what a Task asked and nobody has answered yet (in place, or in the conversation). */
  pendingOfTask(taskId: string): Promise<ApprovalEntity[]> {
    return this.approvals.pendingOfTask(taskId);
  }

  /** Admin: everything a Task asked, answered or not, oldest first (its console page). */
  ofTask(taskId: string): Promise<ApprovalEntity[]> {
    return this.approvals.ofTask(taskId);
  }

  /** One request, answered or not (the console's answer reads it first). */
  find(id: string): Promise<ApprovalEntity | null> {
    return this.approvals.findById(id);
  }

  pendingOfSession(sessionId: string): Promise<ApprovalEntity | null> {
    return this.approvals.pendingOfSession(sessionId);
  }

  private async recordAnswer(caller: Caller, row: ApprovalEntity, answer: ApprovalAnswer, extra: Record<string, unknown> = {}): Promise<void> {
    const action = actionOf(row, answer.state === 'granted' ? 'granted' : 'denied');
    // A form's answer is kept with its secret fields masked; its server got the answer itself.
    const filled = row.kind === 'form' && answer.state === 'granted' && answer.reason;
    const reason = filled ? JSON.stringify(auditedFormContent(JSON.parse(filled) as Record<string, FormValue>, formOf(row).schema)) : answer.reason;
    await this.audit.record({ ...this.event(caller, action, row), detail: { ...actionDetail(row), via: answer.answeredVia, reason, ...extra } });
  }

  private event(caller: Caller, action: string, row: ApprovalEntity) {
    return { caller, action, outcome: 'ok' as const, taskId: row.taskId, sessionId: row.sessionId };
  }
}

/** A second decision on a request: refused (409 on HTTP), and nothing is done. */
export const alreadyDecided = (id: string) => new AgentError('already_decided', `approval ${id} was already decided; nothing was done`);

/** The audit action: `approval.<event>`; for a question `question.asked|answered|declined|expired`, for a server's form `elicitation.*` alike. */
function actionOf(row: Pick<ApprovalEntity, 'kind'>, event: 'requested' | 'granted' | 'denied' | 'expired'): string {
  if (row.kind === 'approval') return `approval.${event}`;
  return `${row.kind === 'question' ? 'question' : 'elicitation'}.${{ requested: 'asked', granted: 'answered', denied: 'declined', expired: 'expired' }[event]}`;
}

/** The action as the audit log keeps it: the command text, the path and the diff's hash, or the question and its options. */
function actionDetail(row: ApprovalEntity): Record<string, unknown> {
  if (row.kind === 'question') return { approval_id: row.id, tool: row.tool, question: row.subject, options: optionsOf(row) };
  if (row.kind === 'form') {
    const { server, tool, schema } = formOf(row);
    return { approval_id: row.id, tool: row.tool, server, mcp_tool: tool, message: row.subject, fields: Object.keys(schema.properties) };
  }
  const action = row.tool === 'run_command' ? { command: row.subject } : row.tool === 'mcp_tool' ? { mcp_tool: row.subject } : { path: row.subject, diff_sha256: row.diffSha256 };
  return { approval_id: row.id, tool: row.tool, ...action };
}

/** A new pending request: the fields that differ between kinds, and the rest as every new one has them. */
function newRow(
  createdAt: string,
  fields: Pick<ApprovalEntity, 'taskId' | 'sessionId' | 'owner' | 'kind' | 'tool' | 'subject' | 'diff' | 'diffSha256' | 'options' | 'form' | 'waiting'>,
): ApprovalEntity {
  return Object.assign(new ApprovalEntity(), {
    id: randomUUID(),
    taskId: fields.taskId,
    sessionId: fields.sessionId,
    owner: fields.owner,
    kind: fields.kind,
    tool: fields.tool,
    subject: fields.subject,
    diff: fields.diff,
    diffSha256: fields.diffSha256,
    options: fields.options,
    form: fields.form,
    // The run's wait row holds the resume point (ADR 0020 §2); this column is read for older rows only.
    resume: '',
    state: 'pending',
    waiting: fields.waiting,
    answeredBy: null,
    answeredClient: null,
    answeredVia: null,
    reason: null,
    answerTaskId: null,
    createdAt,
    answeredAt: null,
  } satisfies ApprovalEntity);
}

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
