import { ApiProperty, ApiPropertyOptional, getSchemaPath } from '@nestjs/swagger';
import { TASK_STATUSES, type TaskStatus } from '../queue/task-status.js';
import { SURFACES } from './admin.dto.js';

/**
 * The admin API's response bodies as classes: the OpenAPI document's schemas (`@ApiOkResponse` on each
 * route), and the return types of the admin services, so that what a mapper builds and what the document
 * says are checked against each other by the compiler (and against a real response by admin-schemas.e2e).
 * Every field is required unless marked optional; `nullable` fields are present and may be null.
 */

const UUID = { format: 'uuid' } as const;
const INSTANT = { format: 'date-time', description: 'UTC, ISO-8601 with milliseconds' } as const;
const described = (description?: string) => (description === undefined ? {} : { description });
const nullableString = (description?: string) => ({ type: String, nullable: true, ...described(description) });
const nullableInstant = (description?: string) => ({ ...nullableString(description), format: 'date-time' });
const nullableInteger = (description?: string) => ({ type: 'integer' as const, nullable: true, ...described(description) });

/**
 * Every refusal: `{error, message}` (identity and admin rights, the service's own error codes), or Nest's
 * `{statusCode, message, error}` (a parameter that fails validation, where `message` lists each problem; a 404).
 */
export class AdminErrorDto {
  @ApiProperty({ description: '`unauthorized`, `forbidden`, an error code (`invalid_input`, `session_not_found`…), or the HTTP reason (`Bad Request`, `Not Found`)' })
  error!: string;
  @ApiProperty({ oneOf: [{ type: 'string' }, { type: 'array', items: { type: 'string' } }], description: 'What went wrong, for a person to read' })
  message!: string | string[];
  @ApiPropertyOptional({ type: 'integer', description: 'The HTTP status (Nest’s own bodies: validation, not found)' }) statusCode?: number;
}

export class MeDto {
  @ApiProperty() user!: string;
  @ApiProperty({ type: [String] }) groups!: string[];
  @ApiProperty({ description: 'A group in auth.admin_groups, or the admin token (auth.mode none)' }) admin!: boolean;
  @ApiProperty({ enum: ['none', 'proxy_headers', 'proxy_jwt', 'oauth'] }) auth_mode!: string;
}

// ---- audit --------------------------------------------------------------------------------------

export class AuditEventDto {
  @ApiProperty({ type: 'integer', description: 'Gapless, in commit order' }) seq!: number;
  @ApiProperty(INSTANT) at!: string;
  @ApiProperty() actor!: string;
  @ApiProperty({ type: [String] }) groups!: string[];
  @ApiProperty(nullableString('The client’s network address (HTTP)')) source!: string | null;
  @ApiProperty({ description: '`mcp-http`, `stdio`, `chat`, `a2a`, `http` (the admin API) or `system`' }) transport!: string;
  @ApiProperty(nullableString('MCP clientInfo name/version')) client!: string | null;
  @ApiProperty({ description: '`tools/call agent_run`, `task.status`, `auth.fail`, `admin.audit_read`…' }) action!: string;
  @ApiProperty({ enum: ['ok', 'rejected', 'error'] }) outcome!: string;
  @ApiProperty({ ...nullableString(), format: 'uuid' }) task_id!: string | null;
  @ApiProperty({ ...nullableString(), format: 'uuid' }) session_id!: string | null;
  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    description: 'Arguments summary and reason, secrets redacted. In a listing, a long detail is cut to `{"…": "[cut: …]", "preview": "<its JSON head>"}`',
  })
  detail!: unknown;
  @ApiProperty(nullableString('Hash of the previous event (null before the chain)')) prev_hash!: string | null;
  @ApiProperty(nullableString()) hash!: string | null;
}

export class AuditPageDto {
  @ApiProperty({ type: [AuditEventDto], description: 'Newest first' }) items!: AuditEventDto[];
  @ApiProperty(nullableString('Pass as `cursor` for the next page; null on the last one')) next_cursor!: string | null;
}

class ChainPointDto {
  @ApiProperty({ type: 'integer' }) seq!: number;
  @ApiProperty() hash!: string;
}

