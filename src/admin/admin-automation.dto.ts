import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsBoolean, IsIn, IsInt, IsISO8601, IsOptional, IsString, Length, Max, MaxLength, Min } from 'class-validator';

/** Issue 38: the bodies and answers of /admin/schedules and /admin/triggers (the OpenAPI document's schemas too). */

const SESSION = {
  enum: ['new', 'continue'],
  default: 'new',
  description: '`new`: each Task in a new session; `continue`: all in this one’s own session (the agent sees its earlier runs)',
};
const APPROVALS = {
  enum: ['deny', 'wait'],
  default: 'deny',
  description: 'An action that needs a person: `deny` (the agent is told no and goes on) or `wait` (the Task pauses; the owner is told)',
};
const NOTIFY = { maxLength: 2000, description: 'A webhook told when each Task ends or waits (under a2a.push.allowed_urls), signed with `notify_secret`' };

export class ScheduleCreateDto {
  @ApiProperty({ minLength: 1, maxLength: 200 }) @IsString() @Length(1, 200) name!: string;
  @ApiProperty({ maxLength: 200, description: 'Five fields (minute to day of week) or six with seconds first', example: '0 9 * * 1-5' })
  @IsString()
  @Length(1, 200)
  cron!: string;
  @ApiPropertyOptional({ maxLength: 64, default: 'UTC', description: 'IANA time zone name' }) @IsOptional() @IsString() @Length(1, 64) timezone?: string;
  @ApiProperty({ minLength: 1, maxLength: 16000, description: 'What the agent is asked at each fire' }) @IsString() @Length(1, 16000) request!: string;
  @ApiPropertyOptional(SESSION) @IsOptional() @IsIn(['new', 'continue']) session?: 'new' | 'continue';
  @ApiPropertyOptional({ maxLength: 32, default: 'default', description: 'The model tier (`default` or an ollama.models tier)' })
  @IsOptional()
  @IsString()
  @Length(1, 32)
  tier?: string;
  @ApiPropertyOptional({ default: true, description: 'false: paused' }) @IsOptional() @IsBoolean() enabled?: boolean;
  @ApiPropertyOptional(APPROVALS) @IsOptional() @IsIn(['deny', 'wait']) approvals?: 'deny' | 'wait';
  @ApiPropertyOptional({ enum: ['none', 'last'], default: 'none', description: 'Fires missed while no replica ran: `none` are not run, `last`: the latest runs once' })
  @IsOptional()
  @IsIn(['none', 'last'])
  catch_up?: 'none' | 'last';
  @ApiPropertyOptional(NOTIFY) @IsOptional() @IsString() @MaxLength(2000) notify_url?: string;
}

/**
 * A schedule's changes: every field of ScheduleCreateDto but notify_url, each optional. Written out, not made with
 * @nestjs/swagger's PartialType/OmitType: those require class-validator and class-transformer at run time past the
 * bundle (a start then loads them through Node's loader, which small-points.e2e refuses).
 */
export class SchedulePatchDto {
  @ApiPropertyOptional({ minLength: 1, maxLength: 200 }) @IsOptional() @IsString() @Length(1, 200) name?: string;
  @ApiPropertyOptional({ maxLength: 200, description: 'Five fields (minute to day of week) or six with seconds first', example: '0 9 * * 1-5' })
  @IsOptional()
  @IsString()
  @Length(1, 200)
  cron?: string;
  @ApiPropertyOptional({ maxLength: 64, description: 'IANA time zone name' }) @IsOptional() @IsString() @Length(1, 64) timezone?: string;
  @ApiPropertyOptional({ minLength: 1, maxLength: 16000, description: 'What the agent is asked at each fire' }) @IsOptional() @IsString() @Length(1, 16000) request?: string;
  @ApiPropertyOptional(SESSION) @IsOptional() @IsIn(['new', 'continue']) session?: 'new' | 'continue';
  @ApiPropertyOptional({ maxLength: 32, description: 'The model tier (`default` or an ollama.models tier)' }) @IsOptional() @IsString() @Length(1, 32) tier?: string;
  @ApiPropertyOptional({ description: 'false: paused' }) @IsOptional() @IsBoolean() enabled?: boolean;
  @ApiPropertyOptional(APPROVALS) @IsOptional() @IsIn(['deny', 'wait']) approvals?: 'deny' | 'wait';
  @ApiPropertyOptional({ enum: ['none', 'last'], description: 'Fires missed while no replica ran: `none` are not run, `last`: the latest runs once' })
  @IsOptional()
  @IsIn(['none', 'last'])
  catch_up?: 'none' | 'last';
}

