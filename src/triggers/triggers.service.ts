import { Injectable, Logger } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { AuditService } from '../audit/audit.service.js';
import { isAgentError } from '../common/agent-error.js';
import { Clock, nowIso, SYSTEM_CLOCK } from '../common/clock.js';
import { AppConfig } from '../config/app-config.js';
import { SYSTEM_CALLER, type Caller } from '../identity/caller.js';
import { UnattendedIntake } from '../schedules/unattended-intake.js';
import { withOutcomes } from '../schedules/run-outcomes.js';
import { newSecret, UnattendedRules, type UnattendedInput } from '../schedules/unattended-rules.js';
import { ClaimTaken } from '../schedules/unattended.js';
import { rateWait, TriggerRateExceeded } from './trigger-rate.js';
import type { TriggerKind } from './trigger-signature.js';
import { renderRequest } from './trigger-template.js';
import { TaskQueueService } from '../queue/task-queue.service.js';
import { TriggersRepository, type Trigger, type TriggerRun, type TriggerRunRecord } from './triggers.repository.js';

export interface TriggerInput extends UnattendedInput {
  kind: TriggerKind;
}

export type TriggerPatch = Partial<Omit<TriggerInput, 'kind' | 'notifyUrl'>>;

/** A delivery whose signature held, as the edge read it. */
export interface Delivery {
  deliveryId: string;
  event: string;
  payload: unknown;
  body: Buffer;
}

/** What became of a delivery: its run (`taken`, `replay`), or a refusal for the trigger's rate with the seconds to wait. */
export type DeliveryOutcome = { kind: 'taken' | 'replay'; run: TriggerRunRecord } | { kind: 'limited'; retryAfter: number };

/**
 * Trigger rules: made by and run as their owner (a user sees and changes only their own, another's
 * answers as missing; an admin all); the secret is shown once, when it is made. A delivery starts one
 * Task, once per delivery id whichever replica gets it again.
 */
@Injectable()
export class TriggersService {
  private readonly logger = new Logger('Triggers');
  private readonly rules: UnattendedRules;

  constructor(
    private readonly triggers: TriggersRepository,
    private readonly intake: UnattendedIntake,
    private readonly audit: AuditService,
    private readonly queue: TaskQueueService,
    private readonly config: AppConfig,
    private readonly clock: Clock = SYSTEM_CLOCK,
  ) {
    this.rules = new UnattendedRules(config);
  }

  async create(caller: Caller, input: TriggerInput): Promise<Trigger> {
    this.rules.room(await this.triggers.countOwned(caller.user), 'triggers');
    const trigger: Trigger = {
      ...this.rules.newSource(caller, input, nowIso(this.clock)),
      kind: input.kind,
      // A Standard Webhooks key is `whsec_` and Base64 (what its libraries take); GitHub takes any string.
      secret: newSecret(input.kind === 'standard' ? 'whsec_' : ''),
    };
    await this.triggers.insert(trigger);
    return trigger;
  }

  async list(caller: Caller): Promise<Trigger[]> {
    return this.triggers.list(caller.admin ? null : caller.user, caller.admin ? 1000 : this.config.scheduler.maxPerUser);
  }

  async find(caller: Caller, id: string): Promise<Trigger | null> {
    return this.rules.visible(caller, await this.triggers.find(id));
  }

  async update(caller: Caller, id: string, patch: TriggerPatch): Promise<Trigger | null> {
    if (!(await this.find(caller, id))) return null;
    await this.triggers.update(
      id,
      {
        name: patch.name,
        request: patch.request,
        sessionMode: patch.session,
        tier: patch.tier === undefined ? undefined : this.rules.tier(patch.tier),
        approvals: patch.approvals,
        enabled: patch.enabled,
      },
      nowIso(this.clock),
    );
    return this.triggers.find(id);
  }

  async remove(caller: Caller, id: string): Promise<boolean> {
    if (!(await this.find(caller, id))) return false;
    await this.triggers.remove(id);
    return true;
  }