export class AuditVerificationDto {
  @ApiProperty() ok!: boolean;
  @ApiProperty({ type: 'integer', description: 'Events walked' }) checked!: number;
  @ApiProperty(nullableInteger('The first event that does not verify')) first_bad_seq!: number | null;
  @ApiProperty(nullableString()) reason!: string | null;
  @ApiProperty({ type: ChainPointDto, description: 'The newest event the walk ended at' }) head!: ChainPointDto;
  @ApiProperty({ type: ChainPointDto, description: 'Where the walk started (moves forward as retention purges old events)' }) anchor!: ChainPointDto;
}

// ---- approvals ----------------------------------------------------------------------------------

/** Which fields an approval has depends on its tool: `question`/`options`, `command`, `mcp_tool`, `mcp_form`/`server`/`mcp_tool`/`fields`, or `path`/`diff`/`diff_sha256`. */
export class ApprovalDto {
  @ApiProperty(UUID) approval_id!: string;
  @ApiProperty({ ...UUID, description: 'The Task that asked' }) task_id!: string;
  @ApiProperty(UUID) session_id!: string;
  @ApiProperty({ description: 'The session’s owner: the only person who may answer' }) owner!: string;
  @ApiProperty({
    description:
      "`run_command`, `write_file`, `edit_file`, `mcp_tool`, `ask_user` (a question with options), or `mcp_elicitation` (another MCP server's form, answered in place only: filled (POST …/form) or declined (POST …/deny), never approved)",
  })
  tool!: string;
  @ApiPropertyOptional({ description: 'ask_user: the question (control and bidi characters escaped)' }) question?: string;
  @ApiPropertyOptional({ type: [String], description: 'ask_user: the options, answered by number from 1' }) options?: string[];
  @ApiPropertyOptional({ description: 'run_command: the command' }) command?: string;
  @ApiPropertyOptional({ description: "mcp_tool: the server and tool with the exact arguments; mcp_elicitation: the server's tool being called" }) mcp_tool?: string;
  @ApiPropertyOptional({ description: "mcp_elicitation: the server's message (control and bidi characters escaped)" }) mcp_form?: string;
  @ApiPropertyOptional({ description: 'mcp_elicitation: the configured name of the server that asks' }) server?: string;
  @ApiPropertyOptional({ type: [String], description: "mcp_elicitation: the names of the form's fields" }) fields?: string[];
  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: true,
    description:
      'mcp_elicitation: the form as tasks/get shows it (`type: object`, `properties`: each field a string, choice, number, integer, boolean or choices, with its bounds; `required`); its owner fills it with POST /admin/approvals/:id/form',
  })
  form_schema?: object;
  @ApiPropertyOptional({ description: 'write_file / edit_file: the path' }) path?: string;
  @ApiPropertyOptional(nullableString('write_file / edit_file: the bounded unified diff to approve')) diff?: string | null;
  @ApiPropertyOptional(nullableString('SHA-256 of the diff as stored')) diff_sha256?: string | null;
  @ApiProperty({ enum: ['pending', 'granted', 'denied', 'dropped', 'cancelled'], description: '`pending` until answered; the others are final' }) state!: string;
  @ApiProperty({ description: 'The Task holds its slot and waits for an answer in place (Tasks extension, or the console)' }) waiting_in_place!: boolean;
  @ApiProperty(nullableString('Who answered')) answered_by!: string | null;
  @ApiProperty(nullableString('The MCP client that answered')) answered_client!: string | null;
  @ApiProperty({ enum: ['in_place', 'conversation'], nullable: true, type: String, description: 'How it was answered' }) answered_via!: string | null;
  @ApiProperty({ ...nullableString('The Task whose turn took the answer from the conversation'), format: 'uuid' }) answer_task_id!: string | null;
  @ApiProperty(nullableString('Why it was refused; for an answered question, the option chosen; for a form, `decline`, `cancel` or the content given (JSON)')) reason!:
    string | null;
  @ApiProperty(INSTANT) created_at!: string;
  @ApiProperty(nullableInstant()) answered_at!: string | null;
}

export class ApprovalListDto {
  @ApiProperty({ type: [ApprovalDto], description: 'Pending, oldest first' }) items!: ApprovalDto[];
}

