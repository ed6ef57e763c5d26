import type { ApprovalEntity } from './approval.entity.js';
import { optionsOf, QUESTION_TOOL } from './approval-texts.js';

function describe(approval: ApprovalEntity) {
  if (approval.tool === QUESTION_TOOL) return { question: approval.subject, options: optionsOf(approval) };
  return approval.tool === 'run_command' ? { command: approval.subject } : { path: approval.subject, diff: approval.diff, diff_sha256: approval.diffSha256 };
}

/** The admin API's shape of an approval (snake_case; the model's conversation stays inside). */
export function mapApproval(approval: ApprovalEntity) {
  return {
    approval_id: approval.id,
    task_id: approval.taskId,
    session_id: approval.sessionId,
    owner: approval.owner,
    tool: approval.tool,
    ...describe(approval),
    state: approval.state,
    waiting_in_place: approval.waiting,
    answered_by: approval.answeredBy,
    answered_client: approval.answeredClient,
    answered_via: approval.answeredVia,
    reason: approval.reason,
    created_at: approval.createdAt,
    answered_at: approval.answeredAt,
  };
}
