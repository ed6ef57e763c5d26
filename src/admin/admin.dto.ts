import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { ArrayMaxSize, IsArray, IsDefined, IsHexadecimal, IsIn, IsInt, IsISO8601, IsOptional, IsString, IsUUID, Length, Max, MaxLength, Min, ValidateIf } from 'class-validator';
import { MAX_SEQ } from '../common/cursor.js';
import { TASK_STATUSES, type TaskStatus } from '../queue/task-status.js';

export class AuditQueryDto {
  @ApiPropertyOptional({ description: 'Actor (user) exactly' }) @IsOptional() @IsString() @MaxLength(320) actor?: string;
  @ApiPropertyOptional({ description: 'Start of the action or of a word in it: `agent_run` finds `tools/call agent_run`, `task` finds `task.status`' })
  @IsOptional()
  @IsString()
  @MaxLength(64)
  action?: string;
  @ApiPropertyOptional({ enum: ['ok', 'rejected', 'error'] }) @IsOptional() @IsIn(['ok', 'rejected', 'error']) outcome?: string;
  @ApiPropertyOptional({ format: 'uuid' }) @IsOptional() @IsUUID() task_id?: string;
  @ApiPropertyOptional({ format: 'uuid' }) @IsOptional() @IsUUID() session_id?: string;
  @ApiPropertyOptional({ description: 'ISO-8601, inclusive' }) @IsOptional() @IsISO8601({ strict: true }) from?: string;
  @ApiPropertyOptional({ description: 'ISO-8601, exclusive' }) @IsOptional() @IsISO8601({ strict: true }) to?: string;
}

export class AuditPageQueryDto extends AuditQueryDto {
  @ApiPropertyOptional({ minimum: 1, maximum: 1000, default: 100 }) @IsOptional() @Type(() => Number) @IsInt() @Min(1) @Max(1000) limit?: number;
  @ApiPropertyOptional({ description: 'Opaque cursor from `next_cursor`' }) @IsOptional() @IsString() @MaxLength(200) cursor?: string;
}

export class AuditExportQueryDto extends AuditQueryDto {
  @ApiProperty({ enum: ['jsonl', 'csv'] }) @IsIn(['jsonl', 'csv']) format!: 'jsonl' | 'csv';
}

/** The console's statuses: the Task's own, and `awaiting_approval` for one with an unanswered approval. */
export const TASK_LIST_STATUSES = [...TASK_STATUSES, 'awaiting_approval'] as const;
/** `http`: a Task the console queued (an approval answered in the conversation). */
export const SURFACES = ['mcp-http', 'stdio', 'chat', 'a2a', 'http', 'schedule', 'trigger'] as const;

export class TaskListQueryDto {
  @ApiPropertyOptional({ enum: TASK_LIST_STATUSES, description: '`awaiting_approval`: Tasks with an approval nobody has answered yet' })
  @IsOptional()
  @IsIn([...TASK_LIST_STATUSES])
  status?: TaskStatus | 'awaiting_approval';
  @ApiPropertyOptional({ description: 'Owner exactly (admins; a user sees only their own Tasks)' }) @IsOptional() @IsString() @MaxLength(320) owner?: string;
  @ApiPropertyOptional({ description: 'Words in the request or the result (case-insensitive)' }) @IsOptional() @IsString() @MaxLength(200) q?: string;
  @ApiPropertyOptional({ description: 'Created at or after (ISO-8601)' }) @IsOptional() @IsISO8601({ strict: true }) from?: string;
  @ApiPropertyOptional({ description: 'Created before (ISO-8601)' }) @IsOptional() @IsISO8601({ strict: true }) to?: string;
  @ApiPropertyOptional({ enum: SURFACES, description: 'The surface that accepted the Task' }) @IsOptional() @IsIn([...SURFACES]) surface?: string;
  @ApiPropertyOptional({ format: 'uuid' }) @IsOptional() @IsUUID() session_id?: string;
  @ApiPropertyOptional({ minimum: 1, maximum: 1000, default: 100 }) @IsOptional() @Type(() => Number) @IsInt() @Min(1) @Max(1000) limit?: number;
  @ApiPropertyOptional({ description: 'Opaque cursor from `next_cursor`' }) @IsOptional() @IsString() @MaxLength(200) cursor?: string;
}