export class ApprovalAnswerDto {
  @ApiProperty(UUID) approval_id!: string;
  @ApiProperty({ enum: ['approve', 'deny'] }) decision!: string;
  @ApiProperty({ enum: ['in_place', 'conversation'], description: 'in_place: the waiting Task continues; conversation: a new Task of the session takes the answer' })
  via!: string;
  @ApiProperty({ description: 'The approval’s state after the answer, or `answered_by_task` (the new Task answers it when it runs)' }) state!: string;
  @ApiProperty({ ...UUID, description: 'The Task that continues (in place) or the new Task (conversation)' }) task_id!: string;
}

export class FormAnswerDto {
  @ApiProperty(UUID) approval_id!: string;
  @ApiProperty({ enum: ['in_place'], description: 'A form is answered in place only: the waiting Task continues' }) via!: string;
  @ApiProperty({ description: 'The form’s state after the answer (`granted`: its server got the content)' }) state!: string;
  @ApiProperty(UUID) task_id!: string;
}

export class QuestionAnswerDto {
  @ApiProperty(UUID) approval_id!: string;
  @ApiProperty({ type: 'integer', minimum: 1, description: 'The option chosen, from 1' }) option!: number;
  @ApiProperty({ enum: ['in_place', 'conversation'] }) via!: string;
  @ApiProperty({ description: 'The question’s state after the answer, or `answered_by_task`' }) state!: string;
  @ApiProperty(UUID) task_id!: string;
}

export class SessionApprovalDto {
  @ApiProperty(UUID) session_id!: string;
  @ApiProperty({ type: ApprovalDto, nullable: true, description: 'The pending action, or null when nothing waits' }) pending!: ApprovalDto | null;
}

// ---- Tasks and sessions -------------------------------------------------------------------------

export class TokenUsageDto {
  @ApiProperty({ type: 'integer' }) input!: number;
  @ApiProperty({ type: 'integer' }) output!: number;
  @ApiProperty({ type: 'integer' }) total!: number;
}

export class AdminTaskDto {
  @ApiProperty(UUID) task_id!: string;
  @ApiProperty(UUID) session_id!: string;
  @ApiProperty() owner!: string;
  @ApiProperty({ description: 'The request (cut at 2000 characters in listings)' }) request!: string;
  @ApiProperty({ enum: TASK_STATUSES }) status!: TaskStatus;
  @ApiProperty({ type: 'integer', description: 'Subtasks done' }) completed_tasks!: number;
  @ApiProperty({ type: 'integer', description: 'Subtasks planned (1 without a plan)' }) total_tasks!: number;
  @ApiProperty({ description: 'What it is doing now (empty when nothing)' }) current_task!: string;
  @ApiProperty({ type: TokenUsageDto }) token_usage!: TokenUsageDto;
  @ApiProperty({ type: 'integer', description: 'The tokens along the heaviest dependency chain of its plan' }) critical_path_tokens!: number;
  @ApiProperty(nullableString('The answer, or why it failed (cut at 2000 characters in listings); null until it ends')) result!: string | null;
  @ApiProperty({ type: 'integer', description: 'Runs so far (a Task recovered after a crash runs again)' }) attempt!: number;
  @ApiProperty({ enum: SURFACES, nullable: true, type: String, description: 'The surface that accepted it (`http`: queued by the console)' }) surface!: string | null;
  @ApiProperty(nullableString('The schedule or trigger that started it (`schedule/<id>`, `trigger/<id>`); null when a person did')) started_by!: string | null;
  @ApiProperty(INSTANT) created_at!: string;
  @ApiProperty(nullableInstant()) started_at!: string | null;
  @ApiProperty(nullableInstant()) finished_at!: string | null;
  @ApiProperty(nullableInteger('Its place while queued (1 runs next), else null')) queue_position!: number | null;
  @ApiProperty(nullableInteger('From start to end, once ended')) duration_ms!: number | null;
  @ApiProperty(nullableString("The Task's OpenTelemetry trace id (its own, or the caller's it continues); null when it has none")) trace_id!: string | null;
}

export class ListedTaskDto extends AdminTaskDto {
  @ApiProperty({ description: 'An approval or question of this Task waits for an answer' }) awaiting_approval!: boolean;
}

export class TaskPageDto {
  @ApiProperty({ type: [ListedTaskDto], description: 'Newest first' }) items!: ListedTaskDto[];
  @ApiProperty(nullableString('Pass as `cursor` for the next page; null on the last one')) next_cursor!: string | null;
}