  /** A page of a trigger's runs, each with its Task's status and the start of its result (one call to the queue for the page). */
  async runs(caller: Caller, id: string, limit: number, beforeCreatedAt: string | null): Promise<TriggerRun[] | null> {
    if (!(await this.find(caller, id))) return null;
    return withOutcomes(this.queue, await this.triggers.runs(id, limit, beforeCreatedAt));
  }

  /** An enabled trigger by id, for a delivery (which proves itself by its signature, not by an identity). */
  async forDelivery(id: string): Promise<Trigger | null> {
    const trigger = await this.triggers.find(id);
    return trigger?.enabled ? trigger : null;
  }

  /**
   * Starts the delivery's Task as the trigger's owner, with the event as a file under `inputs/`. A
   * delivery id seen before starts nothing and answers with the first delivery's run (`replay`); past
   * `triggers.rate_per_minute` deliveries of the last minute, across replicas, nothing is stored
   * (`limited`). The run row commits in the Task's unit (ADR 0039): a process that stops before that
   * commit has taken nothing, and the sender's retry is a new delivery, not a replay of a lost one.
   */
  async deliver(trigger: Trigger, delivery: Delivery): Promise<DeliveryOutcome> {
    const caller: Caller = { ...SYSTEM_CALLER, user: trigger.owner.user, groups: trigger.owner.groups, transport: 'trigger' };
    const detail = { trigger: trigger.id, delivery: delivery.deliveryId, event: delivery.event };
    const replay = async (): Promise<DeliveryOutcome> => {
      await this.audit.record({ caller, action: 'trigger.replay', outcome: 'ok', detail });
      return { kind: 'replay', run: (await this.triggers.runOfDelivery(trigger.id, delivery.deliveryId))! };
    };
    if (await this.triggers.runOfDelivery(trigger.id, delivery.deliveryId)) return replay();
    const now = this.clock.now();
    const perMinute = this.config.triggers.ratePerMinute;
    // Refused before the event is staged; the Task's unit counts again, under its lock, for the deliveries that race this one.
    const wait = rateWait(await this.triggers.rateWindow(trigger.id, now), perMinute, now);
    if (wait > 0) return { kind: 'limited', retryAfter: wait };
    const run = { id: randomUUID(), triggerId: trigger.id, deliveryId: delivery.deliveryId, event: delivery.event, createdAt: new Date(now).toISOString() };
    const taskId = randomUUID();
    // The first Task of a `continue` trigger makes its session: kept in the same unit as the delivery's run.
    const kept = trigger.sessionMode === 'continue' && trigger.sessionId === null ? randomUUID() : null;
    try {
      await this.intake.start(
        trigger.owner,
        {
          surface: 'trigger',
          origin: `trigger/${trigger.id}`,
          request: renderRequest(trigger.request, { event: delivery.event, delivery: delivery.deliveryId, payload: delivery.payload }),
          sessionId: trigger.sessionMode === 'continue' ? trigger.sessionId : null,
          newSessionId: kept ?? undefined,
          tier: trigger.tier,
          approvals: trigger.approvals,
          files: [{ name: `${delivery.event}-${delivery.deliveryId}.json`, mediaType: 'application/json', data: delivery.body, at: 'body' }],
          madeAt: trigger.createdAt,
          taskId,
          claim: [...this.triggers.claim({ ...run, state: 'started', taskId, reason: null }, perMinute, now), ...(kept ? [this.triggers.keptSession(trigger.id, kept)] : [])],
        },
        { action: 'trigger.delivery', detail: { ...detail, run: run.id } },
      );
    } catch (error) {
      if (error instanceof ClaimTaken) return replay();
      if (error instanceof TriggerRateExceeded) return { kind: 'limited', retryAfter: error.retryAfter };
      const reason = isAgentError(error) ? error.message : 'internal error';
      if (!isAgentError(error)) this.logger.error(`trigger ${trigger.id}: ${(error as Error).message}`);
      if (!(await this.triggers.record({ ...run, state: 'refused', taskId: null, reason }))) return replay();
      await this.audit.record({ caller, action: 'trigger.delivery', outcome: isAgentError(error) ? 'rejected' : 'error', detail: { ...detail, run: run.id, reason } });
    }
    return { kind: 'taken', run: (await this.triggers.run(run.id))! };
  }
}
