import { Module, type OnModuleInit } from '@nestjs/common';
import { AuditModule } from '../audit/audit.module.js';
import { ConversationModule } from '../conversation/conversation.module.js';
import { PushModule } from '../push/push.module.js';
import { TaskQueueModule } from '../queue/task-queue.module.js';
import { ScheduleFires } from './schedule-fires.js';
import { ScheduleTicker } from './schedule-ticker.js';
import { SchedulesRepository } from './schedules.repository.js';
import { SchedulesService } from './schedules.service.js';
import { UnattendedIntake } from './unattended-intake.js';
import { UnattendedNotify } from './unattended-notify.js';

/** Schedules (issue 38): cron-driven Tasks run as their owner, and what triggers share with them (the intake, notify). */
@Module({
  imports: [ConversationModule, PushModule, AuditModule, TaskQueueModule],
  providers: [SchedulesRepository, SchedulesService, ScheduleFires, ScheduleTicker, UnattendedIntake, UnattendedNotify],
  exports: [SchedulesService, UnattendedIntake, UnattendedNotify],
})
export class SchedulesModule implements OnModuleInit {
  constructor(
    private readonly notify: UnattendedNotify,
    private readonly schedules: SchedulesRepository,
  ) {}

  onModuleInit(): void {
    this.notify.register({ kind: 'schedule', ofTask: (taskId) => this.schedules.ofTask(taskId), find: (id) => this.schedules.find(id) });
  }
}