export class TraceStepDto {
  @ApiProperty({ type: 'integer' }) seq!: number;
  @ApiProperty({ description: 'The subtask it served (empty without a plan)' }) subtask!: string;
  @ApiProperty({ enum: ['plan', 'model_call', 'tool_call', 'command', 'file_op', 'mcp_tool', 'steer', 'limit', 'repair'] }) kind!: string;
  @ApiProperty({ description: 'The tool, the command, or the model call' }) name!: string;
  @ApiProperty({ description: '`ok`, `error`, `denied`, `timeout`, `cancelled`, `dropped` (a correction kept for a wait nobody answered)…' }) outcome!: string;
  @ApiProperty({ type: 'integer' }) input_tokens!: number;
  @ApiProperty({ type: 'integer' }) output_tokens!: number;
  @ApiProperty({ type: 'integer' }) duration_ms!: number;
  @ApiProperty(INSTANT) started_at!: string;
  @ApiProperty({ type: 'object', additionalProperties: true, description: 'Per kind: the plan, the model’s answer, the command’s output, the file changed…' })
  detail!: unknown;
}

/** A file a Task created, changed or (an undo) restored: read from its trace, so it stays listed after the file changes again. */
export class DeliverableDto {
  @ApiProperty({ description: 'The path inside the session workspace' }) path!: string;
  @ApiProperty({ enum: ['created', 'modified', 'restored'], description: 'What the Task did to it first (`restored`: an undo put it back)' }) change!: string;
  @ApiProperty(nullableInteger('Bytes written by its last change (null when an undo restored it)')) bytes!: number | null;
  @ApiProperty({ description: 'The file as an MCP resource (`agent-session://…`)' }) uri!: string;
  @ApiProperty({ description: 'Guessed from the name' }) mime_type!: string;
  @ApiProperty({ description: 'Its download, relative to the service’s base URL: `/admin/sessions/{id}/files/{path}` (as it is now, 404 when gone)' })
  download_path!: string;
}

export class AdminTaskDetailDto extends AdminTaskDto {
  @ApiProperty({ description: 'An approval or question of this Task waits for an answer' }) awaiting_approval!: boolean;
  @ApiProperty({ type: [ApprovalDto], description: 'The approvals and questions nobody has answered yet, oldest first' }) pending_approvals!: ApprovalDto[];
  @ApiProperty({ type: [ApprovalDto], description: 'Every approval and question of the Task, answered or not, oldest first' }) approvals!: ApprovalDto[];
  @ApiProperty({ type: [DeliverableDto], description: 'The files it created or changed, in the order it first wrote them' }) deliverables!: DeliverableDto[];
  @ApiProperty({ type: [TraceStepDto], description: 'The execution trace, oldest step first' }) trace!: TraceStepDto[];
}

export class SessionDetailDto {
  @ApiProperty(UUID) session_id!: string;
  @ApiProperty() owner!: string;
  @ApiProperty(INSTANT) created_at!: string;
  @ApiProperty({ type: [ListedTaskDto], description: 'Oldest first' }) tasks!: ListedTaskDto[];
}

export class SessionFileDto {
  @ApiProperty({ description: 'The path inside the session workspace' }) path!: string;
  @ApiProperty({ description: 'The file as an MCP resource (`agent-session://…`)' }) uri!: string;
  @ApiProperty() mime_type!: string;
  @ApiProperty({ type: 'integer', description: 'Its size now' }) size!: number;
  @ApiProperty({ description: 'Its download, relative to the service’s base URL: `/admin/sessions/{id}/files/{path}`' }) download_path!: string;
}

export class SessionFilePageDto {
  @ApiProperty({ type: [SessionFileDto], description: 'Newest change first; files since deleted are left out' }) items!: SessionFileDto[];
  @ApiProperty(nullableString('Pass as `cursor` for the next page; null on the last one')) next_cursor!: string | null;
}

// ---- workspace history --------------------------------------------------------------------------

class CheckpointDto {
  @ApiProperty({ type: 'integer' }) seq!: number;
  @ApiProperty({ description: 'The git commit of the workspace' }) commit!: string;
}

