import { ApiProperty } from '@nestjs/swagger';

/** The answer to a delivery. */
export class TriggerDeliveryDto {
  @ApiProperty({ format: 'uuid' }) run_id!: string;
  @ApiProperty({ description: 'X-GitHub-Delivery or webhook-id' }) delivery_id!: string;
  @ApiProperty({ enum: ['started', 'refused'] }) state!: string;
  @ApiProperty({ format: 'uuid', nullable: true, type: String, description: 'The Task the delivery started (null when refused)' }) task_id!: string | null;
  @ApiProperty({ description: 'true: the delivery id came before, nothing new was queued' }) replay!: boolean;
  @ApiProperty({ nullable: true, type: String, description: 'Why the queue refused it (the owner’s queue limit, …)' }) reason!: string | null;
}
