import { Injectable } from '@nestjs/common';
import { nowIso } from '../common/clock.js';
import { PlainSql } from '../database/plain-sql.js';

export interface PushConfigRow {
  taskId: string;
  configId: string;
  owner: string;
  url: string;
  token: string;
  authScheme: string;
  authCredentials: string;
}

const COLUMNS = 'task_id AS "taskId", config_id AS "configId", owner, url, token, auth_scheme AS "authScheme", auth_credentials AS "authCredentials"';

/** `a2a_push_configs`: where a Task's A2A push notifications go, each config its owner's. */
@Injectable()
export class A2aPushConfigRepository {
  constructor(private readonly sql: PlainSql) {}

  async upsert(row: PushConfigRow): Promise<void> {
    await this.sql.run(
      'INSERT INTO a2a_push_configs (task_id, config_id, owner, url, token, auth_scheme, auth_credentials, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?) ' +
        'ON CONFLICT (task_id, config_id) DO UPDATE SET url = excluded.url, token = excluded.token, auth_scheme = excluded.auth_scheme, auth_credentials = excluded.auth_credentials ' +
        'WHERE a2a_push_configs.owner = excluded.owner',
      [row.taskId, row.configId, row.owner, row.url, row.token, row.authScheme, row.authCredentials, nowIso()],
    );
  }

  ofTask(taskId: string, owner: string): Promise<PushConfigRow[]> {
    return this.sql.all<PushConfigRow>(`SELECT ${COLUMNS} FROM a2a_push_configs WHERE task_id = ? AND owner = ? ORDER BY created_at, config_id`, [taskId, owner]);
  }

  async one(taskId: string, configId: string): Promise<PushConfigRow | null> {
    return (await this.sql.all<PushConfigRow>(`SELECT ${COLUMNS} FROM a2a_push_configs WHERE task_id = ? AND config_id = ?`, [taskId, configId]))[0] ?? null;
  }

  async count(taskId: string): Promise<number> {
    const [row] = await this.sql.all<{ n: number }>('SELECT COUNT(*) AS n FROM a2a_push_configs WHERE task_id = ?', [taskId]);
    return Number(row.n);
  }

  async delete(taskId: string, owner: string, configId?: string): Promise<void> {
    if (configId) await this.sql.run('DELETE FROM a2a_push_configs WHERE task_id = ? AND owner = ? AND config_id = ?', [taskId, owner, configId]);
    else await this.sql.run('DELETE FROM a2a_push_configs WHERE task_id = ? AND owner = ?', [taskId, owner]);
  }
}
