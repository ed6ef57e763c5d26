import { Module } from '@nestjs/common';
import { AuditModule } from '../audit/audit.module.js';
import { TaskQueueModule } from '../queue/task-queue.module.js';
import { PushDeliveries } from './push-deliveries.js';
import { PushDeliveryRepository } from './push-delivery.repository.js';
import { PushSigning } from './push-signing.js';
import { Webhooks } from './webhooks.js';

/** Outgoing pushes: the outbox with its allowlist and address guard, request signing, and webhooks. */
@Module({
  imports: [AuditModule, TaskQueueModule],
  providers: [PushDeliveryRepository, PushDeliveries, PushSigning, Webhooks],
  exports: [PushDeliveries, PushSigning],
})
export class PushModule {}
