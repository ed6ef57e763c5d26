import { ApiProperty } from '@nestjs/swagger';
import { TASK_STATUSES, type TaskStatus } from '../queue/task-status.js';

/** What the console's conversation view may offer with this configuration. */
export class ConversationOptionsDto {
  @ApiProperty({ type: [String], description: 'The model tiers a request may name (the Chat API’s model ids), the default first' }) models!: string[];
  @ApiProperty({ description: 'Whether a session can be forked (workspace.isolation: session); the console hides Fork otherwise' }) fork!: boolean;
}

/** The Task a request typed in the console became. */
export class ConversationTaskDto {
  @ApiProperty({ format: 'uuid' }) task_id!: string;
  @ApiProperty({ format: 'uuid', description: 'The session it continues, or the new one it started' }) session_id!: string;
  @ApiProperty({ enum: TASK_STATUSES }) status!: TaskStatus;
}
