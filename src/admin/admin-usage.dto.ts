import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptional, IsString, Matches, MaxLength } from 'class-validator';

const DAY = /^\d{4}-\d{2}-\d{2}$/;

export class UsageQueryDto {
  @ApiPropertyOptional({ format: 'date', description: 'First UTC day (YYYY-MM-DD); default: 29 days before `to`' })
  @IsOptional()
  @Matches(DAY, { message: 'from must be a day, YYYY-MM-DD' })
  from?: string;

  @ApiPropertyOptional({ format: 'date', description: 'Last UTC day (YYYY-MM-DD), inclusive; default: today' })
  @IsOptional()
  @Matches(DAY, { message: 'to must be a day, YYYY-MM-DD' })
  to?: string;

  @ApiPropertyOptional({ description: 'One user (admins: anyone; a user: only themselves, the default)' })
  @IsOptional()
  @IsString()
  @MaxLength(320)
  user?: string;
}

export class UsageDayDto {
  @ApiProperty({ format: 'date', description: 'UTC day the Tasks ended' }) day!: string;
  @ApiProperty() user!: string;
  @ApiProperty({ type: 'integer', description: 'Tasks that ended that day' }) tasks!: number;
  @ApiProperty({ type: 'integer' }) model_calls!: number;
  @ApiProperty({ type: 'integer' }) tool_calls!: number;
  @ApiProperty({ type: 'integer' }) input_tokens!: number;
  @ApiProperty({ type: 'integer' }) output_tokens!: number;
  @ApiProperty({ type: 'integer' }) total_tokens!: number;
  @ApiProperty({ type: 'integer', description: 'Wall time of those Tasks, from their start to their end' }) wall_ms!: number;
}

export class UsageReportDto {
  @ApiProperty({ format: 'date' }) from!: string;
  @ApiProperty({ format: 'date' }) to!: string;
  @ApiProperty({ nullable: true, type: String, description: 'The user reported, or null for everyone' }) user!: string | null;
  @ApiProperty({ type: [UsageDayDto], description: 'One row per user and day with usage, by day then user' }) days!: UsageDayDto[];
}
