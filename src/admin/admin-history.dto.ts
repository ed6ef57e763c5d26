import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptional, IsUUID } from 'class-validator';

export class UndoBodyDto {
  @ApiPropertyOptional({ format: 'uuid', description: 'The Task to undo; the last Task of the session that was not undone when absent' })
  @IsOptional()
  @IsUUID()
  task_id?: string;
}

export class ForkBodyDto {
  @ApiPropertyOptional({ format: 'uuid', description: 'The Task of this session to fork from (its conversation and its end checkpoint); required' })
  @IsOptional()
  @IsUUID()
  task_id?: string;
}
