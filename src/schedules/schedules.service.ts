import { Injectable } from '@nestjs/common';
import { createHash } from 'node:crypto';
import { AgentError } from '../common/agent-error.js';
import { Clock, nowIso, SYSTEM_CLOCK } from '../common/clock.js';
import { AppConfig } from '../config/app-config.js';
import { CronSpec } from '../config/cron-spec.js';
import type { Caller } from '../identity/caller.js';
import { TaskQueueService } from '../queue/task-queue.service.js';
import { withOutcomes } from './run-outcomes.js';
import { ScheduleFires } from './schedule-fires.js';
import { SchedulesRepository, type Schedule, type ScheduleChange, type ScheduleRun } from './schedules.repository.js';
import { UnattendedRules, type UnattendedInput } from './unattended-rules.js';

/** What a user gives to make a schedule (the edge has checked the shapes and lengths). */
export interface ScheduleInput extends UnattendedInput {
  cron: string;
  timezone?: string;
  catchUp?: 'none' | 'last';
}

export type SchedulePatch = Partial<Omit<ScheduleInput, 'notifyUrl'>>;

/**
 * Schedule rules: made by and run as their owner; a user sees and changes only their own (another's
 * answers as a missing one), an admin all. A schedule declared in the configuration is changed there.
 */
@Injectable()
export class SchedulesService {
  private readonly rules: UnattendedRules;

  constructor(
    private readonly schedules: SchedulesRepository,
    private readonly fires: ScheduleFires,
    private readonly config: AppConfig,
    private readonly queue: TaskQueueService,
    private readonly clock: Clock = SYSTEM_CLOCK,
  ) {
    this.rules = new UnattendedRules(config);
  }

  /** The new schedule, with its notify secret (shown this once) when it names a notify URL. */
  async create(caller: Caller, input: ScheduleInput): Promise<{ schedule: Schedule; notifySecret: string | null }> {
    const spec = CronSpec.of(input.cron, input.timezone ?? 'UTC');
    this.rules.room(await this.schedules.countOwned(caller.user), 'schedules');
    const source = this.rules.newSource(caller, input, nowIso(this.clock));
    const schedule: Schedule = {
      ...source,
      cron: input.cron,
      timezone: input.timezone ?? 'UTC',
      catchUp: input.catchUp ?? 'none',
      declared: false,
      nextFireAt: source.enabled ? this.nextAfter(spec) : null,
    };
    await this.schedules.insert(schedule);
    return { schedule, notifySecret: schedule.notifySecret };
  }

  async list(caller: Caller): Promise<Schedule[]> {
    return this.schedules.list(caller.admin ? null : caller.user, caller.admin ? 1000 : this.config.scheduler.maxPerUser);
  }

  async find(caller: Caller, id: string): Promise<Schedule | null> {
    return this.rules.visible(caller, await this.schedules.find(id));
  }

  /** Pause and resume are `enabled`; a resumed schedule fires from now on (what it missed while paused is not replayed). */
  async update(caller: Caller, id: string, patch: SchedulePatch): Promise<Schedule | null> {
    const schedule = await this.find(caller, id);
    if (!schedule) return null;
    if (schedule.declared) throw new AgentError('invalid_input', 'this schedule is declared in the configuration (schedules:); change it there');
    const cron = patch.cron ?? schedule.cron;
    const timezone = patch.timezone ?? schedule.timezone;
    const spec = CronSpec.of(cron, timezone);
    const enabled = patch.enabled ?? schedule.enabled;
    const timing = patch.cron !== undefined || patch.timezone !== undefined || patch.enabled !== undefined;
    const change: ScheduleChange = {
      name: patch.name,
      cron: patch.cron,
      timezone: patch.timezone,
      request: patch.request,
      sessionMode: patch.session,
      tier: patch.tier === undefined ? undefined : this.rules.tier(patch.tier),
      approvals: patch.approvals,
      catchUp: patch.catchUp,
      enabled: patch.enabled,
      nextFireAt: timing ? (enabled ? this.nextAfter(spec) : null) : undefined,
    };
    await this.schedules.update(id, change, nowIso(this.clock));
    return this.schedules.find(id);
  }

  async remove(caller: Caller, id: string): Promise<boolean> {
    const schedule = await this.find(caller, id);
    if (!schedule) return false;
    if (schedule.declared) throw new AgentError('invalid_input', 'this schedule is declared in the configuration (schedules:); remove it there');
    await this.schedules.remove(id);
    return true;
  }

  /** Run now: one fire at this moment, skipped like any other while the last Task is queued or running. */
  async runNow(caller: Caller, id: string): Promise<ScheduleRun | null> {
    const schedule = await this.find(caller, id);
    if (!schedule) return null;
    const run = await this.fires.fire(schedule, new Date(this.clock.now()), 'manual');
    if (!run) throw new AgentError('invalid_input', 'this schedule was run at this very moment already');
    const [shown] = await withOutcomes(this.queue, [run]);
    return shown;
  }

  async runs(caller: Caller, id: string, limit: number, beforeFireAt: string | null): Promise<ScheduleRun[] | null> {
    const schedule = await this.find(caller, id);
    return schedule && withOutcomes(this.queue, await this.schedules.runs(id, limit, beforeFireAt));
  }

  /**
   * The declared schedules as the configuration says (at start, on every replica): each is kept under
   * an id made from its name, so a restart keeps its runs and its continuing session; one no longer
   * declared is removed.
   */
  async syncDeclared(): Promise<void> {
    const declared = this.config.schedules;
    const stored = await this.schedules.declared();
    const now = nowIso(this.clock);
    for (const entry of declared) {
      const id = declaredId(entry.name);
      const existing = stored.find((schedule) => schedule.id === id);
      const spec = CronSpec.of(entry.cron, entry.timezone);
      const same = existing && existing.cron === entry.cron && existing.timezone === entry.timezone && existing.enabled === entry.enabled;
      const fields = {
        name: entry.name,
        cron: entry.cron,
        timezone: entry.timezone,
        request: entry.request,
        sessionMode: entry.session,
        tier: entry.tier,
        approvals: entry.approvals,
        catchUp: entry.catchUp,
        enabled: entry.enabled,
      };
      if (existing) {
        await this.schedules.update(id, { ...fields, nextFireAt: same ? undefined : entry.enabled ? this.nextAfter(spec) : null }, now);
        await this.schedules.updateDeclared(id, { user: entry.owner, groups: entry.groups, email: null }, entry.notify ?? null);
      } else {
        await this.schedules.insertIfAbsent({
          ...fields,
          id,
          owner: { user: entry.owner, groups: entry.groups, email: null },
          sessionId: null,
          notifyUrl: entry.notify?.url ?? null,
          notifySecret: entry.notify?.secret ?? null,
          createdAt: now,
          updatedAt: now,
          declared: true,
          nextFireAt: entry.enabled ? this.nextAfter(spec) : null,
        });
      }
    }
    for (const gone of stored.filter((schedule) => !declared.some((entry) => declaredId(entry.name) === schedule.id))) await this.schedules.remove(gone.id);
  }

  private nextAfter(spec: CronSpec): string | null {
    return spec.next(new Date(this.clock.now()))?.toISOString() ?? null;
  }
}

/** A declared schedule's id: a UUID made from its name, the same on every replica and every start. */
function declaredId(name: string): string {
  const hex = createHash('sha256').update(`oam-declared-schedule:${name}`).digest('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-5${hex.slice(13, 16)}-8${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}
