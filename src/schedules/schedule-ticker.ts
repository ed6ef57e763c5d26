import { Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { Clock, SYSTEM_CLOCK } from '../common/clock.js';
import { AppConfig } from '../config/app-config.js';
import { CronSpec } from '../config/cron-spec.js';
import { firePlan } from './fire-plan.js';
import { ScheduleFires } from './schedule-fires.js';
import { SchedulesRepository } from './schedules.repository.js';
import { SchedulesService } from './schedules.service.js';

/** Due schedules one look handles; the rest wait for the next tick. */
const BATCH = 100;

/**
 * The scheduler's edge, on every replica: at start it brings the declared schedules in line with the
 * configuration, then every `scheduler.tick_ms` it fires what is due. No replica leads: each one that
 * sees a fire tries it, and the database lets one claim land (ScheduleFires). A fire is tried before the
 * schedule's next time is moved on, so a replica that stops in between leaves the fire to the others.
 */
@Injectable()
export class ScheduleTicker implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('ScheduleTicker');
  private timer: NodeJS.Timeout | null = null;
  private ticking: Promise<void> | null = null;

  constructor(
    private readonly schedules: SchedulesRepository,
    private readonly service: SchedulesService,
    private readonly fires: ScheduleFires,
    private readonly config: AppConfig,
    private readonly clock: Clock = SYSTEM_CLOCK,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    await this.service.syncDeclared();
    this.timer = setInterval(() => {
      this.ticking ??= this.tick()
        .catch((error: Error) => this.logger.warn(`schedules: ${error.message}`))
        .finally(() => (this.ticking = null));
    }, this.config.scheduler.tickMs).unref();
  }

  async onApplicationShutdown(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.ticking;
  }

  private async tick(): Promise<void> {
    const now = new Date(this.clock.now());
    for (const schedule of await this.schedules.due(now.toISOString(), BATCH)) {
      // One schedule that fails (its database row, its fire) is logged and tried again next tick; the others go on.
      try {
        const plan = firePlan(CronSpec.of(schedule.cron, schedule.timezone), new Date(schedule.nextFireAt!), now, this.config.scheduler.misfireGraceMs, schedule.catchUp);
        for (const fireAt of plan.fires) await this.fires.fire(schedule, fireAt, 'cron');
        await this.schedules.advance(schedule.id, schedule.nextFireAt!, plan.next?.toISOString() ?? null);
      } catch (error) {
        this.logger.warn(`schedule ${schedule.id}: ${(error as Error).message}`);
      }
    }
  }
}