export class TriggerCreateDto {
  @ApiProperty({ minLength: 1, maxLength: 200 }) @IsString() @Length(1, 200) name!: string;
  @ApiProperty({ enum: ['github', 'standard'], description: '`github`: X-Hub-Signature-256; `standard`: Standard Webhooks (webhook-id, webhook-timestamp, webhook-signature)' })
  @IsIn(['github', 'standard'])
  kind!: 'github' | 'standard';
  @ApiProperty({
    minLength: 1,
    maxLength: 16000,
    description: 'A template over the event: `{{event}}`, `{{delivery}}`, `{{payload.issue.title}}`…; a field the event lacks renders empty',
  })
  @IsString()
  @Length(1, 16000)
  request!: string;
  @ApiPropertyOptional(SESSION) @IsOptional() @IsIn(['new', 'continue']) session?: 'new' | 'continue';
  @ApiPropertyOptional({ maxLength: 32, default: 'default' }) @IsOptional() @IsString() @Length(1, 32) tier?: string;
  @ApiPropertyOptional({ default: true }) @IsOptional() @IsBoolean() enabled?: boolean;
  @ApiPropertyOptional(APPROVALS) @IsOptional() @IsIn(['deny', 'wait']) approvals?: 'deny' | 'wait';
  @ApiPropertyOptional(NOTIFY) @IsOptional() @IsString() @MaxLength(2000) notify_url?: string;
}

/** A trigger's changes: every field of TriggerCreateDto but kind and notify_url, each optional (written out: see SchedulePatchDto). */
export class TriggerPatchDto {
  @ApiPropertyOptional({ minLength: 1, maxLength: 200 }) @IsOptional() @IsString() @Length(1, 200) name?: string;
  @ApiPropertyOptional({ minLength: 1, maxLength: 16000, description: 'A template over the event (see TriggerCreateDto.request)' })
  @IsOptional()
  @IsString()
  @Length(1, 16000)
  request?: string;
  @ApiPropertyOptional(SESSION) @IsOptional() @IsIn(['new', 'continue']) session?: 'new' | 'continue';
  @ApiPropertyOptional({ maxLength: 32 }) @IsOptional() @IsString() @Length(1, 32) tier?: string;
  @ApiPropertyOptional() @IsOptional() @IsBoolean() enabled?: boolean;
  @ApiPropertyOptional(APPROVALS) @IsOptional() @IsIn(['deny', 'wait']) approvals?: 'deny' | 'wait';
}

export class RunPageQueryDto {
  @ApiPropertyOptional({ minimum: 1, maximum: 200, default: 50 }) @IsOptional() @Type(() => Number) @IsInt() @Min(1) @Max(200) limit?: number;
  @ApiPropertyOptional({ description: 'Runs before this time (`next_before` of the previous page)' }) @IsOptional() @IsISO8601({ strict: true }) before?: string;
}

