import type { ScheduleRun, Schedule } from '../schedules/schedules.repository.js';
import type { UnattendedSource } from '../schedules/unattended.js';
import type { Trigger, TriggerRun } from '../triggers/triggers.repository.js';
import type { ScheduleDto, ScheduleRunDto, TriggerDto, TriggerRunDto } from './admin-automation.dto.js';

/** Schedules, triggers and their runs as the admin API shows them (never a secret: those are shown once, on creation). */

const unattendedView = (source: UnattendedSource) => ({
  id: source.id,
  name: source.name,
  owner: source.owner.user,
  request: source.request,
  session: source.sessionMode,
  session_id: source.sessionId,
  tier: source.tier,
  approvals: source.approvals,
  notify_url: source.notifyUrl,
  enabled: source.enabled,
  created_at: source.createdAt,
  updated_at: source.updatedAt,
});

export const scheduleView = (schedule: Schedule): ScheduleDto => ({
  ...unattendedView(schedule),
  cron: schedule.cron,
  timezone: schedule.timezone,
  catch_up: schedule.catchUp,
  declared: schedule.declared,
  next_fire_at: schedule.nextFireAt,
});

export const triggerView = (trigger: Trigger): TriggerDto => ({ ...unattendedView(trigger), kind: trigger.kind, path: `/v1/triggers/${trigger.id}` });

const runView = (run: { id: string; taskId: string | null; taskStatus: string | null; taskResult: string | null; reason: string | null }) => ({
  id: run.id,
  task_id: run.taskId,
  task_status: run.taskStatus,
  result_first_line: run.taskResult === null ? null : (run.taskResult.split('\n').find((line) => line.trim() !== '') ?? '').slice(0, 300),
  reason: run.reason,
});

export const scheduleRunView = (run: ScheduleRun): ScheduleRunDto => ({ ...runView(run), fire_at: run.fireAt, kind: run.kind, state: run.state, skipped: run.state === 'skipped' });

export const triggerRunView = (run: TriggerRun): TriggerRunDto => ({
  ...runView(run),
  delivery_id: run.deliveryId,
  event: run.event,
  state: run.state,
  received_at: run.createdAt,
});

/** A page of runs and the `before` of the next one (null when this page is not full). */
export const runPage = <R, V>(runs: R[], limit: number, view: (run: R) => V, at: (run: R) => string) => ({
  runs: runs.map(view),
  next_before: runs.length === limit ? at(runs[runs.length - 1]) : null,
});