/**
 * `/admin/tasks/:id/steer?text=…`: a correction for the running Task (the admin API reads no request
 * bodies). Required, but checked after the Task is found, so a Task the caller cannot see answers 404 whatever the query.
 */
export class SteerQueryDto {
  @ApiProperty({ minLength: 1, maxLength: 8000, description: "The correction, as the person's words to the model at its next step" })
  @IsOptional()
  @IsString()
  @MaxLength(8000)
  text?: string;
}

/** `/admin/approvals/:id/approve` or `/deny`: the answer is in the path (the admin API reads no request bodies). */
export class ApprovalAnswerParamDto {
  @ApiProperty({ format: 'uuid' }) @IsUUID() id!: string;
  @ApiProperty({ enum: ['approve', 'deny'] }) @IsIn(['approve', 'deny']) decision!: 'approve' | 'deny';
}

/**
 * `/admin/approvals/:id/form?content=…`: the answer to another server's form, as JSON in the query (the
 * admin API reads no request bodies; node's 16 KiB header limit bounds it, so a longer answer is given
 * in the Task's MCP client).
 */
export class FormAnswerQueryDto {
  // Required, but checked after the form is found (as fork's task_id): no such form answers 404 first.
  @ApiPropertyOptional({
    description: 'The form’s content as a JSON object, one member per field filled (tasks/update’s `content`); required',
    example: '{"name":"Alice","check":true}',
  })
  @IsOptional()
  @IsString()
  @MaxLength(16_384)
  content?: string;
}

export class QuestionChoiceParamDto {
  @ApiProperty({ format: 'uuid' }) @IsUUID() id!: string;
  @ApiProperty({ minimum: 1, maximum: 20, description: "The option's number, from 1" }) @Type(() => Number) @IsInt() @Min(1) @Max(20) option!: number;
}

export class ApprovalListQueryDto {
  @ApiPropertyOptional({ minimum: 1, maximum: 1000, default: 100 }) @IsOptional() @Type(() => Number) @IsInt() @Min(1) @Max(1000) limit?: number;
}

export class UuidParamDto {
  @ApiProperty({ format: 'uuid' }) @IsUUID() id!: string;
}

export class SeqParamDto {
  @ApiProperty({ minimum: 1, maximum: MAX_SEQ }) @Type(() => Number) @IsInt() @Min(1) @Max(MAX_SEQ) seq!: number;
}

/** A checkpoint from the service log (`audit checkpoint seq=… hash=…`): both fields, or neither. */
export class AuditVerifyQueryDto {
  @ApiPropertyOptional({ minimum: 1, maximum: MAX_SEQ, description: 'seq of the latest logged checkpoint (with checkpoint_hash)' })
  @ValidateIf((query: AuditVerifyQueryDto) => query.checkpoint_hash !== undefined || query.checkpoint_seq !== undefined)
  @IsDefined({ message: 'checkpoint_seq and checkpoint_hash go together' })
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(MAX_SEQ)
  checkpoint_seq?: number;

  @ApiPropertyOptional({ description: 'hash of the latest logged checkpoint (64 hex digits, with checkpoint_seq)' })
  @ValidateIf((query: AuditVerifyQueryDto) => query.checkpoint_hash !== undefined || query.checkpoint_seq !== undefined)
  @IsDefined({ message: 'checkpoint_seq and checkpoint_hash go together' })
  @IsHexadecimal()
  @Length(64, 64)
  checkpoint_hash?: string;
}

export class SessionFilesQueryDto {
  @ApiPropertyOptional({ description: 'Opaque cursor from `next_cursor`' }) @IsOptional() @IsString() @MaxLength(200) cursor?: string;
}

/** `/admin/sessions/:id/files/<path>`: the path's segments, as Express 5 hands a `*path` wildcard over. */
export class SessionFileParamDto {
  @ApiProperty({ format: 'uuid' }) @IsUUID() id!: string;
  @ApiProperty({ description: 'The file path inside the session workspace, e.g. `src/math.js`', type: String })
  @IsArray()
  @ArrayMaxSize(64)
  @IsString({ each: true })
  @MaxLength(255, { each: true })
  path!: string[];
}