class UnattendedDto {
  @ApiProperty({ format: 'uuid' }) id!: string;
  @ApiProperty() name!: string;
  @ApiProperty({ description: 'Who made it; its Tasks run as this user' }) owner!: string;
  @ApiProperty() request!: string;
  @ApiProperty({ enum: ['new', 'continue'] }) session!: string;
  @ApiProperty({ format: 'uuid', nullable: true, type: String, description: 'The continuing session, once its first Task made it' }) session_id!: string | null;
  @ApiProperty() tier!: string;
  @ApiProperty({ enum: ['deny', 'wait'] }) approvals!: string;
  @ApiProperty({ nullable: true, type: String }) notify_url!: string | null;
  @ApiProperty() enabled!: boolean;
  @ApiProperty({ format: 'date-time' }) created_at!: string;
  @ApiProperty({ format: 'date-time' }) updated_at!: string;
}

export class ScheduleDto extends UnattendedDto {
  @ApiProperty() cron!: string;
  @ApiProperty() timezone!: string;
  @ApiProperty({ enum: ['none', 'last'] }) catch_up!: string;
  @ApiProperty({ description: 'Declared in the configuration (schedules:): changed there, not here' }) declared!: boolean;
  @ApiProperty({ format: 'date-time', nullable: true, type: String, description: 'When it fires next (null when paused)' }) next_fire_at!: string | null;
}

export class ScheduleCreatedDto extends ScheduleDto {
  @ApiProperty({ nullable: true, type: String, description: 'The key notify posts are signed with; shown this once' }) notify_secret!: string | null;
}

export class ScheduleListDto {
  @ApiProperty({ type: [ScheduleDto] }) schedules!: ScheduleDto[];
}

class RunDto {
  @ApiProperty({ format: 'uuid' }) id!: string;
  @ApiProperty({ format: 'uuid', nullable: true, type: String }) task_id!: string | null;
  @ApiProperty({ nullable: true, type: String, description: 'The Task’s status' }) task_status!: string | null;
  @ApiProperty({ nullable: true, type: String, description: 'The first line of the Task’s result' }) result_first_line!: string | null;
  @ApiProperty({ nullable: true, type: String, description: 'Why it was skipped or refused' }) reason!: string | null;
}

export class ScheduleRunDto extends RunDto {
  @ApiProperty({ format: 'date-time' }) fire_at!: string;
  @ApiProperty({ enum: ['cron', 'manual'] }) kind!: string;
  @ApiProperty({ enum: ['started', 'skipped', 'refused'] }) state!: string;
  @ApiProperty({ description: 'The previous Task was still queued or running' }) skipped!: boolean;
}

export class ScheduleRunListDto {
  @ApiProperty({ type: [ScheduleRunDto] }) runs!: ScheduleRunDto[];
  @ApiProperty({ nullable: true, type: String, description: '`before` of the next page; null on the last' }) next_before!: string | null;
}

export class TriggerDto extends UnattendedDto {
  @ApiProperty({ enum: ['github', 'standard'] }) kind!: string;
  @ApiProperty({ description: 'Where deliveries are posted: /v1/triggers/<id>' }) path!: string;
}

export class TriggerCreatedDto extends TriggerDto {
  @ApiProperty({ description: 'What deliveries are signed with (`whsec_…` for Standard Webhooks); shown this once' }) secret!: string;
  @ApiProperty({ nullable: true, type: String, description: 'The key notify posts are signed with; shown this once' }) notify_secret!: string | null;
}

export class TriggerListDto {
  @ApiProperty({ type: [TriggerDto] }) triggers!: TriggerDto[];
}

export class TriggerRunDto extends RunDto {
  @ApiProperty() delivery_id!: string;
  @ApiProperty() event!: string;
  @ApiProperty({ enum: ['started', 'refused'] }) state!: string;
  @ApiProperty({ format: 'date-time' }) received_at!: string;
}

export class TriggerRunListDto {
  @ApiProperty({ type: [TriggerRunDto] }) runs!: TriggerRunDto[];
  @ApiProperty({ nullable: true, type: String }) next_before!: string | null;
}

export class DeletedDto {
  @ApiProperty() deleted!: boolean;
}