class HistoryTaskDto {
  @ApiProperty(UUID) task_id!: string;
  @ApiProperty({ type: CheckpointDto, nullable: true, description: 'The workspace as the Task found it' }) before!: CheckpointDto | null;
  @ApiProperty({ type: CheckpointDto, nullable: true, description: 'The workspace as the Task left it (null while it runs)' }) after!: CheckpointDto | null;
  @ApiProperty({ ...nullableString('An undo Task: the Task it took back'), format: 'uuid' }) undo_of!: string | null;
  @ApiProperty({ description: 'The diff as an MCP resource (`agent-session://…/tasks/…/diff`)' }) diff!: string;
}

export class SessionHistoryDto {
  @ApiProperty({ description: 'workspace.isolation is shared: one history for every session' }) shared_root!: boolean;
  @ApiProperty({ type: [HistoryTaskDto], description: 'Oldest first' }) tasks!: HistoryTaskDto[];
}

export class UndoQueuedDto {
  @ApiProperty({ ...UUID, description: 'The undo Task' }) task_id!: string;
  @ApiProperty(UUID) session_id!: string;
  @ApiProperty({ enum: TASK_STATUSES }) status!: TaskStatus;
  @ApiProperty({ ...UUID, description: 'The Task it takes back' }) undo_of!: string;
  @ApiProperty({ type: [String], description: 'The paths that go back to their state before that Task' }) paths!: string[];
}

class ForkedFromDto {
  @ApiProperty(UUID) session_id!: string;
  @ApiProperty(UUID) task_id!: string;
}

export class ForkDto {
  @ApiProperty({ ...UUID, description: 'The new session (the caller’s)' }) session_id!: string;
  @ApiProperty({ type: ForkedFromDto }) forked_from!: ForkedFromDto;
  @ApiProperty({ type: [String], description: 'Paths the fork’s workspace could not have as that Task left them' }) not_restorable!: string[];
}

// ---- operations ---------------------------------------------------------------------------------

export class ReadinessCheckDto {
  @ApiProperty() ok!: boolean;
  @ApiPropertyOptional({ description: 'Why it fails (credentials never shown)' }) error?: string;
  @ApiPropertyOptional({ type: [String], description: 'ollama: what works but is not as it should be (the model’s context, its tools…)' }) warnings?: string[];
}

export class ReadinessDto {
  @ApiProperty({ enum: ['ready', 'not_ready'] }) status!: string;
  @ApiProperty({ type: 'object', additionalProperties: { $ref: getSchemaPath(ReadinessCheckDto) }, description: 'Each check by name (database, ollama, workspace…)' })
  checks!: Record<string, ReadinessCheckDto>;
}

export class McpServerDto {
  @ApiProperty({ description: 'Its key in agent.mcp_servers' }) name!: string;
  @ApiProperty({ enum: ['stdio', 'http'] }) transport!: string;
  @ApiProperty({ enum: ['connecting', 'connected', 'down', 'stopped', 'per_caller'], description: '`per_caller`: its headers name the caller, one connection each' })
  state!: string;
  @ApiProperty({ description: 'Readiness fails while it is not connected' }) required!: boolean;
  @ApiProperty(nullableString()) last_error!: string | null;
  @ApiProperty(nullableInstant()) connected_at!: string | null;
  @ApiProperty(nullableString('The MCP protocol version it speaks')) protocol!: string | null;
  @ApiProperty({ type: [String], description: 'Its tools’ names' }) tools!: string[];
  @ApiProperty({ type: [String], description: 'Only callers in these groups see its tools (empty: everyone)' }) allow_groups!: string[];
}

export class McpServerListDto {
  @ApiProperty({ type: [McpServerDto] }) servers!: McpServerDto[];
}

export class SkillDto {
  @ApiProperty({ description: 'As the agent names it: `<name>`, or `<server>/<name>` for an MCP server’s' }) name!: string;
  @ApiProperty() description!: string;
  @ApiProperty({ enum: ['operator', 'mcp'], description: '`operator`: a folder of skills.dirs; `mcp`: a connected MCP server' }) origin!: string;
  @ApiProperty({ type: [String], description: 'Only callers in these groups may use it (empty: everyone)' }) allow_groups!: string[];
  @ApiProperty({ type: [String], description: 'Its files, SKILL.md first' }) files!: string[];
}

export class SkillListDto {
  @ApiProperty({ type: [SkillDto] }) skills!: SkillDto[];
}
