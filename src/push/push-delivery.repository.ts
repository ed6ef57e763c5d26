import { Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { PlainSql } from '../database/plain-sql.js';

export type DeliveryKind = 'a2a' | 'webhook' | 'notify';

export interface DeliveryRow {
  id: string;
  kind: DeliveryKind;
  /** What to authenticate as: an A2A config (`<task id>/<config id>`), a webhook (its URL), or a schedule or trigger (`schedule/<id>`, `trigger/<id>`). */
  target: string;
  taskId: string;
  owner: string;
  url: string;
  payload: string;
  attempts: number;
  deadlineAt: string;
}

const ROW = 'id, kind, target, task_id AS "taskId", owner, url, payload, attempts, deadline_at AS "deadlineAt"';

/** `push_deliveries` (the outbox every push goes through), `webhook_targets` and `push_signing_keys`. */
@Injectable()
export class PushDeliveryRepository {
  constructor(private readonly sql: PlainSql) {}

  async insert(delivery: Omit<DeliveryRow, 'id' | 'attempts'>, now: string): Promise<string> {
    const id = randomUUID();
    await this.sql.run(
      `INSERT INTO push_deliveries (id, kind, target, task_id, owner, url, payload, state, attempts, next_attempt_at, deadline_at, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, 'pending', 0, ?, ?, ?)`,
      [id, delivery.kind, delivery.target, delivery.taskId, delivery.owner, delivery.url, delivery.payload, now, delivery.deadlineAt, now],
    );
    return id;
  }

  /** Pending deliveries due by `now` that no process holds. */
  async due(now: string, limit: number): Promise<string[]> {
    const rows = await this.sql.all<{ id: string }>(
      `SELECT id FROM push_deliveries WHERE state = 'pending' AND next_attempt_at <= ? AND (claimed_until IS NULL OR claimed_until < ?) ORDER BY next_attempt_at LIMIT ?`,
      [now, now, limit],
    );
    return rows.map((row) => row.id);
  }

  /** The earliest next attempt of a pending delivery, for the timer. */
  async nextAttemptAt(): Promise<string | null> {
    const [row] = await this.sql.all<{ at: string | null }>(`SELECT MIN(next_attempt_at) AS at FROM push_deliveries WHERE state = 'pending'`);
    return row?.at ?? null;
  }

  /** Takes the delivery for one attempt (until `until`); null when another process has it or it is done. */
  async claim(id: string, now: string, until: string): Promise<DeliveryRow | null> {
    const [row] = await this.sql.changed<DeliveryRow>(
      `UPDATE push_deliveries SET claimed_until = ? WHERE id = ? AND state = 'pending' AND (claimed_until IS NULL OR claimed_until < ?) RETURNING ${ROW}`,
      [until, id, now],
    );
    return row ? { ...row, attempts: Number(row.attempts) } : null;
  }

  async settle(id: string, state: 'delivered' | 'failed', attempts: number, error: string | null): Promise<void> {
    await this.sql.run(`UPDATE push_deliveries SET state = ?, attempts = ?, last_error = ?, claimed_until = NULL WHERE id = ?`, [state, attempts, error, id]);
  }

  async retryAt(id: string, attempts: number, at: string, error: string): Promise<void> {
    await this.sql.run(`UPDATE push_deliveries SET attempts = ?, next_attempt_at = ?, last_error = ?, claimed_until = NULL WHERE id = ?`, [attempts, at, error, id]);
  }

  async addWebhookTargets(taskId: string, urls: string[]): Promise<void> {
    for (const url of urls) await this.sql.run('INSERT INTO webhook_targets (task_id, webhook) VALUES (?, ?) ON CONFLICT DO NOTHING', [taskId, url]);
  }

  async webhookTargets(taskId: string): Promise<string[]> {
    return (await this.sql.all<{ webhook: string }>('SELECT webhook FROM webhook_targets WHERE task_id = ?', [taskId])).map((row) => row.webhook);
  }

  /** The named signing key, created by whichever replica asks first. */
  async signingKey(name: string, create: () => Promise<{ privateJwk: string; publicJwk: string }>, now: string): Promise<{ privateJwk: string; publicJwk: string }> {
    const read = async () =>
      (
        await this.sql.all<{ privateJwk: string; publicJwk: string }>('SELECT private_jwk AS "privateJwk", public_jwk AS "publicJwk" FROM push_signing_keys WHERE name = ?', [name])
      )[0];
    const existing = await read();
    if (existing) return existing;
    const fresh = await create();
    await this.sql.run('INSERT INTO push_signing_keys (name, private_jwk, public_jwk, created_at) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING', [
      name,
      fresh.privateJwk,
      fresh.publicJwk,
      now,
    ]);
    return await read();
  }
}
