import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Push, not poll (issue 23): the answer a running Task has written so far (the catch-up for a follower
 * that missed notifications, and agent_status's growing `result`), A2A push-notification configs, the
 * delivery outbox shared by A2A push and webhooks (it outlives a restart), the webhooks each Task was
 * accepted under, and the key push JWTs are signed with (one for all replicas).
 */
export class Push1765497600000 implements MigrationInterface {
  name = 'Push1765497600000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`CREATE TABLE task_answer_drafts (
      task_id VARCHAR(36) PRIMARY KEY REFERENCES tasks (id),
      text TEXT NOT NULL,
      seq INTEGER NOT NULL,
      updated_at VARCHAR(30) NOT NULL)`);
    // No reference to tasks: SendMessage stores a config given with the message before the Task exists.
    await queryRunner.query(`CREATE TABLE a2a_push_configs (
      task_id VARCHAR(36) NOT NULL,
      config_id VARCHAR(200) NOT NULL,
      owner VARCHAR(320) NOT NULL,
      url TEXT NOT NULL,
      token TEXT NOT NULL DEFAULT '',
      auth_scheme VARCHAR(64) NOT NULL DEFAULT '',
      auth_credentials TEXT NOT NULL DEFAULT '',
      created_at VARCHAR(30) NOT NULL,
      PRIMARY KEY (task_id, config_id))`);
    await queryRunner.query(`CREATE TABLE push_deliveries (
      id VARCHAR(36) PRIMARY KEY,
      kind VARCHAR(16) NOT NULL,
      target TEXT NOT NULL,
      task_id VARCHAR(36) NOT NULL REFERENCES tasks (id),
      owner VARCHAR(320) NOT NULL,
      url TEXT NOT NULL,
      payload TEXT NOT NULL,
      state VARCHAR(16) NOT NULL,
      attempts INTEGER NOT NULL DEFAULT 0,
      next_attempt_at VARCHAR(30) NOT NULL,
      deadline_at VARCHAR(30) NOT NULL,
      claimed_until VARCHAR(30),
      last_error TEXT,
      created_at VARCHAR(30) NOT NULL)`);
    await queryRunner.query(`CREATE INDEX idx_push_deliveries_due ON push_deliveries (state, next_attempt_at)`);
    await queryRunner.query(`CREATE TABLE webhook_targets (
      task_id VARCHAR(36) NOT NULL REFERENCES tasks (id),
      webhook TEXT NOT NULL,
      PRIMARY KEY (task_id, webhook))`);
    await queryRunner.query(`CREATE TABLE push_signing_keys (
      name VARCHAR(64) PRIMARY KEY,
      private_jwk TEXT NOT NULL,
      public_jwk TEXT NOT NULL,
      created_at VARCHAR(30) NOT NULL)`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    for (const table of ['push_signing_keys', 'webhook_targets', 'push_deliveries', 'a2a_push_configs', 'task_answer_drafts']) await queryRunner.query(`DROP TABLE ${table}`);
  }
}
