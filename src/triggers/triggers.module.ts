import { Module, type OnModuleInit } from '@nestjs/common';
import { AuditModule } from '../audit/audit.module.js';
import { TaskQueueModule } from '../queue/task-queue.module.js';
import { SchedulesModule } from '../schedules/schedules.module.js';
import { UnattendedNotify } from '../schedules/unattended-notify.js';
import { TriggerRefusals } from './trigger-refusals.js';
import { TriggersController } from './triggers.controller.js';
import { TriggersRepository } from './triggers.repository.js';
import { TriggersService } from './triggers.service.js';

/** Triggers (issue 38): signed events from outside start Tasks for their owner. */
@Module({
  imports: [SchedulesModule, AuditModule, TaskQueueModule],
  controllers: [TriggersController],
  providers: [TriggersRepository, TriggersService, TriggerRefusals],
  exports: [TriggersService],
})
export class TriggersModule implements OnModuleInit {
  constructor(
    private readonly notify: UnattendedNotify,
    private readonly triggers: TriggersRepository,
  ) {}

  onModuleInit(): void {
    this.notify.register({ kind: 'trigger', ofTask: (taskId) => this.triggers.ofTask(taskId), find: (id) => this.triggers.find(id) });
  }
}
