import type { MigrationInterface, QueryRunner } from 'typeorm';

const GENESIS = '0'.repeat(64);

/**
 * Tamper-evident audit log: every event carries the hash of its predecessor and its own hash;
 * `audit_head` holds the chain head (and serialises writers across processes and replicas: each write
 * starts by updating its single row), and the anchor left by retention purges. Triggers refuse UPDATE
 * and DELETE on events, except a DELETE inside a purge (the `purging` flag of the head).
 */
export class AuditChain1764892800000 implements MigrationInterface {
  name = 'AuditChain1764892800000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const postgres = queryRunner.connection.options.type === 'postgres';
    for (const column of ['groups TEXT', 'source VARCHAR(64)', 'prev_hash VARCHAR(64)', 'hash VARCHAR(64)']) {
      await queryRunner.query(`ALTER TABLE audit_events ADD COLUMN ${column}`);
    }
    await queryRunner.query(`CREATE INDEX idx_audit_at ON audit_events (at, seq)`);
    await queryRunner.query(`CREATE INDEX idx_audit_actor ON audit_events (actor, seq)`);
    await queryRunner.query(`CREATE INDEX idx_audit_action ON audit_events (action, seq)`);
    await queryRunner.query(`CREATE TABLE audit_head (
      id INTEGER PRIMARY KEY CHECK (id = 1),
      seq INTEGER NOT NULL,
      hash VARCHAR(64) NOT NULL,
      anchor_seq INTEGER NOT NULL,
      anchor_hash VARCHAR(64) NOT NULL,
      purging INTEGER NOT NULL DEFAULT 0)`);
    // Events written before the chain existed are the chain's prehistory: the anchor starts after them.
    const [{ last }] = (await queryRunner.query(`SELECT COALESCE(MAX(seq), 0) AS last FROM audit_events`)) as [{ last: number | string }];
    await queryRunner.query(`INSERT INTO audit_head (id, seq, hash, anchor_seq, anchor_hash, purging) VALUES (1, ${Number(last)}, '${GENESIS}', ${Number(last)}, '${GENESIS}', 0)`);
    if (postgres) {
      await queryRunner.query(`CREATE FUNCTION audit_append_only() RETURNS trigger AS $$
        BEGIN
          IF TG_OP = 'DELETE' AND (SELECT purging FROM audit_head WHERE id = 1) = 1 THEN RETURN OLD; END IF;
          RAISE EXCEPTION 'audit_events is append-only';
        END $$ LANGUAGE plpgsql`);
      await queryRunner.query(`CREATE TRIGGER audit_events_append_only BEFORE UPDATE OR DELETE ON audit_events FOR EACH ROW EXECUTE FUNCTION audit_append_only()`);
    } else {
      await queryRunner.query(`CREATE TRIGGER audit_events_no_update BEFORE UPDATE ON audit_events BEGIN SELECT RAISE(ABORT, 'audit_events is append-only'); END`);
      await queryRunner.query(`CREATE TRIGGER audit_events_no_delete BEFORE DELETE ON audit_events
        WHEN (SELECT purging FROM audit_head WHERE id = 1) = 0
        BEGIN SELECT RAISE(ABORT, 'audit_events is append-only'); END`);
    }
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    if (queryRunner.connection.options.type === 'postgres') {
      await queryRunner.query(`DROP TRIGGER audit_events_append_only ON audit_events`);
      await queryRunner.query(`DROP FUNCTION audit_append_only`);
    } else {
      await queryRunner.query(`DROP TRIGGER audit_events_no_update`);
      await queryRunner.query(`DROP TRIGGER audit_events_no_delete`);
    }
    await queryRunner.query(`DROP TABLE audit_head`);
    for (const index of ['idx_audit_at', 'idx_audit_actor', 'idx_audit_action']) await queryRunner.query(`DROP INDEX ${index}`);
    for (const column of ['hash', 'prev_hash', 'source', 'groups']) await queryRunner.query(`ALTER TABLE audit_events DROP COLUMN ${column}`);
  }
}
