import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Work that starts by itself (issue 38): schedules and triggers, each fire or delivery a run row. A fire
 * happens once across replicas because `(schedule_id, fire_at)` is unique: the replica whose insert
 * lands starts the Task, the others find the row taken. A delivery id seen again finds its row the same
 * way (`(trigger_id, delivery_id)`). `tasks.unattended` is what an unattended Task does when
 * an action needs a person: `deny` (the agent is told no) or `wait` (the Task pauses); null for every
 * Task a person started.
 */
export class SchedulesTriggers1765800000038 implements MigrationInterface {
  name = 'SchedulesTriggers1765800000038';

  async up(queryRunner: QueryRunner): Promise<void> {
    const owned = `owner VARCHAR(320) NOT NULL,
      owner_groups TEXT NOT NULL,
      owner_email VARCHAR(320),
      name VARCHAR(200) NOT NULL,
      request TEXT NOT NULL,
      session_mode VARCHAR(8) NOT NULL,
      session_id VARCHAR(36),
      tier VARCHAR(64) NOT NULL,
      approvals VARCHAR(8) NOT NULL,
      notify_url TEXT,
      notify_secret TEXT,
      enabled BOOLEAN NOT NULL,
      created_at VARCHAR(30) NOT NULL,
      updated_at VARCHAR(30) NOT NULL`;
    await queryRunner.query(`CREATE TABLE schedules (
      id VARCHAR(36) PRIMARY KEY,
      ${owned},
      cron VARCHAR(200) NOT NULL,
      timezone VARCHAR(64) NOT NULL,
      catch_up VARCHAR(8) NOT NULL,
      declared BOOLEAN NOT NULL,
      next_fire_at VARCHAR(30))`);
    await queryRunner.query('CREATE INDEX idx_schedules_owner ON schedules (owner, created_at)');
    await queryRunner.query('CREATE INDEX idx_schedules_due ON schedules (enabled, next_fire_at)');
    await queryRunner.query(`CREATE TABLE schedule_runs (
      id VARCHAR(36) PRIMARY KEY,
      schedule_id VARCHAR(36) NOT NULL,
      fire_at VARCHAR(30) NOT NULL,
      kind VARCHAR(8) NOT NULL,
      state VARCHAR(16) NOT NULL,
      task_id VARCHAR(36),
      reason TEXT,
      created_at VARCHAR(30) NOT NULL,
      UNIQUE (schedule_id, fire_at))`);
    await queryRunner.query('CREATE INDEX idx_schedule_runs_task ON schedule_runs (task_id)');
    await queryRunner.query(`CREATE TABLE triggers (
      id VARCHAR(36) PRIMARY KEY,
      ${owned},
      kind VARCHAR(16) NOT NULL,
      secret TEXT NOT NULL)`);
    await queryRunner.query('CREATE INDEX idx_triggers_owner ON triggers (owner, created_at)');
    await queryRunner.query(`CREATE TABLE trigger_runs (
      id VARCHAR(36) PRIMARY KEY,
      trigger_id VARCHAR(36) NOT NULL,
      delivery_id VARCHAR(200) NOT NULL,
      event VARCHAR(100) NOT NULL,
      state VARCHAR(16) NOT NULL,
      task_id VARCHAR(36),
      reason TEXT,
      created_at VARCHAR(30) NOT NULL,
      UNIQUE (trigger_id, delivery_id))`);
    await queryRunner.query('CREATE INDEX idx_trigger_runs_task ON trigger_runs (task_id)');
    await queryRunner.query('CREATE INDEX idx_trigger_runs_time ON trigger_runs (trigger_id, created_at)');
    await queryRunner.query('ALTER TABLE tasks ADD COLUMN unattended VARCHAR(8)');
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('ALTER TABLE tasks DROP COLUMN unattended');
    for (const table of ['trigger_runs', 'triggers', 'schedule_runs', 'schedules']) await queryRunner.query(`DROP TABLE ${table}`);
  }
}
