import type { ApprovalEntity } from './approval.entity.js';
import { formOf, optionsOf, shownDiff, shownEscaped } from './approval-texts.js';
import { shownFormSchema } from './person-form.js';

function describe(approval: ApprovalEntity) {
  if (approval.kind === 'question') return { question: shownEscaped(approval.subject, ['\n']), options: optionsOf(approval).map((option) => shownEscaped(option)) };
  if (approval.tool === 'run_command') return { command: shownEscaped(approval.subject) };
  if (approval.tool === 'mcp_tool') return { mcp_tool: shownEscaped(approval.subject) };
  if (approval.kind === 'form') {
    const { server, tool, schema } = formOf(approval);
    // The schema as tasks/get shows it, so the console can draw the form its owner fills.
    return { mcp_form: shownEscaped(approval.subject, ['\n']), server, mcp_tool: shownEscaped(tool), fields: Object.keys(schema.properties), form_schema: shownFormSchema(schema) };
  }
  return { path: shownEscaped(approval.subject), diff: approval.diff === null ? null : shownDiff(approval.diff), diff_sha256: approval.diffSha256 };
}

/**
 * The admin API's shape of an approval (snake_case; the model's conversation stays inside). The
 * command, path and diff are for a person to read (the console shows them): control and bidi
 * characters come escaped, as in every approval text; `diff_sha256` is of the diff as stored.
 */
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
    answer_task_id: approval.answerTaskId,
    reason: approval.reason,
    created_at: approval.createdAt,
    answered_at: approval.answeredAt,
  };
}
